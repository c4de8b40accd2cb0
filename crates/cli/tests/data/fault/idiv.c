#include <limits.h>
#include <stdlib.h>

#define unlikely(x) (__builtin_expect(((x) != 0), 0))

/* The guard lets -1 through: LONG_MIN / -1 overflows. */
long idiv(long m, long n) {
  if (unlikely(n == 0))
    return 0;
  return m / n;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1;
  return (int)idiv(LONG_MIN, n);
}
