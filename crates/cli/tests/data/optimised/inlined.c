/* -O2: a function inlined into main, whose out-of-line body is kept (its
   address is taken) and never runs: in the inlined copy `return p;`
   leaves no instruction of its own. */
#include <stdio.h>
#include <stdlib.h>
int *volatile vp;
static int *make(int n) {
  int *p = calloc(n + 1, sizeof(int));
  if (p == NULL)
    return NULL;
  p[0] = n;
  printf("%p\n", (void *)p);
  return p;
}
int *(*volatile keep)(int) = make;
int main(int argc, char **argv) {
  int *q = make(argc);
  printf("%d\n", q[0]);
  return q[0] + *vp;
}
