#include <stdio.h>
#include <string.h>

static size_t total(const char **names, int n) {
  size_t t = 0;
  for (int i = 0; i < n; i++)
    t += strlen(names[i]);
  return t;
}

int main(int argc, char **argv) {
  const char *names[4] = {"a", "b", NULL, NULL};
  (void)argv;
  printf("%zu\n", total(names, argc + 3));
  return 0;
}
