#include <stdio.h>
#include <stdlib.h>

static int parse(const char *s) {
    int n = 0;
    while (*s) {
        n = n * 10 + (*s - '0');
        s++;
    }
    return n;
}

static void crash(const char *msg) {
    char *p = NULL;
    fprintf(stderr, "about to crash: %s\n", msg);
    p[0] = 'x';
}

static void report(int n) {
    if (n > 5)
        crash("big");
    else
        printf("small: %d\n", n);
}

int main(int argc, char **argv) {
    fprintf(stderr, "starting with %d args\n", argc);
    if (argc > 2) {
        puts("too many arguments");
        return 2;
    }
    int n = parse(argc > 1 ? argv[1] : "3");
    fprintf(stderr, "parsed %d\n", n);
    report(n);
    puts("done");
    return 0;
}
