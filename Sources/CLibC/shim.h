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
#endif
