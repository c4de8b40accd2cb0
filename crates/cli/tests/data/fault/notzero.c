#include <limits.h>
#include <stdlib.h>

long idiv(long m, long n) {
  if (((n != 0) == 0))
    return 0;
  return m / n;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1;
  return (int)idiv(LONG_MIN, n);
}
