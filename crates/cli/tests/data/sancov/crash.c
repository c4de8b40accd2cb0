/* A small program for the sancov tests: argv[1] picks where it dies.
 *   segv N   null dereference in deep() after N loop iterations
 *   abort N  abort() from check()
 *   ok N     exits normally
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int table[16];

static int square(int x) { return x * x; }

static int cube(int x) {
  if (x < 0)
    return -cube(-x);
  return x * square(x);
}

static void never_called(void) { puts("never"); }

/* Not called from anywhere: its flag can never be set. */
void unused_helper(void) { puts("unused"); }

static int deep(int *p, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) {
    if (i % 3 == 0)
      s += square(i);
    else
      s += cube(i);
  }
  table[n & 15] = s;
  return s + *p;
}

static void check(int v) {
  if (v > 1000) {
    fprintf(stderr, "too big: %d\n", v);
    abort();
  }
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: crash segv|abort|ok N\n");
    return 2;
  }
  int n = atoi(argv[2]);
  int v = 0;
  printf("mode %s n=%d\n", argv[1], n);
  if (strcmp(argv[1], "segv") == 0) {
    v = deep(NULL, n);
  } else if (strcmp(argv[1], "abort") == 0) {
    v = deep(&n, n);
    check(v);
  } else if (strcmp(argv[1], "never") == 0) {
    never_called();
  } else {
    v = deep(&n, n);
  }
  printf("%d\n", v);
  return 0;
}
