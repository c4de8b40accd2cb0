/* Input: 3 4
 * An exit handler: main registers report() with atexit and returns; the
 * handler runs after main, from the C library, and crashes with a NULL
 * write. No frame of main is on the stack at the crash.
 */
#include <stdio.h>
#include <stdlib.h>

static int product = 1;

static void report(void) {
  int *sink = NULL;
  printf("product %d\n", product);
  *sink = product;
}

int main(int argc, char **argv) {
  atexit(report);
  for (int i = 1; i < argc; i++)
    product *= atoi(argv[i]);
  printf("main done\n");
  return 0;
}
