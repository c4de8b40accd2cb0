#include <stdlib.h>
#include <string.h>

static const char *find(const char *s, size_t len, char c) {
  len = len - 1;
  return memchr(s, c, len);
}

int main(int argc, char **argv) {
  size_t size = 64;
  char *buf = calloc(1, size);
  size_t used = 16;
  (void)argv;
  const char *p = find(buf, used - size, argc > 5 ? 'x' : 127);
  return p != NULL;
}
