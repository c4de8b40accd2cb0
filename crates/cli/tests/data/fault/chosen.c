#include <stddef.h>

struct params {
  int *buf;
  void (*init)(struct params *);
};

static int storage[4];

static void init_none(struct params *p) { p->buf = NULL; }

static void init_buf(struct params *p) { p->buf = storage; }

static void choose(struct params *p, int big) {
  if (big)
    p->init = init_none;
  else
    p->init = init_buf;
}

static int use(struct params *p) { return p->buf[0]; }

int main(int argc, char **argv) {
  struct params p;
  (void)argv;
  choose(&p, argc > 1);
  p.init(&p);
  return use(&p);
}
