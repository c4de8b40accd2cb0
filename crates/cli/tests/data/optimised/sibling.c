/* An -O2 crash below a sibling call: mid's `return leaf(x + 1);` is
   compiled as a jump, so mid's frame is not on the stack, and main's
   call line also calls leaf directly. */
#include <stdio.h>
int g;
int *volatile vp;
__attribute__((noinline)) int leaf(int x) {
  if (x > 100)
    g = 1;
  return *vp + x;
}
__attribute__((noinline)) int mid(int x) {
  if (x == 7)
    g = 2;
  g = 3;
  return leaf(x + 1);
}
int main(int argc, char **argv) {
  int r = argc > 5 ? leaf(argc) : mid(argc);
  printf("%d\n", r);
  return 0;
}
