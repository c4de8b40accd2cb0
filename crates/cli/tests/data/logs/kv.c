#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct ent { char key[16]; int val; };
static struct ent table[8];
static int used;
static struct ent *find(const char *k) {
    for (int i = 0; i < used; i++)
        if (strcmp(table[i].key, k) == 0) return &table[i];
    return NULL;
}
static void put(const char *k, int v) {
    struct ent *e = find(k);
    if (e) {
        e->val = v;
        fprintf(stderr, "updated %s\n", k);
    } else {
        e = &table[used++];
        snprintf(e->key, sizeof e->key, "%s", k);
        e->val = v;
        fprintf(stderr, "inserted %s\n", k);
    }
}
static int get(const char *k) {
    struct ent *e = find(k);
    printf("%s\n", k);
    return e->val;
}
int main(int argc, char **argv) {
    for (int i = 1; i + 1 < argc; i += 2) {
        if (argv[i][0] == '+') put(argv[i] + 1, atoi(argv[i + 1]));
        else if (argv[i][0] == '?') fprintf(stderr, "got %d\n", get(argv[i] + 1));
        else fprintf(stderr, "bad op %s\n", argv[i]);
    }
    return 0;
}
