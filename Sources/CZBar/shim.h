#ifndef NEARCARD_CZBar_SHIM_H
#define NEARCARD_CZBar_SHIM_H
#include <zbar.h>
// zbar_fourcc is a macro.
static inline unsigned long nearcard_zbar_y800(void) { return zbar_fourcc('Y', '8', '0', '0'); }
#endif
