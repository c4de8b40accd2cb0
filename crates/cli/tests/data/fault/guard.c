/* A check that lets the bad value through: `scale` divides by `n`, and
   its guard should reject 0 but only rejects negative values. `scale`
   is recursive, so `n` is a local of a function active several times:
   its definitions are found within the crash frame's activation. */
#include <stdio.h>

static long scale(int depth, int n) {
    if (depth > 0)
        return scale(depth - 1, n);
    if (n < 0)
        return 0;
    return 100 / n;
}

int main(int argc, char **argv) {
    printf("%ld\n", scale(2, argc - 1));
    return 0;
}
