#include <stdio.h>

static int count_args(int argc) {
    int n = 0;
    for (int i = 2; i < argc; i++)
        n++;
    return n;
}

int main(int argc, char **argv) {
    (void)argv;
    int total = 0;
    int parts = count_args(argc);
    int share = total / parts;
    printf("%d\n", share);
    return 0;
}
