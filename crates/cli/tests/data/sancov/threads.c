/* Two threads: the worker sets its coverage flags, main crashes. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static volatile int mode;
static void *worker(void *a) {
  if (a)
    mode = 1; /* never: the argument is NULL */
  else
    mode = 2; /* the worker's flag */
  for (;;)
    sleep(1);
  return NULL;
}
static void boom(int *p) { *p = mode; }
int main(void) {
  pthread_t t;
  pthread_create(&t, NULL, worker, NULL);
  sleep(1);
  boom(NULL);
  return 0;
}
