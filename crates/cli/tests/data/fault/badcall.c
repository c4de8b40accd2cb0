#include <stdlib.h>

struct ops {
  void (*done)(int *);
  int *data;
};

static void release(int *p) { free(p); }

static void setup(struct ops *o, int n) {
  o->data = malloc(sizeof(int) * (size_t)n);
  if (o->done != NULL)
    o->done = release;
}

static void finish(struct ops *o) {
  o->done(o->data);
}

int main(int argc, char **argv) {
  struct ops o;
  (void)argv;
  o.done = NULL;
  setup(&o, argc);
  finish(&o);
  return 0;
}
