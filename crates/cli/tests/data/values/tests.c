#include <stdio.h>
#include <stdlib.h>

int flag;

static int compute(int x) { return x * 3 - 6; }
static char *find(int x) { return x > 1 ? "found" : NULL; }
static int step(int n) { return n - 2; }
static void set_flag(int x) { flag = x > 2; }

static int check_flag(int *q, int z) {
    if (flag)
        printf("flag set\n");
    else
        printf("flag clear\n");
    int t = z + 100;
    if (t > 100)
        printf("big\n");
    t = 5;
    if (z == 7) *q = t;
    return t;
}

int main(int argc, char **argv) {
    int x = argc > 1 ? atoi(argv[1]) : 0;
    int rc = compute(x);
    if (rc)
        printf("rc nonzero\n");
    else
        printf("rc zero\n");
    char *p = find(x);
    if (p == NULL)
        printf("not found\n");
    int op = x % 4;
    switch (op) {
    case 0:
        printf("op zero\n");
        break;
    case 1:
        printf("op one\n");
        break;
    default:
        printf("op other\n");
        break;
    }
    int n = x + 2;
    while (n > 0) {
        if (n < 3) {
            printf("early\n");
            break;
        }
        n = step(n);
    }
    set_flag(x);
    return check_flag(NULL, x == 3 ? 7 : 0);
}
