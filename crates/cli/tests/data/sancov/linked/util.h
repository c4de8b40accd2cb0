/* An inline function in a header: every translation unit that uses it
 * gets a linkonce_odr copy, with its own SanitizerCoverage flags and pc
 * table; llvm-link keeps one copy of the function but every pc table,
 * whose block addresses in the dropped copies are the constant 1. */
#pragma once

inline int clamp_scale(int x) {
  if (x > 100)
    return 100;
  if (x < 0)
    return 0;
  return x * 2;
}

int left(int x);
int right(int x);
