#include <stdlib.h>

struct inner {
  int v;
};

struct outer {
  struct inner in;
  int k;
};

static int get(const struct inner *i) { return i->v; }

int main(int argc, char **argv) {
  struct outer *o = NULL;
  (void)argv;
  if (argc > 5)
    o = calloc(1, sizeof *o);
  struct inner *p = &o->in;
  return get(p);
}
