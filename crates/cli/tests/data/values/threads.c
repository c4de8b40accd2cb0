#include <pthread.h>
#include <stdlib.h>

int shared = 0;
int mine = 0;

static void *worker(void *arg) {
    (void)arg;
    shared = 5;
    return 0;
}

int main(int argc, char **argv) {
    pthread_t t;
    mine = 1;
    shared = 1;
    pthread_create(&t, 0, worker, 0);
    pthread_join(t, 0);
    if (argc > 5)
        mine = 2;
    int *p = 0;
    return *p + argc + (argv != 0);
}
