/* Input: 3
 * Recursion through a library outside the graph: walk() calls lib_each()
 * of reentry_lib.c (no coverage, not in the graph), which calls walk()
 * back. The backtrace's library frames cannot be placed, so the stack the
 * report keeps is main -> walk with the crash in walk: only the report's
 * stack gaps say that calls are pending in between (walk ran further,
 * and lib_each was called, before the innermost walk crashed).
 * Crashes with a NULL write at depth 0.
 */
#include <stdio.h>
#include <stdlib.h>

void lib_each(void (*cb)(int), int n);

static int visits;

static void walk(int n) {
  visits++;
  if (n == 0) {
    int *sink = NULL;
    printf("bottom after %d visits\n", visits);
    *sink = visits;
  }
  printf("walk %d\n", n);
  lib_each(walk, n - 1);
  printf("back at %d\n", n);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 2;
  printf("start %d\n", n);
  walk(n);
  printf("done\n");
  return 0;
}
