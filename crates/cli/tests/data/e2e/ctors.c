/* Input: 2 5 0 7
 * Constructors: setup() runs before main (it fills the table main
 * reads), and a destructor is registered; neither is called by the
 * program. main divides by the table's entries and crashes with a
 * division by zero on the third argument.
 */
#include <stdio.h>
#include <stdlib.h>

static int scale[8];
static int ready;

__attribute__((constructor)) static void setup(void) {
  for (int i = 0; i < 8; i++)
    scale[i] = 100 * (i + 1);
  ready = 1;
}

__attribute__((destructor)) static void teardown(void) {
  printf("teardown\n");
}

int main(int argc, char **argv) {
  if (!ready) {
    printf("not initialised\n");
    return 1;
  }
  for (int i = 1; i < argc; i++) {
    int d = atoi(argv[i]);
    printf("%d\n", scale[i % 8] / d);
  }
  return 0;
}
