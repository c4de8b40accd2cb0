/* Two threads: the worker sets its coverage flags, main crashes. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static void *worker(void *a) { (void)a; for (;;) sleep(1); return NULL; }
static void boom(int *p) { *p = 1; }
int main(void) { pthread_t t; pthread_create(&t, NULL, worker, NULL); sleep(1); boom(NULL); return 0; }
