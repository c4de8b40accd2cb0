/* An always_inline function inlined twice into `main` (clang inlines it
 * at -O0 too): each copy has its own `k`, told apart by the call it was
 * inlined at. Run without arguments. */
#include <stdio.h>

static inline __attribute__((always_inline)) int pick(const int *p, int k) {
    int v = k * 2;
    if (k > 5)
        puts("big");
    return p ? *p + v : v;
}

int main(int argc, char **argv) {
    int a = 5;
    int x = pick(&a, argc);
    int y = pick(0, argc + 10);
    int *q = 0;
    if (x + y > 0)
        *q = 1;
    return argv[0][0];
}
