/* postmortem batch tests: one program, crashes at several points.
 * kind 1 and 2 crash in crash_here called from handle (one signature),
 * on two paths: 1 runs step_a, 2 runs step_b. kind 3 crashes from other
 * (another signature). */
#include <stdio.h>
#include <stdlib.h>

int counter;

void crash_here(int *p) {
    *p = counter;
}

void step_a(int n) {
    counter += n;
}

void step_b(int n) {
    counter -= n;
}

void handle(int kind, int *p) {
    if (kind & 1) {
        step_a(kind);
        crash_here(p);
    } else {
        step_b(kind);
        crash_here(p);
    }
}

void other(int *p) {
    counter = 7;
    crash_here(p);
}

int main(int argc, char **argv) {
    int kind = argc > 1 ? atoi(argv[1]) : 0;
    int *p = NULL;
    if (kind < 3)
        handle(kind, p);
    else
        other(p);
    printf("%d\n", counter);
    return 0;
}
