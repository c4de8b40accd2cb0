/* A crash inside a signal handler: SIGALRM arrives while `wait_for_alarm`
 * spins, and the handler dereferences NULL. The stack a core holds goes
 * from the handler through the kernel's signal frame (the C library's
 * `__restore_rt` trampoline) back to where the signal arrived. */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>

static volatile int fired;
static volatile long spins;

static void on_alarm(int sig)
{
    fired = sig;
    *(volatile int *)0 = sig;
}

static void wait_for_alarm(void)
{
    struct itimerval t = { { 0, 0 }, { 0, 20000 } };
    setitimer(ITIMER_REAL, &t, NULL);
    while (!fired)
        spins++;
    printf("woke after %ld spins\n", spins);
}

int main(void)
{
    signal(SIGALRM, on_alarm);
    wait_for_alarm();
    printf("done\n");
    return 0;
}
