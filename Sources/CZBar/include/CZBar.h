#ifndef NEARCARD_CZBAR_H
#define NEARCARD_CZBAR_H
#include <stddef.h>
#include <zbar.h>

// libzbar is loaded when a code is first scanned (dlopen), not at every start of the program: with
// what it needs (X11, xcb, v4l) it is nine shared libraries, about 1 ms of every command's start
// (docs/PERFORMANCE.md, "Commands, exec → exit"). The functions Nearcard uses, resolved once:
struct nearcard_zbar {
    __typeof__(&zbar_image_scanner_create) _Nonnull image_scanner_create;
    __typeof__(&zbar_image_scanner_destroy) _Nonnull image_scanner_destroy;
    __typeof__(&zbar_image_scanner_set_config) _Nonnull image_scanner_set_config;
    __typeof__(&zbar_image_create) _Nonnull image_create;
    __typeof__(&zbar_image_destroy) _Nonnull image_destroy;
    __typeof__(&zbar_image_set_format) _Nonnull image_set_format;
    __typeof__(&zbar_image_set_size) _Nonnull image_set_size;
    __typeof__(&zbar_image_set_data) _Nonnull image_set_data;
    __typeof__(&zbar_scan_image) _Nonnull scan_image;
    __typeof__(&zbar_image_first_symbol) _Nonnull image_first_symbol;
    __typeof__(&zbar_symbol_next) _Nonnull symbol_next;
    __typeof__(&zbar_symbol_get_data) _Nonnull symbol_get_data;
    __typeof__(&zbar_symbol_get_data_length) _Nonnull symbol_get_data_length;
};

// The library's functions, loaded on the first call (thread-safe; never unloaded). NULL when
// libzbar.so.0 cannot be loaded, with the loader's reason in `error`.
const struct nearcard_zbar *_Nullable nearcard_zbar_load(char *_Nonnull error, size_t length);

// zbar_fourcc is a macro.
static inline unsigned long nearcard_zbar_y800(void) { return zbar_fourcc('Y', '8', '0', '0'); }
#endif
