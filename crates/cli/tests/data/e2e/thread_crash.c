/* Input: 7
 * A crash in a thread: main starts a worker, logs, and waits for it; the
 * worker waits until main has logged, then divides by zero. Main's lines
 * after pthread_create ran in the main thread, on no path to the crash.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* main writes a byte when it has logged (a pipe, not a flag polled in a
 * loop: the lines that run must not depend on the scheduling, since the
 * coverage run and the core-dump run are different runs). For the same
 * reason main writes and joins in one basic block: the worker may crash
 * as soon as the byte is written, and a branch on write's result would
 * race with the crash (main's next block flagged in one run, not yet in
 * the other). */
static int ready[2];

static int ratio(int a, int b) {
  return a / b;
}

static void *worker(void *arg) {
  int n = *(int *)arg;
  char c;
  if (read(ready[0], &c, 1) != 1)
    return NULL;
  printf("worker %d\n", n);
  printf("ratio %d\n", ratio(n, n - 7));
  return NULL;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1;
  pthread_t t;
  if (pipe(ready) != 0)
    return 1;
  pthread_create(&t, NULL, worker, &n);
  printf("started worker with %d\n", n);
  ssize_t wrote = write(ready[1], "x", 1);
  (void)wrote;
  pthread_join(t, NULL);
  printf("joined\n");
  return 0;
}
