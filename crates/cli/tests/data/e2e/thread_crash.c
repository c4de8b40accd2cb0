/* Input: 7
 * A crash in a thread: main starts a worker, logs, and waits for it; the
 * worker waits until main has logged, then divides by zero. Main's lines
 * after pthread_create ran in the main thread, on no path to the crash.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static volatile int main_ready;

static int ratio(int a, int b) {
  return a / b;
}

static void *worker(void *arg) {
  int n = *(int *)arg;
  while (!main_ready)
    usleep(1000);
  printf("worker %d\n", n);
  printf("ratio %d\n", ratio(n, n - 7));
  return NULL;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1;
  pthread_t t;
  pthread_create(&t, NULL, worker, &n);
  printf("started worker with %d\n", n);
  main_ready = 1;
  pthread_join(t, NULL);
  printf("joined\n");
  return 0;
}
