/* Input: b a c
 * Callbacks from code outside the program: the "library" of
 * callbacks_lib.c (compiled without coverage and not in the graph) keeps
 * a table of functions it is given and calls them later; no call in the
 * program passes them directly. Crashes with a NULL write in finish().
 */
#include <stdio.h>
#include <stdlib.h>

struct handlers {
  void (*on_event)(const char *);
  int (*filter)(const char *);
};
void lib_register(const struct handlers *h);
void lib_emit(const char *what);

static int seen;
static const char *last;

static void on_event(const char *what) {
  seen++;
  last = what;
  printf("event %s\n", what);
}

static int not_z(const char *what) {
  return what[0] != 'z';
}

static const struct handlers table = {on_event, not_z};

static void farewell(void) {
  printf("farewell\n");
}

static void finish(void) {
  int *sink = NULL;
  printf("%d events, last %s\n", seen, last ? last : "none");
  *sink = seen;
  farewell();
}

int main(int argc, char **argv) {
  lib_register(&table);
  for (int i = 1; i < argc; i++)
    lib_emit(argv[i]);
  printf("main done\n");
  finish();
  return 0;
}
