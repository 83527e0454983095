#ifndef NEARCARD_CPNG_SHIM_H
#define NEARCARD_CPNG_SHIM_H
#include <png.h>
// PNG_IMAGE_VERSION is a macro; the simplified API needs it in png_image.version.
static inline unsigned int nearcard_png_image_version(void) { return PNG_IMAGE_VERSION; }
#endif
