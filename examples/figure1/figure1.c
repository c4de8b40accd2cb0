/* The running example of Ohmann, Brooks, D'Antoni, Liblit, "Control-Flow
 * Recovery from Partial Failure Reports" (PLDI 2017), Figure 1, as a real
 * C program.
 *
 * main calls foo, foo calls bar, and bar crashes. The log message
 * "Processed ..." can be printed by two different statements, B and C, so
 * a log holding it says only "B or C ran". Statement E, after the call to
 * foo, cannot have run before this crash.
 *
 * Usage: figure1 COUNT [NAME]
 *   COUNT > 100: B prints; 1..100: C prints; otherwise nothing is printed.
 *   Without NAME, bar reads through a NULL pointer and crashes.
 *
 * The letters in the comments are the node names of Figure 1.
 */
#include <stdio.h>
#include <stdlib.h>

static int bar(const char *name, int total) {
    int first = name[0];                      /* N: crashes if name is NULL */
    return first + total;
}

static int foo(int total, const char *name) {
    if (total > 100000) {
        puts("too many items");               /* ruled out: foo called bar */
        return -1;
    }
    int sum = 0;
    for (int i = 0; i < total; i++)
        sum += i;
    return bar(name, sum);                    /* J */
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);         /* log lines survive a crash */
    int count = argc > 1 ? atoi(argv[1]) : 0; /* A */
    const char *name = argc > 2 ? argv[2] : NULL;
    int total;
    if (count > 100) {
        total = count / 2;
        printf("Processed %d items\n", total); /* B */
    } else if (count > 0) {
        total = count;
        printf("Processed %d items\n", total); /* C */
    } else {
        total = 1;                            /* X: prints nothing */
    }
    int result = foo(total, name);            /* D */
    printf("Result: %d\n", result);           /* E */
    return 0;
}
