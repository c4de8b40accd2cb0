/* Input: 12 3x4 56 y 7
 * An interpreter-style evaluator: errors are raised with longjmp from deep
 * inside the evaluation back to the setjmp of a protected call, which
 * counts them and carries on. Lines that run only after a caught error
 * (the else branch of the setjmp, the "skipped" message) are reached only
 * through the second return of setjmp. Crashes with a NULL write in
 * finish() once the totals are printed.
 */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

static jmp_buf *handler;
static int errors;

static void raise_error(const char *msg, char c) {
  printf("error: %s '%c'\n", msg, c);
  longjmp(*handler, 1);
}

static int digit(char c) {
  if (c < '0' || c > '9')
    raise_error("not a digit", c);
  return c - '0';
}

static int eval(const char *s) {
  int sum = 0;
  for (; *s; s++)
    sum = sum * 10 + digit(*s);
  return sum;
}

static int protected_eval(const char *s, int *out) {
  jmp_buf buf;
  jmp_buf *saved = handler;
  int status;
  handler = &buf;
  if (setjmp(buf) == 0) {
    *out = eval(s);
    status = 0;
  } else {
    errors++;
    status = 1;
  }
  handler = saved;
  return status;
}

static void farewell(void) {
  printf("goodbye after %d errors\n", errors);
}

static void finish(int total) {
  int *sink = NULL;
  printf("total %d, %d errors\n", total, errors);
  if (errors > 0)
    *sink = total;
  printf("clean run\n");
  farewell();
}

int main(int argc, char **argv) {
  int total = 0;
  for (int i = 1; i < argc; i++) {
    int v;
    if (protected_eval(argv[i], &v) == 0) {
      total += v;
      printf("%s -> %d\n", argv[i], v);
    } else {
      printf("skipped %s\n", argv[i]);
    }
  }
  finish(total);
  printf("all done\n");
  return 0;
}
