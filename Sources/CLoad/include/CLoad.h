#ifndef NEARCARD_CLOAD_H
#define NEARCARD_CLOAD_H
#include <stddef.h>

// What the C loaders share (CAvahi, CZBar, CXML: docs/ARCHITECTURE.md): a shared library opened when
// a command first needs it, rather than by every start of the program.
//
// Opens `library` (dlopen, RTLD_NOW | RTLD_LOCAL; never closed) and resolves each of `symbols` into
// the function pointer `slots` points to (as many as `count`). Returns 1, or 0 with the reason
// (the loader's, or the symbol the library lacks) in `failure`.
int nearcard_load(const char *library, const char *const *symbols, void **const *slots, size_t count, char *failure,
                  size_t length);
#endif
