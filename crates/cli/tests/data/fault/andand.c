/* A crash on the first line of a condition written over three lines:
   `s->mode` faults (s is NULL) before the other two lines run. The IR
   gives the condition's last branch the first line's location, so that
   line has two nodes; the core's pc says which one crashed. */
#include <stdio.h>
#include <stdlib.h>

struct state {
    int mode;
    int op;
    int keep;
};

struct state *volatile current = NULL;
int cleaned;

static void clean_up(struct state *s) {
    if (s->mode == 3
        && s->op != 1
        && !s->keep) {
        cleaned = 1;
    }
    puts("cleaned up");
}

int main(void) {
    clean_up(current);
    return 0;
}
