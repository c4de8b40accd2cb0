/* Input: 3 5
 * Threads: workers started with pthread_create sum their ranges and log;
 * a ticker thread loops forever (it never returns); main waits until it
 * ticked, joins the workers and crashes with a NULL write in
 * check_totals(). The other threads' lines ran on no path of the
 * crashing one.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct job {
  int from, to;
  long sum;
};

static volatile int ticks;

static void *ticker(void *arg) {
  (void)arg;
  for (;;) {
    ticks++;
    if (ticks == 1)
      printf("ticker started\n");
    usleep(1000);
  }
}

static void *worker(void *arg) {
  struct job *j = arg;
  for (int i = j->from; i <= j->to; i++)
    j->sum += i;
  printf("worker %d..%d = %ld\n", j->from, j->to, j->sum);
  return NULL;
}

static void report_ok(long total) {
  printf("all %ld accounted for\n", total);
}

static void check_totals(struct job *jobs, int n) {
  long total = 0;
  int *sink = NULL;
  for (int i = 0; i < n; i++)
    total += jobs[i].sum;
  printf("total %ld\n", total);
  *sink = (int)total;
  report_ok(total);
}

int main(int argc, char **argv) {
  struct job jobs[8];
  pthread_t tids[8];
  int n = argc - 1 > 8 ? 8 : argc - 1;
  pthread_t tick;
  pthread_create(&tick, NULL, ticker, NULL);
  do /* at least once: what runs must not depend on the scheduling */
    usleep(1000);
  while (ticks < 2);
  for (int i = 0; i < n; i++) {
    jobs[i].from = 1;
    jobs[i].to = atoi(argv[i + 1]);
    jobs[i].sum = 0;
    pthread_create(&tids[i], NULL, worker, &jobs[i]);
  }
  for (int i = 0; i < n; i++)
    pthread_join(tids[i], NULL);
  printf("joined %d\n", n);
  check_totals(jobs, n);
  return 0;
}
