#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int ready;

static void *worker(void *arg) {
    pthread_mutex_lock(&m); /* worker locks */
    ready = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&m);
    for (;;)
        pause(); /* worker waits */
    return arg;
}

static int twice(int x) {
    return x * 2; /* twice body */
}

static int next(int x) {
    return x + 1; /* next body */
}

int main(int argc, char **argv) {
    int k = argc > 1 ? atoi(argv[1]) : 0;
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    pthread_mutex_lock(&m);
    while (!ready)
        pthread_cond_wait(&cv, &m);
    pthread_mutex_unlock(&m);
    int r;
    if (k == 1)
        r = twice(k); /* call twice */
    else
        r = next(k); /* call next */
    volatile int *p = 0;
    *p = r;
    return 0;
}
