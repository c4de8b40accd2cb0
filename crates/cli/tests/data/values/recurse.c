#include <stdlib.h>

static int depth(int n) {
    int r = 0;
    if (n == 0) {
        int *p = 0;
        return *p;
    }
    if (n == 2)
        r = 5;
    return depth(n - 1) + r;
}

int main(int argc, char **argv) {
    (void)argv;
    return depth(argc + 2);
}
