#include <stdlib.h>

static int first(const char *name) {
  const char *v = getenv(name);
  if (name != NULL) {
    const char *p = v;
    return p[0];
  }
  return 0;
}

int main(void) { return first("POSTMORTEM_SURELY_UNSET"); }
