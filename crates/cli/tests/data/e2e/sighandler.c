/* Input: 4 9 2
 * Signal handlers: SIGUSR1's handler counts and logs, and is run by
 * raise(); SIGUSR2's handler leaves with siglongjmp back to the sigsetjmp
 * in main, so the lines after that second return run only because of the
 * handler. Crashes with a NULL write in summarize().
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static volatile sig_atomic_t ticks;
static sigjmp_buf restart;

static void on_tick(int sig) {
  (void)sig;
  ticks++;
}

static void on_abort_request(int sig) {
  (void)sig;
  siglongjmp(restart, 1);
}

static void farewell(int sum) {
  printf("bye with %d\n", sum);
}

static void summarize(int sum) {
  int *sink = NULL;
  printf("sum %d after %d ticks\n", sum, (int)ticks);
  *sink = sum;
  farewell(sum);
}

int main(int argc, char **argv) {
  int sum = 0;
  signal(SIGUSR1, on_tick);
  signal(SIGUSR2, on_abort_request);
  if (sigsetjmp(restart, 1) != 0) {
    printf("restarted\n");
    summarize(sum);
    return 1;
  }
  for (int i = 1; i < argc; i++) {
    int v = atoi(argv[i]);
    sum += v;
    printf("value %d\n", v);
    if (v % 2 == 0)
      raise(SIGUSR1);
  }
  if (sum > 10)
    raise(SIGUSR2);
  printf("no restart\n");
  return 0;
}
