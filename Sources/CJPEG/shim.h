#ifndef NEARCARD_CJPEG_SHIM_H
#define NEARCARD_CJPEG_SHIM_H
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <jpeglib.h>

// libjpeg reports errors by calling error_exit, which by default ends the process. Swift cannot
// setjmp, so decoding runs here: error_exit longjmps back with libjpeg's message.
struct nearcard_jpeg_error {
    struct jpeg_error_mgr manager;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
};

static void nearcard_jpeg_error_exit(j_common_ptr info) {
    struct nearcard_jpeg_error *e = (struct nearcard_jpeg_error *)info->err;
    (*info->err->format_message)(info, e->message);
    longjmp(e->jump, 1);
}

// Warnings are counted, never printed (a damaged image decodes with warnings: a strict reader refuses it).
static void nearcard_jpeg_quiet(j_common_ptr info, int level) {
    if (level < 0) info->err->num_warnings++;
}

// The error manager both directions use: errors longjmp back with libjpeg's message, warnings are counted.
static struct jpeg_error_mgr *nearcard_jpeg_errors(struct nearcard_jpeg_error *error) {
    struct jpeg_error_mgr *manager = jpeg_std_error(&error->manager);
    manager->error_exit = nearcard_jpeg_error_exit;
    manager->emit_message = nearcard_jpeg_quiet;
    error->message[0] = 0;
    return manager;
}

// Decodes a JPEG to 8-bit pixels of `components` bytes (1: JCS_GRAYSCALE, 3: JCS_RGB). 0: *pixels
// (malloc'd; the caller frees it), *width, *height set. -1: not decodable, libjpeg's reason in message
// (strict: an image libjpeg decoded only with warnings, truncated or corrupt, is -1 too). -2: larger
// than max_side (*width, *height set).
static int nearcard_jpeg_decode(const unsigned char *data, unsigned long size, int max_side, int components, int strict,
                                unsigned char **pixels, int *width, int *height, char *message, int message_size) {
    struct jpeg_decompress_struct info;
    struct nearcard_jpeg_error error;
    unsigned char *volatile buffer = NULL;
    info.err = nearcard_jpeg_errors(&error);
    if (setjmp(error.jump)) {
        snprintf(message, (size_t)message_size, "%s", error.message);
        jpeg_destroy_decompress(&info);
        free(buffer);
        return -1;
    }
    jpeg_create_decompress(&info);
    jpeg_mem_src(&info, data, size);
    jpeg_read_header(&info, TRUE);
    if ((int)info.image_width > max_side || (int)info.image_height > max_side) {
        *width = (int)info.image_width;
        *height = (int)info.image_height;
        jpeg_destroy_decompress(&info);
        return -2;
    }
    info.out_color_space = components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(&info);
    int w = (int)info.output_width, h = (int)info.output_height;
    buffer = malloc((size_t)w * (size_t)h * (size_t)components);
    if (buffer == NULL) {
        snprintf(message, (size_t)message_size, "out of memory");
        jpeg_destroy_decompress(&info);
        return -1;
    }
    while (info.output_scanline < info.output_height) {
        unsigned char *row = buffer + (size_t)info.output_scanline * (size_t)w * (size_t)components;
        jpeg_read_scanlines(&info, &row, 1);
    }
    jpeg_finish_decompress(&info);
    if (strict && error.manager.num_warnings > 0) {
        snprintf(message, (size_t)message_size, "damaged or truncated image data");
        jpeg_destroy_decompress(&info);
        free(buffer);
        return -1;
    }
    jpeg_destroy_decompress(&info);
    *pixels = buffer;
    *width = w;
    *height = h;
    return 0;
}

// Encodes 8-bit RGB as a baseline JPEG of `quality` with no marker segment but the image's own:
// no JFIF or Adobe header, no EXIF, no ICC profile, no comment. 0: *out (malloc'd by libjpeg; the
// caller frees it) and *out_size set. -1: libjpeg's reason in message.
static int nearcard_jpeg_encode_rgb(const unsigned char *pixels, int width, int height, int quality,
                                    unsigned char **out, unsigned long *out_size, char *message, int message_size) {
    struct jpeg_compress_struct info;
    struct nearcard_jpeg_error error;
    info.err = nearcard_jpeg_errors(&error);
    *out = NULL;
    *out_size = 0;
    if (setjmp(error.jump)) {
        snprintf(message, (size_t)message_size, "%s", error.message);
        jpeg_destroy_compress(&info);
        return -1;
    }
    jpeg_create_compress(&info);
    jpeg_mem_dest(&info, out, out_size);
    info.image_width = (JDIMENSION)width;
    info.image_height = (JDIMENSION)height;
    info.input_components = 3;
    info.in_color_space = JCS_RGB;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, quality, TRUE);
    info.write_JFIF_header = FALSE;
    info.write_Adobe_marker = FALSE;
    info.optimize_coding = TRUE;
    jpeg_start_compress(&info, TRUE);
    while (info.next_scanline < info.image_height) {
        const unsigned char *row = pixels + (size_t)info.next_scanline * (size_t)width * 3;
        JSAMPROW rows[1] = {(JSAMPROW)row};
        jpeg_write_scanlines(&info, rows, 1);
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    return 0;
}
#endif
