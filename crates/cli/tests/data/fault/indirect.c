#include <stddef.h>

struct job {
  int (*run)(const int *);
  const int *arg;
};

static int run(const int *p) {
  return *p;
}

int main(int argc, char **argv) {
  int x = 1;
  struct job j = {run, &x};
  (void)argv;
  if (argc > 1)
    j.arg = NULL;
  return j.run(j.arg);
}
