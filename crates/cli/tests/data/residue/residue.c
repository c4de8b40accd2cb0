#include <stdlib.h>

static int twice(int x) {
    return x * 2;
}

static int next(int x) {
    return x + 1;
}

int main(int argc, char **argv) {
    int k = argc > 1 ? atoi(argv[1]) : 0;
    int r;
    if (k == 1)
        r = twice(k);
    else
        r = next(k);
    volatile int *p = 0;
    *p = r;
    return 0;
}
