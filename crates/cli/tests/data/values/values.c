#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int counter = 0;
static int initialized;
int mode = 7;
int *gp;

static void init(void) {
    initialized = 1;
}

static int handle(int kind) {
    int status = 10;
    int i;
    int escaped = 0;
    memset(&escaped, 0, sizeof escaped);
    if (kind == 1) {
        status = 20;
    } else if (kind == 2) {
        status = 30;
    }
    for (i = 0; i < kind; i++) {
        counter++;
    }
    if (kind > 5)
        mode = 3;
    int *p = 0;
    if (status == 40)
        p = &counter;
    return *p + status + escaped;
}

int main(int argc, char **argv) {
    int kind = argc > 1 ? atoi(argv[1]) : 0;
    if (argc > 2)
        init();
    printf("kind %d\n", kind);
    return handle(kind);
}
