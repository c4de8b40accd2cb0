#include <stdlib.h>

static int twice(int x) {
    return x * 2; /* twice body */
}

static int next(int x) {
    return x + 1; /* next body */
}

int main(int argc, char **argv) {
    int k = argc > 1 ? atoi(argv[1]) : 0;
    if (k == 3)
        abort();
    int r;
    if (k == 1)
        r = twice(k); /* call twice */
    else
        r = next(k); /* call next */
    volatile int *p = 0;
    *p = r;
    return 0;
}
