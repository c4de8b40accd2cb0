/* -O2: an inlined helper's address computation is hoisted into the
   entry block with its line (isempty's line 13), which never runs. */
#include <stdio.h>
int *volatile vp;
struct E {
  int pad[8];
  int ch;
  int len;
  int state;
};
struct E e = {{0}, 300, 0, 2};
static int isempty(struct E *s) {
  if (s->ch < 256 && s->len > 0)
    return 0;
  return 1;
}
__attribute__((noinline)) int handle(struct E *s) {
  int k = 0;
  while (1) {
    if (s->state == 1) {
      if (isempty(s))
        break;
      s->state = 2;
    }
    if (s->state == 2) {
      k++;
      if (k > 3)
        break;
    } else
      break;
  }
  return k + *vp;
}
int main(int argc, char **argv) {
  printf("%d\n", handle(&e));
  return 0;
}
