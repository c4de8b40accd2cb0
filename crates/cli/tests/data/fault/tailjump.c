typedef int (*op)(int);

__attribute__((noinline)) static int run(op f, int x) { return f(x); }

int main(int argc, char **argv) {
  (void)argv;
  op f = argc > 5 ? (op)argv : (op)0;
  return run(f, argc) + 1;
}
