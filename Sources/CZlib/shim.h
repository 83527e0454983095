#ifndef NEARCARD_CZlib_SHIM_H
#define NEARCARD_CZlib_SHIM_H
#include <zlib.h>
// deflateInit2 and inflateInit2 are macros over the _-suffixed functions.
static inline int nearcard_deflate_init_raw(z_streamp s, int level) { return deflateInit2(s, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY); }
static inline int nearcard_inflate_init_raw(z_streamp s) { return inflateInit2(s, -15); }
#endif
