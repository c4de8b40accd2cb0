#include "util.h"
#include <cstdio>
#include <cstdlib>

int right(int x) {
  int r = clamp_scale(x - 1);
  return r + 2;
}

static int never_called(int x) {
  return left(x) * right(x);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 0;
  int s = left(n) + right(n);
  printf("s = %d\n", s);
  if (n < -5)
    s += never_called(n);
  if (s > 10) {
    int *p = nullptr;
    *p = s;
  }
  return s;
}
