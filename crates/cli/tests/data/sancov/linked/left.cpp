#include "util.h"

int left(int x) {
  int r = clamp_scale(x);
  return r + 1;
}
