#include <stdlib.h>

/* Called only by even activations of walk: that it ran follows from
 * walk's frames' values alone. */
static int note_even(int n) {
    int k = n * 3;
    return k;
}

static int walk(int n) {
    int mode = 0;
    if (n % 2 == 0) {
        mode = 2;
        note_even(n);
    } else {
        mode = 1;
    }
    if (n == 0) {
        int *p = 0;
        return *p + mode;
    }
    return walk(n - 1) + mode;
}

int main(int argc, char **argv) {
    (void)argv;
    return walk(argc + 2);
}
