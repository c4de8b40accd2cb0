#include <assert.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void on_segv(int sig) {
    fprintf(stderr, "caught signal %d\n", sig);
    abort();
}

static int check(int n) {
    assert(n < 5);
    return n * 2;
}

static size_t measure(const char *s) {
    return strlen(s);
}

int main(int argc, char **argv) {
    if (argc > 2)
        signal(SIGSEGV, on_segv);
    if (argc > 1)
        return (int)measure(argc > 3 ? argv[1] : NULL);
    return check(argc + 4);
}
