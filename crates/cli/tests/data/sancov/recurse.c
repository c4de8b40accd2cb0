/* Direct recursion, five activations deep, crashing at the bottom:
 * every activation but the innermost returns to the same call site, so
 * the return addresses of the recursive frames are all equal. */
#include <stdio.h>
#include <stdlib.h>

static int depth_sum(int *cell, int n)
{
  if (n == 0)
    return *cell;
  int r = depth_sum(n == 1 ? NULL : cell, n - 1);
  return r + n;
}

static int unused(int x)
{
  return x * 3;
}

int main(int argc, char **argv)
{
  int cell = argc;
  int n = argc > 1 ? atoi(argv[1]) : 4;
  if (n < 0)
    n = unused(n);
  printf("%d\n", depth_sum(&cell, n));
  return 0;
}
