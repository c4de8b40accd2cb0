#include <stdlib.h>

static int sum(int *w, int n) {
  int t = 0;
  for (int i = 0; i < n; i++)
    w[i + 1] = i;
  for (int k = 0; k < 16; k++)
    t += w[k];
  return t;
}

int main(int argc, char **argv) {
  int *w = malloc(16 * sizeof(int));
  (void)argv;
  return sum(w, argc * 100000000);
}
