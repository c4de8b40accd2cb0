// Input: 5 0 4
// C++ exceptions thrown through a frame that has no try: divide() throws,
// scaled() (a plain call, no landing pad) is left at once, and main's
// catch counts the failure. Crashes with a NULL write in finish().
#include <cstdio>
#include <cstdlib>

static int divide(int a, int b) {
  if (b == 0)
    throw a;
  return a / b;
}

static int scaled(int a, int b) {
  int r = divide(a * 10, b);
  std::printf("scaled %d\n", r);
  return r;
}

static void farewell() {
  std::printf("farewell\n");
}

static void finish(int total, int failures) {
  int *sink = nullptr;
  std::printf("total %d, %d failures\n", total, failures);
  *sink = total;
  farewell();
}

int main(int argc, char **argv) {
  int total = 0, failures = 0;
  for (int i = 1; i < argc; i++) {
    try {
      total += scaled(100, std::atoi(argv[i]));
    } catch (int dividend) {
      failures++;
      std::printf("caught %d / 0\n", dividend);
    }
  }
  finish(total, failures);
  return 0;
}
