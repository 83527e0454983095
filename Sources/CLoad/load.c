#include "CLoad.h"

#include <dlfcn.h>
#include <stdio.h>

int nearcard_load(const char *library, const char *const *symbols, void **const *slots, size_t count, char *failure,
                  size_t length) {
    void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(failure, length, "%s", dlerror());
        return 0;
    }
    for (size_t i = 0; i < count; i++) {
        if (!(*slots[i] = dlsym(handle, symbols[i]))) {
            snprintf(failure, length, "%s has no %s (an older version?)", library, symbols[i]);
            return 0;
        }
    }
    return 1;
}
