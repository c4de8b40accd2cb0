#include <stdlib.h>

struct block {
    char *res;
    size_t size;
};

int main(int argc, char **argv) {
    (void)argv;
    size_t n = 4;
    char *buf = malloc(n * 64);
    struct block *t = malloc(n * sizeof *t);
    char *p = buf;
    for (size_t i = 0; i < n; i++) {
        size_t cap = argc > 5 ? 64 : (size_t)1 << 40;
        t[i].res = p;
        t[i].size = cap;
        p += cap;
    }
    t[2].res[0] = 'x';
    return 0;
}
