/* The PCRE2 harness program's main (pcre2-sys ships the library, not
 * pcre2test): compile each pattern of PATTERNS (one a line; a bad pattern
 * is reported and skipped), match it against every line of SUBJECTS, print
 * each match with its groups, then substitute every match with "<$0>". */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <stdio.h>
#include <string.h>

#include "pcre2.h"

enum { MAX_LINES = 512, LINE_LEN = 1024 };

static int read_lines(const char *path, char lines[][LINE_LEN]) {
    FILE *f = fopen(path, "r");
    int n = 0;
    if (f == NULL) {
        printf("cannot open %s\n", path);
        return -1;
    }
    while (n < MAX_LINES && fgets(lines[n], LINE_LEN, f) != NULL) {
        lines[n][strcspn(lines[n], "\n")] = '\0';
        n++;
    }
    fclose(f);
    return n;
}

static void match_all(pcre2_code *re, const char *subject, pcre2_match_data *md) {
    PCRE2_SIZE len = strlen(subject), start = 0;
    while (start <= len) {
        int rc = pcre2_match(re, (PCRE2_SPTR)subject, len, start, 0, md, NULL);
        if (rc < 0) {
            if (rc != PCRE2_ERROR_NOMATCH) {
                printf("  match error %d\n", rc);
            }
            return;
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        for (int g = 0; g < rc; g++) {
            if (ov[2 * g] == PCRE2_UNSET) {
                printf("  group %d unset\n", g);
            } else {
                printf("  group %d: %.*s\n", g, (int)(ov[2 * g + 1] - ov[2 * g]), subject + ov[2 * g]);
            }
        }
        start = ov[1] > ov[0] ? ov[1] : ov[1] + 1;
    }
}

static void substitute(pcre2_code *re, const char *subject) {
    PCRE2_UCHAR out[4 * LINE_LEN];
    PCRE2_SIZE outlen = sizeof out;
    int rc = pcre2_substitute(re, (PCRE2_SPTR)subject, PCRE2_ZERO_TERMINATED, 0, PCRE2_SUBSTITUTE_GLOBAL,
                              NULL, NULL, (PCRE2_SPTR) "<$0>", PCRE2_ZERO_TERMINATED, out, &outlen);
    if (rc > 0) {
        printf("  substituted %d: %s\n", rc, (char *)out);
    }
}

static char patterns[MAX_LINES][LINE_LEN];
static char subjects[MAX_LINES][LINE_LEN];

int main(int argc, char **argv) {
    if (argc != 3) {
        printf("usage: %s PATTERNS SUBJECTS\n", argv[0]);
        return 2;
    }
    int np = read_lines(argv[1], patterns), ns = read_lines(argv[2], subjects);
    if (np < 0 || ns < 0) {
        return 1;
    }
    for (int p = 0; p < np; p++) {
        int err;
        PCRE2_SIZE off;
        pcre2_code *re = pcre2_compile((PCRE2_SPTR)patterns[p], PCRE2_ZERO_TERMINATED, PCRE2_UTF, &err, &off, NULL);
        if (re == NULL) {
            PCRE2_UCHAR msg[256];
            pcre2_get_error_message(err, msg, sizeof msg);
            printf("pattern %d: error at %zu: %s\n", p, (size_t)off, (char *)msg);
            continue;
        }
        printf("pattern %d: %s\n", p, patterns[p]);
        pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
        for (int s = 0; s < ns; s++) {
            match_all(re, subjects[s], md);
            substitute(re, subjects[s]);
        }
        pcre2_match_data_free(md);
        pcre2_code_free(re);
    }
    return 0;
}
