/* Loops: for, while, do-while, nested loops, break and continue. The
 * input is a list of numbers; the program fills a table, scans it, and
 * aborts when a row sums past the limit ("loops 5 12": row 3).
 */
#include <stdio.h>
#include <stdlib.h>

#define N 8

static int table[N][N];

static int fill(int n) {
    int filled = 0;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            if ((i + j) % 3 == 0)
                continue;
            table[i][j] = i + j;
            filled++;
        }
    }
    return filled;
}

static int first_zero(int row, int n) {
    int j = 0;
    while (j < n) {
        if (table[row][j] == 0)
            break;
        j++;
    }
    return j;
}

static void check_row(int row, int n, int limit) {
    int sum = 0;
    int j = 0;
    do {
        sum += table[row][j];
        if (sum > limit) {
            printf("row %d exceeds %d at column %d\n", row, limit, j);
            abort();
        }
        j++;
    } while (j < n);
    if (sum == 0)
        printf("row %d is empty\n", row);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 4;
    int limit = argc > 2 ? atoi(argv[2]) : 100;
    if (n < 1 || n > N) {
        printf("size must be 1..%d\n", N);
        return 2;
    }
    printf("filled %d cells\n", fill(n));
    for (int i = 0; i < n; i++) {
        int z = first_zero(i, n);
        if (z < n)
            printf("row %d: first zero at %d\n", i, z);
        check_row(i, n, limit);
    }
    printf("all rows within %d\n", limit);
    return 0;
}
