// Incremental (progressive-display) decoding over libjpeg's suspending data source, for partial
// images while a JPEG downloads. The same rules as shim.h: every libjpeg call goes through a C
// wrapper here that sets its own jump point, so a fatal error never unwinds through Swift.
//
// The source holds only the bytes libjpeg has not consumed: when libjpeg suspends (returns for
// lack of data) it has backed its read position up to a point it can restart from, so the bytes
// before that point are never needed again and each append moves the rest to the buffer's start.
#ifndef WEBIMAGE_CJPEGLIB_INCREMENTAL_H
#define WEBIMAGE_CJPEGLIB_INCREMENTAL_H

#include <string.h>
#include "shim.h"
#include <jerror.h>

/// A decompressor fed piece by piece. `decoder` comes first so the error handlers' cast of
/// client_data holds.
typedef struct webimage_jpeg_stream {
    webimage_jpeg_decoder decoder;
    struct jpeg_source_mgr source;
    unsigned char *buffer;
    size_t capacity;
    /// Bytes skip_input_data asked to skip beyond what was buffered: skipped from the next appends.
    size_t pending_skip;
    /// No more bytes will come: running out of data inserts an EOI marker (with a warning), as jpeg_mem_src does.
    int complete;
    /// The number of the last scan read to its end (0 before any).
    int scans_completed;
} webimage_jpeg_stream;

static void webimage_jpeg_stream_init_source(j_decompress_ptr info) { (void)info; }
static void webimage_jpeg_stream_term_source(j_decompress_ptr info) { (void)info; }

static boolean webimage_jpeg_stream_fill_input_buffer(j_decompress_ptr info) {
    webimage_jpeg_stream *stream = (webimage_jpeg_stream *)info->client_data;
    if (!stream->complete) return FALSE; // suspend: the caller appends more and calls again
    static const JOCTET end_of_image[2] = { 0xFF, JPEG_EOI };
    WARNMS(info, JWRN_JPEG_EOF);
    info->src->next_input_byte = end_of_image;
    info->src->bytes_in_buffer = 2;
    return TRUE;
}

static void webimage_jpeg_stream_skip_input_data(j_decompress_ptr info, long count) {
    if (count <= 0) return;
    struct jpeg_source_mgr *source = info->src;
    if ((size_t)count > source->bytes_in_buffer) {
        webimage_jpeg_stream *stream = (webimage_jpeg_stream *)info->client_data;
        stream->pending_skip += (size_t)count - source->bytes_in_buffer;
        source->next_input_byte += source->bytes_in_buffer;
        source->bytes_in_buffer = 0;
    } else {
        source->next_input_byte += count;
        source->bytes_in_buffer -= (size_t)count;
    }
}

/// A new stream decompressor, or NULL when memory ran out. Free it with webimage_jpeg_stream_destroy.
static inline __attribute__((noinline)) webimage_jpeg_stream *webimage_jpeg_stream_create(void) {
    webimage_jpeg_stream *stream = (webimage_jpeg_stream *)calloc(1, sizeof(webimage_jpeg_stream));
    if (!stream) return NULL;
    webimage_jpeg_decoder *decoder = &stream->decoder;
    decoder->info.err = jpeg_std_error(&decoder->errors);
    decoder->errors.error_exit = webimage_jpeg_error_exit;
    decoder->errors.emit_message = webimage_jpeg_emit_message;
    decoder->errors.output_message = webimage_jpeg_output_message;
    decoder->info.client_data = stream;
    if (setjmp(decoder->jump)) {
        jpeg_destroy_decompress(&decoder->info);
        free(stream);
        return NULL;
    }
    jpeg_create_decompress(&decoder->info);
    stream->source.init_source = webimage_jpeg_stream_init_source;
    stream->source.fill_input_buffer = webimage_jpeg_stream_fill_input_buffer;
    stream->source.skip_input_data = webimage_jpeg_stream_skip_input_data;
    stream->source.resync_to_restart = jpeg_resync_to_restart;
    stream->source.term_source = webimage_jpeg_stream_term_source;
    stream->source.next_input_byte = NULL;
    stream->source.bytes_in_buffer = 0;
    decoder->info.src = &stream->source;
    return stream;
}

static inline void webimage_jpeg_stream_destroy(webimage_jpeg_stream *stream) {
    jpeg_destroy_decompress(&stream->decoder.info);
    free(stream->buffer);
    free(stream);
}

static inline struct jpeg_decompress_struct *webimage_jpeg_stream_info(webimage_jpeg_stream *stream) {
    return &stream->decoder.info;
}

static inline const char *webimage_jpeg_stream_error_text(const webimage_jpeg_stream *stream) { return stream->decoder.error; }

