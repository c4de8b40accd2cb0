#include <stdio.h>

static const char *names[4];
static const char *words[4] = {"a", "bb", "ccc", "dddd"};

static void init(void) {
  for (int i = 0; i < 3; i++)
    names[i] = words[i];
}

static int first(const char *s) {
  return s[0];
}

int main(void) {
  int t = 0;
  init();
  for (int k = 0; k < 4; k++)
    t += first(names[k]);
  printf("%d\n", t);
  return 0;
}
