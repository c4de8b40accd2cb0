/* The SQLite harness program's main (libsqlite3-sys ships the amalgamation,
 * not the shell): run the statements of SCRIPT one by one in an in-memory
 * database, print every row and every error (and go on after an error). */
#include <stdio.h>
#include <stdlib.h>

#include "sqlite3.h"

static int print_row(void *unused, int n, char **values, char **names) {
    (void)unused;
    for (int i = 0; i < n; i++) {
        printf("%s%s=%s", i ? " " : "", names[i], values[i] ? values[i] : "NULL");
    }
    printf("\n");
    return 0;
}

int main(int argc, char **argv) {
    sqlite3 *db;
    if (argc != 2) {
        printf("usage: %s SCRIPT\n", argv[0]);
        return 2;
    }
    FILE *f = fopen(argv[1], "r");
    if (f == NULL) {
        printf("cannot open %s\n", argv[1]);
        return 1;
    }
    static char sql[1 << 16];
    size_t len = fread(sql, 1, sizeof sql - 1, f);
    fclose(f);
    sql[len] = '\0';
    if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
        printf("cannot open the database\n");
        return 1;
    }
    const char *next = sql;
    while (*next != '\0') {
        sqlite3_stmt *stmt;
        const char *tail;
        if (sqlite3_prepare_v2(db, next, -1, &stmt, &tail) != SQLITE_OK) {
            printf("error: %s\n", sqlite3_errmsg(db));
            /* Skip the bad statement: up to and including its ';'. */
            while (*next != '\0' && *next++ != ';') {
            }
            continue;
        }
        next = tail;
        if (stmt == NULL) {
            continue; /* only blanks or a comment */
        }
        int rc;
        while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
            int n = sqlite3_column_count(stmt);
            for (int i = 0; i < n; i++) {
                const unsigned char *v = sqlite3_column_text(stmt, i);
                printf("%s%s", i ? "|" : "", v ? (const char *)v : "NULL");
            }
            printf("\n");
        }
        if (rc != SQLITE_DONE) {
            printf("error: %s\n", sqlite3_errmsg(db));
        }
        sqlite3_finalize(stmt);
    }
    /* The same through sqlite3_exec and a row callback. */
    char *err = NULL;
    if (sqlite3_exec(db, "SELECT name, type FROM sqlite_schema ORDER BY name", print_row, NULL, &err) != SQLITE_OK) {
        printf("error: %s\n", err);
        sqlite3_free(err);
    }
    sqlite3_close(db);
    return 0;
}
