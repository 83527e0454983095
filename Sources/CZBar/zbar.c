#include "CZBar.h"

#include <CLoad.h>
#include <pthread.h>
#include <stdio.h>

static struct nearcard_zbar table;
static const struct nearcard_zbar *loaded;
static char failure[256];
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load(void) {
    static const char *const symbols[] = {
        "zbar_image_scanner_create",
        "zbar_image_scanner_destroy",
        "zbar_image_scanner_set_config",
        "zbar_image_create",
        "zbar_image_destroy",
        "zbar_image_set_format",
        "zbar_image_set_size",
        "zbar_image_set_data",
        "zbar_scan_image",
        "zbar_image_first_symbol",
        "zbar_symbol_next",
        "zbar_symbol_get_data",
        "zbar_symbol_get_data_length",
    };
    void **const slots[] = {
        (void **)&table.image_scanner_create,
        (void **)&table.image_scanner_destroy,
        (void **)&table.image_scanner_set_config,
        (void **)&table.image_create,
        (void **)&table.image_destroy,
        (void **)&table.image_set_format,
        (void **)&table.image_set_size,
        (void **)&table.image_set_data,
        (void **)&table.scan_image,
        (void **)&table.image_first_symbol,
        (void **)&table.symbol_next,
        (void **)&table.symbol_get_data,
        (void **)&table.symbol_get_data_length,
    };
    if (nearcard_load("libzbar.so.0", symbols, slots, sizeof symbols / sizeof *symbols, failure, sizeof failure)) loaded = &table;
}

const struct nearcard_zbar *nearcard_zbar_load(char *error, size_t length) {
    pthread_once(&once, load);
    if (!loaded && length > 0) snprintf(error, length, "%s", failure);
    return loaded;
}
