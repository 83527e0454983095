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

static void nearcard_jpeg_quiet(j_common_ptr info, int level) { (void)info; (void)level; }

// Decodes a JPEG to 8-bit grayscale. 0: *pixels (malloc'd; the caller frees it), *width, *height set.
// -1: not decodable, libjpeg's reason in message. -2: larger than max_side (*width, *height set).
static int nearcard_jpeg_decode_gray(const unsigned char *data, unsigned long size, int max_side,
                                     unsigned char **pixels, int *width, int *height, char *message, int message_size) {
    struct jpeg_decompress_struct info;
    struct nearcard_jpeg_error error;
    unsigned char *volatile buffer = NULL;
    info.err = jpeg_std_error(&error.manager);
    error.manager.error_exit = nearcard_jpeg_error_exit;
    error.manager.emit_message = nearcard_jpeg_quiet;
    error.message[0] = 0;
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
    info.out_color_space = JCS_GRAYSCALE;
    jpeg_start_decompress(&info);
    int w = (int)info.output_width, h = (int)info.output_height;
    buffer = malloc((size_t)w * (size_t)h);
    if (buffer == NULL) {
        snprintf(message, (size_t)message_size, "out of memory");
        jpeg_destroy_decompress(&info);
        return -1;
    }
    while (info.output_scanline < info.output_height) {
        unsigned char *row = buffer + (size_t)info.output_scanline * (size_t)w;
        jpeg_read_scanlines(&info, &row, 1);
    }
    jpeg_finish_decompress(&info);
    jpeg_destroy_decompress(&info);
    *pixels = buffer;
    *width = w;
    *height = h;
    return 0;
}
#endif
