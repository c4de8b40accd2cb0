#include <stddef.h>

static int get(int *p) {
  return *p;
}

int main(int argc, char **argv) {
  int x = 1;
  int *q = NULL;
  if (argc < 5)
    q = &x;
  int a = get(q);
  int *r = &x;
  if (argc > 1)
    r = NULL;
  return a + get(r);
}
