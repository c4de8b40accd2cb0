/* The two callbacks the -fsanitize-coverage=...,inline-bool-flag,pc-table
 * module constructor calls. A sanitizer runtime (ASan, UBSan, ...) defines
 * them; a plain build links this file (compiled without sancov). Weak, so
 * that a sanitizer runtime's definitions win. */
__attribute__((weak)) void __sanitizer_cov_bool_flag_init(char *start, char *stop) {
  (void)start;
  (void)stop;
}
__attribute__((weak)) void __sanitizer_cov_pcs_init(const unsigned long *beg, const unsigned long *end) {
  (void)beg;
  (void)end;
}
