// libjpeg-turbo's full libjpeg API (Debian: libjpeg62-turbo-dev), for the JPEGs TurboJPEG cannot
// classify (unusual sampling factors) and, later, progressive display.
//
// libjpeg reports a fatal error by calling error_exit, which must not return; its default exits
// the process. Here error_exit longjmps back to the C wrapper below that made the call, so a jump
// never crosses a Swift frame: Swift calls only these wrappers, each of which sets its own jump
// point and calls one libjpeg function. Warnings (corrupt data libjpeg recovers from) are counted
// in err->num_warnings, the first one's text kept, and nothing is printed.
#ifndef WEBIMAGE_CJPEGLIB_SHIM_H
#define WEBIMAGE_CJPEGLIB_SHIM_H

#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <jpeglib.h>

/// A decompressor with its error manager.
typedef struct webimage_jpeg_decoder {
    struct jpeg_decompress_struct info;
    struct jpeg_error_mgr errors;
    jmp_buf jump;
    /// The fatal error's text, when a wrapper returned 0.
    char error[JMSG_LENGTH_MAX];
    /// The first warning's text, when errors.num_warnings > 0.
    char warning[JMSG_LENGTH_MAX];
} webimage_jpeg_decoder;

static void webimage_jpeg_error_exit(j_common_ptr info) {
    webimage_jpeg_decoder *decoder = (webimage_jpeg_decoder *)info->client_data;
    (*info->err->format_message)(info, decoder->error);
    longjmp(decoder->jump, 1);
}

static void webimage_jpeg_emit_message(j_common_ptr info, int level) {
    if (level >= 0) return; // trace messages
    webimage_jpeg_decoder *decoder = (webimage_jpeg_decoder *)info->client_data;
    if (info->err->num_warnings++ == 0) (*info->err->format_message)(info, decoder->warning);
}

static void webimage_jpeg_output_message(j_common_ptr info) { (void)info; }

/// A new decompressor, or NULL when memory ran out. Free it with webimage_jpeg_destroy.
static inline __attribute__((noinline)) webimage_jpeg_decoder *webimage_jpeg_create(void) {
    webimage_jpeg_decoder *decoder = (webimage_jpeg_decoder *)calloc(1, sizeof(webimage_jpeg_decoder));
    if (!decoder) return NULL;
    decoder->info.err = jpeg_std_error(&decoder->errors);
    decoder->errors.error_exit = webimage_jpeg_error_exit;
    decoder->errors.emit_message = webimage_jpeg_emit_message;
    decoder->errors.output_message = webimage_jpeg_output_message;
    decoder->info.client_data = decoder;
    if (setjmp(decoder->jump)) {
        jpeg_destroy_decompress(&decoder->info); // frees what was allocated, if anything
        free(decoder);
        return NULL;
    }
    jpeg_create_decompress(&decoder->info);
    return decoder;
}

/// The fatal error's text, after a wrapper returned 0.
static inline const char *webimage_jpeg_error_text(const webimage_jpeg_decoder *decoder) { return decoder->error; }

static inline void webimage_jpeg_destroy(webimage_jpeg_decoder *decoder) {
    jpeg_destroy_decompress(&decoder->info);
    free(decoder);
}

/// Reads the headers of the JPEG in `data` (which must outlive the decoder's use) up to the first
/// scan. 1 on success, 0 on a fatal error.
static inline __attribute__((noinline)) int webimage_jpeg_read_header(webimage_jpeg_decoder *decoder,
                                                                     const unsigned char *data, unsigned long size) {
    if (setjmp(decoder->jump)) return 0;
    jpeg_mem_src(&decoder->info, data, size);
    return jpeg_read_header(&decoder->info, TRUE) == JPEG_HEADER_OK;
}

/// Output dimensions for the current parameters (scale, colour space). 1 on success, 0 on a fatal error.
static inline __attribute__((noinline)) int webimage_jpeg_calc_output_dimensions(webimage_jpeg_decoder *decoder) {
    if (setjmp(decoder->jump)) return 0;
    jpeg_calc_output_dimensions(&decoder->info);
    return 1;
}

/// 1 on success, 0 on a fatal error.
static inline __attribute__((noinline)) int webimage_jpeg_start_decompress(webimage_jpeg_decoder *decoder) {
    if (setjmp(decoder->jump)) return 0;
    return jpeg_start_decompress(&decoder->info) ? 1 : 0;
}

/// Reads the next `count` output rows into `rows`. 1 on success, 0 on a fatal error (or if the
/// source suspended, which the memory source never does).
static inline __attribute__((noinline)) int webimage_jpeg_read_scanlines(webimage_jpeg_decoder *decoder,
                                                                        JSAMPARRAY rows, JDIMENSION count) {
    if (setjmp(decoder->jump)) return 0;
    JDIMENSION read = 0;
    while (read < count) {
        JDIMENSION got = jpeg_read_scanlines(&decoder->info, rows + read, count - read);
        if (got == 0) return 0;
        read += got;
    }
    return 1;
}

/// Reads the rest of the file up to its end marker. 1 on success, 0 on a fatal error.
static inline __attribute__((noinline)) int webimage_jpeg_finish_decompress(webimage_jpeg_decoder *decoder) {
    if (setjmp(decoder->jump)) return 0;
    return jpeg_finish_decompress(&decoder->info) ? 1 : 0;
}

#endif
