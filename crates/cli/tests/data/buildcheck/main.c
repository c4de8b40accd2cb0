#include <stdio.h>
#include <stdlib.h>

int check(const int *v, int n);

int main(int argc, char **argv) {
    int v[4] = {1, 2, 3, 4};
    int n = argc > 1 ? atoi(argv[1]) : 4;
    int errors = check(v, n);
    if (errors > 0)
        printf("%d errors\n", errors);
    return errors;
}
