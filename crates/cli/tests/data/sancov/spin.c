/* A run stopped by a signal while it spins in an endless loop: the pc is
 * on the line of the endless for, whose only code is the loop's branch. */
#include <stdio.h>
#include <unistd.h>

static volatile int ticks;

static void spin(int n)
{
  if (n > 0)
    ticks = n;
  for (;;) {
  }
}

int main(int argc, char **argv)
{
  printf("start\n");
  alarm(1);
  spin(argc);
  return 0;
}
