#include <stdlib.h>
typedef struct { int table_type; int cur; } St;
typedef struct { int size; St *state; } Ctx;
typedef int (*fn_t)(void *, int);

static inline __attribute__((always_inline)) void prep(St *const c, int n) {
    if (c->table_type != 0)
        c->cur = n;
}

int reset(void *state, int n) {
    St *const st = (St *)state;
    if (n < 10) {
        prep(st, n);
        return st->cur;
    } else {
        prep(st, n + 1);
        return st->cur;
    }
}

static int block(void *ctx, int n) { return reset(ctx, n); }
static int make(fn_t f, void *p, int n) { return f(p, n); }

int begin(Ctx *c, int required) {
    if (c->size > required) {
        if (required > 4)
            c->state = calloc(2, sizeof(St));
        else
            c->state = calloc(1, sizeof(St));
        c->size = required;
    }
    return 0;
}

int main(int argc, char **argv) {
    (void)argv;
    Ctx *c = calloc(1, sizeof(Ctx));
    begin(c, argc);
    return make(block, c->state, argc);
}
