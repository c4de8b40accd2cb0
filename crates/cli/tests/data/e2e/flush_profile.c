/* Linked into every program of the end-to-end soundness test, compiled
 * WITHOUT coverage and left out of the control-flow graph: it changes
 * nothing in the program's own control flow.
 *
 * Before main, it makes stdout line-buffered (so the log holds every line
 * printed before the crash) and catches the fatal signals. On SIGSEGV,
 * SIGABRT or SIGFPE it writes the coverage profile, which the clang
 * runtime would otherwise write only at a normal exit, and exits.
 */
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

int __llvm_profile_write_file(void);

static void write_profile_and_exit(int sig) {
    __llvm_profile_write_file();
    _exit(128 + sig);
}

__attribute__((constructor)) static void install(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGSEGV, write_profile_and_exit);
    signal(SIGABRT, write_profile_and_exit);
    signal(SIGFPE, write_profile_and_exit);
}
