/* Path sensitivity from the program's own branches: `mode` is set once
 * from the command line and tested three times; nothing writes it in
 * between. The crash is in `work`, called from the last test's block, so
 * the first test went the same way (`setup` ran) and the second did not
 * (`other` did not run). `level`, a local, is tested twice the same way.
 * `step` is tested, written, and tested again: the second test says
 * nothing of the first. Run as `prog 2`. */
#include <stdio.h>
#include <stdlib.h>

static int mode;
static int *table;

static void setup(void) {
    table = calloc(4, sizeof *table);   /* ran */
}

static void other(void) {
    puts("other");                      /* did not run */
}

/* Not on the stack at the crash: a core has no value of `k`. */
static void twice(int k) {
    if (k > 3)
        puts("big");
    if (k > 3)
        puts("big again");
}

static void work(int n) {
    int *p = NULL;
    if (n > 100)
        p = table;
    *p = n;                             /* the crash */
}

int main(int argc, char **argv) {
    mode = argc > 1 ? atoi(argv[1]) : 0;
    int level = argc * 3;
    int step = argc - 2;
    if (step)
        puts("step");                   /* did not run: step was 0 */
    step = argc;
    if (mode == 2)
        setup();
    if (mode == 1)
        other();
    if (level > 5)
        puts("deep");
    puts("go");
    twice(argc);
    if (level > 5 && mode == 2 && step)
        work(argc);
    return 0;
}
