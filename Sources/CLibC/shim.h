#ifndef NEARCARD_CLIBC_SHIM_H
#define NEARCARD_CLIBC_SHIM_H
// The C library's clock-discipline state, which Swift's Glibc module does not bring in.
#include <sys/timex.h>
// TIME_ERROR when no NTP has disciplined the clock (the kernel's STA_UNSYNC), else its state; -1 on failure.
static inline int nearcard_clock_state(long *maxerror_us) {
    struct timex tx = {0};
    int state = adjtimex(&tx);
    if (maxerror_us) *maxerror_us = tx.maxerror;
    return state;
}
static inline int nearcard_time_error(void) { return TIME_ERROR; }
// A process holding secret keys: no core dump, and not dumpable, so other processes of the same user
// cannot ptrace it or read its memory and /proc files (as ssh-agent does). 0 on success.
#include <sys/prctl.h>
#include <sys/resource.h>
static inline int nearcard_make_undumpable(void) {
    struct rlimit none = {0, 0};
    int a = setrlimit(RLIMIT_CORE, &none);
    int b = prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    return a == 0 && b == 0 ? 0 : -1;
}
static inline int nearcard_is_dumpable(void) { return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0); }
// The calling thread runs only when its CPU would otherwise be idle, and yields to any other thread
// at once (Linux SCHED_IDLE; any user may lower a thread's priority so): for work made ahead of need.
// 0 on success.
#include <sched.h>
#ifndef SCHED_IDLE
#define SCHED_IDLE 5
#endif
static inline int nearcard_idle_priority(void) {
    struct sched_param p = {0};
    return sched_setscheduler(0, SCHED_IDLE, &p);
}
// Names the calling thread (its comm, at most 15 bytes: what top -H and /proc show). 0 on success.
static inline int nearcard_name_thread(const char *name) { return prctl(PR_SET_NAME, name, 0, 0, 0); }
#endif
