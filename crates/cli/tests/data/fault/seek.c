static int mode(const char *s) {
  if (s[0] != 'x')
    return 1;
  return 0;
}

static int crash(const int *p) { return *p; }

int main(int argc, char **argv) {
  int m = mode(argv[argc - 1]);
  if (m == 0)
    return 0;
  return crash((const int *)0) + m;
}
