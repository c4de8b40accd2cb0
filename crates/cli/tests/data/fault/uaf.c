#include <stdlib.h>

struct buf {
  char *data;
  size_t len;
};

static void done(struct buf *b) {
  free(b->data);
}

static void put(struct buf *b, size_t i, char c) {
  b->data[i] = c;
}

int main(int argc, char **argv) {
  struct buf b;
  (void)argv;
  b.len = 1 << 20;
  b.data = malloc(b.len);
  put(&b, 0, 'a');
  if (argc > 1)
    done(&b);
  put(&b, 1, 'b');
  return 0;
}
