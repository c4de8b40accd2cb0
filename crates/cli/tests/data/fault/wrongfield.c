#include <stdlib.h>

struct handle {
  int *data;
  const char *name;
};

static int first(struct handle *h) { return h->data[0]; }

static int check(struct handle *h) {
  if (h->name != NULL)
    return first(h);
  return 0;
}

int main(int argc, char **argv) {
  struct handle h;
  h.name = argv[0];
  h.data = NULL;
  if (argc > 1)
    h.data = calloc(1, sizeof(int));
  return check(&h);
}
