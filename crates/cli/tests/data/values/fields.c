#include <stdlib.h>

struct state {
    char tag;
    long count;
    int mode;
    int *ptr;
};

struct box {
    int a;
    int b;
};

int table[8];

static void fill(struct box *b) {
    b->a = 1;
}

static int run(int kind) {
    struct state s;
    struct box bx;
    s.tag = 'x';
    s.count = 5;
    s.mode = 10;
    s.ptr = 0;
    if (kind == 1) {
        s.mode = 20;
    } else if (kind == 2) {
        s.mode = 30;
    }
    if (kind > 5)
        table[3] = 7;
    table[5] = 9;
    bx.b = 2;
    fill(&bx);
    return *s.ptr + s.mode + s.tag + (int)s.count + bx.a + bx.b;
}

int main(int argc, char **argv) {
    int kind = argc > 1 ? atoi(argv[1]) : 0;
    return run(kind);
}
