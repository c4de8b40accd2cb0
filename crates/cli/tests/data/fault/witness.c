#include <string.h>

static int parse_line(const char *s) {
  if (s[0] == '#')
    return -1;
  return (int)strlen(s);
}

static int crash(const int *p) { return *p; }

int main(int argc, char **argv) {
  int n = parse_line(argv[argc - 1]);
  const int *p = NULL;
  if (n < 0)
    return 1;
  switch (n) {
  case 1:
    return crash(p);
  default:
    return 0;
  }
}
