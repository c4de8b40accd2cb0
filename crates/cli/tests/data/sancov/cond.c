/* A run stopped on the first line of an `if` whose condition goes on over
 * three lines, before its first comparison (bzip2's cleanUpAndFail): the
 * last branch of the condition carries the first line's location too,
 * and the lines after it did not run. */
#include <stdio.h>
#include <stdlib.h>

static int mode, op;
static char del;

static void fail(int code)
{
  if (mode == 3
      && op != 3
      && del) {
    printf("removing\n");
  }
  exit(code);
}

int main(int argc, char **argv)
{
  mode = argc;
  op = 2;
  del = 1;
  fail(2);
  return 0;
}
