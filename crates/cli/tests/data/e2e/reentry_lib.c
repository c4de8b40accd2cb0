/* A library outside the program's graph (compiled without coverage): it
 * calls the function it is given back. */
void lib_each(void (*cb)(int), int n) {
  cb(n);
}
