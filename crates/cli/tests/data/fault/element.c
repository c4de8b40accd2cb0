#include <stdlib.h>

struct table {
    int *array;
    long alimit;
};

static int absent;

static int *getint(struct table *t, long key) {
    if (key - 1 < t->alimit)
        return &t->array[key - 1];
    return &absent;
}

int main(int argc, char **argv) {
    (void)argv;
    struct table t;
    t.alimit = 4;
    t.array = calloc(4, sizeof(int));
    long k = argc > 5 ? 2 : -100000000000L;
    int *slot = argc > 6 ? &t.array[0] : getint(&t, k);
    return *slot;
}
