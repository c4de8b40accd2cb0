/* A library outside the program's graph (compiled without coverage): it
 * stores a callback and calls it later. */
static void (*stored)(const char *);

void lib_register(void (*cb)(const char *)) { stored = cb; }

void lib_emit(const char *what) {
  if (stored)
    stored(what);
}
