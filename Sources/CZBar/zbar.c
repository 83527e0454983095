#include "CZBar.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#define LIBRARY "libzbar.so.0"

static struct nearcard_zbar table;
static const struct nearcard_zbar *loaded;
static char failure[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen(LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        snprintf(failure, sizeof failure, "%s", dlerror());
        return;
    }
#define RESOLVE(field, symbol)                                                           \
    if (!(*(void **)&table.field = dlsym(library, #symbol))) {                           \
        snprintf(failure, sizeof failure, "%s has no %s (an old libzbar?)", LIBRARY, #symbol); \
        return;                                                                          \
    }
    RESOLVE(image_scanner_create, zbar_image_scanner_create)
    RESOLVE(image_scanner_destroy, zbar_image_scanner_destroy)
    RESOLVE(image_scanner_set_config, zbar_image_scanner_set_config)
    RESOLVE(image_create, zbar_image_create)
    RESOLVE(image_destroy, zbar_image_destroy)
    RESOLVE(image_set_format, zbar_image_set_format)
    RESOLVE(image_set_size, zbar_image_set_size)
    RESOLVE(image_set_data, zbar_image_set_data)
    RESOLVE(scan_image, zbar_scan_image)
    RESOLVE(image_first_symbol, zbar_image_first_symbol)
    RESOLVE(symbol_next, zbar_symbol_next)
    RESOLVE(symbol_get_data, zbar_symbol_get_data)
    RESOLVE(symbol_get_data_length, zbar_symbol_get_data_length)
#undef RESOLVE
    loaded = &table;
}

const struct nearcard_zbar *nearcard_zbar_load(char *error, size_t length) {
    pthread_once(&once, load);
    if (!loaded && length > 0) snprintf(error, length, "%s", failure);
    return loaded;
}