/// Appends `count` new bytes (`complete`: they are the last). 1 on success, 0 when memory ran out.
static inline int webimage_jpeg_stream_append(webimage_jpeg_stream *stream, const unsigned char *bytes, size_t count,
                                              int complete) {
    size_t skipped = stream->pending_skip < count ? stream->pending_skip : count;
    stream->pending_skip -= skipped;
    bytes += skipped;
    count -= skipped;
    size_t unread = stream->source.bytes_in_buffer;
    const JOCTET *start = stream->source.next_input_byte;
    if (unread + count > stream->capacity) {
        size_t capacity = stream->capacity * 2 > unread + count ? stream->capacity * 2 : unread + count;
        unsigned char *buffer = (unsigned char *)malloc(capacity > 0 ? capacity : 1);
        if (!buffer) return 0;
        if (unread > 0) memcpy(buffer, start, unread);
        free(stream->buffer);
        stream->buffer = buffer;
        stream->capacity = capacity;
    } else if (unread > 0 && start != stream->buffer) {
        memmove(stream->buffer, start, unread);
    }
    if (count > 0) memcpy(stream->buffer + unread, bytes, count);
    stream->source.next_input_byte = stream->buffer;
    stream->source.bytes_in_buffer = unread + count;
    if (complete) stream->complete = 1;
    return 1;
}

/// Reads the headers up to the first scan: 1 when read, 2 when more data is needed, 0 on a fatal error.
static inline __attribute__((noinline)) int webimage_jpeg_stream_read_header(webimage_jpeg_stream *stream) {
    if (setjmp(stream->decoder.jump)) return 0;
    int status = jpeg_read_header(&stream->decoder.info, TRUE);
    return status == JPEG_SUSPENDED ? 2 : status == JPEG_HEADER_OK ? 1 : 0;
}

static inline __attribute__((noinline)) int webimage_jpeg_stream_calc_output_dimensions(webimage_jpeg_stream *stream) {
    if (setjmp(stream->decoder.jump)) return 0;
    jpeg_calc_output_dimensions(&stream->decoder.info);
    return 1;
}

/// Starts decompressing (in buffered-image mode when `buffered`): 1 when started, 2 when more data
/// is needed, 0 on a fatal error.
static inline __attribute__((noinline)) int webimage_jpeg_stream_start(webimage_jpeg_stream *stream, int buffered) {
    if (setjmp(stream->decoder.jump)) return 0;
    stream->decoder.info.buffered_image = buffered ? TRUE : FALSE;
    return jpeg_start_decompress(&stream->decoder.info) ? 1 : 2;
}

/// Buffered-image mode: reads all the input there is into the coefficient buffer, counting
/// completed scans. 1 when the data ran out, 3 at the end of the image, 0 on a fatal error.
static inline __attribute__((noinline)) int webimage_jpeg_stream_consume(webimage_jpeg_stream *stream) {
    if (setjmp(stream->decoder.jump)) return 0;
    for (;;) {
        int status = jpeg_consume_input(&stream->decoder.info);
        switch (status) {
        case JPEG_SUSPENDED: return 1;
        case JPEG_REACHED_EOI:
            stream->scans_completed = stream->decoder.info.input_scan_number;
            return 3;
        case JPEG_SCAN_COMPLETED:
            stream->scans_completed = stream->decoder.info.input_scan_number;
            break;
        default: break;
        }
    }
}

/// Buffered-image mode: starts an output pass showing `scan` (finishing a previous pass that had
/// to wait for data first). 1 when started, 2 when the previous pass still needs data, 0 on a fatal error.
static inline __attribute__((noinline)) int webimage_jpeg_stream_start_output(webimage_jpeg_stream *stream, int scan) {
    if (setjmp(stream->decoder.jump)) return 0;
    if (stream->decoder.info.global_state == 208 /* DSTATE_BUFPOST */ && !jpeg_finish_output(&stream->decoder.info)) return 2;
    return jpeg_start_output(&stream->decoder.info, scan) ? 1 : 2;
}

/// Reads up to `count` output rows into `rows`: the number read (fewer when the data ran out),
/// or -1 on a fatal error.
static inline __attribute__((noinline)) int webimage_jpeg_stream_read_rows(webimage_jpeg_stream *stream, JSAMPARRAY rows,
                                                                          JDIMENSION count) {
    if (setjmp(stream->decoder.jump)) return -1;
    JDIMENSION read = 0;
    while (read < count) {
        JDIMENSION got = jpeg_read_scanlines(&stream->decoder.info, rows + read, count - read);
        if (got == 0) break;
        read += got;
    }
    return (int)read;
}

/// Buffered-image mode: ends an output pass. 1 when done, 2 when it waits for data (it is then
/// finished by the next webimage_jpeg_stream_start_output), 0 on a fatal error.
static inline __attribute__((noinline)) int webimage_jpeg_stream_finish_output(webimage_jpeg_stream *stream) {
    if (setjmp(stream->decoder.jump)) return 0;
    return jpeg_finish_output(&stream->decoder.info) ? 1 : 2;
}

#endif
