// libheif, libavif and libjxl, opened on first use instead of at process start.
//
// Linked directly, the three (and what they pull in: libde265, x265, aom, dav1d, rav1e, SVT-AV1,
// highway...) are 40 shared libraries whose loading and static initializers took 20 ms of every
// start of the `webimage` command, before any image was asked for. On Linux this target defines
// each function WebImage calls (forwarders_*.c) as a call through a table filled by dlopen/dlsym
// the first time a coder asks for its library; elsewhere the libraries are linked as usual and
// webimage_codec_library_load() just says yes.
#ifndef WEBIMAGE_CODEC_LIBRARIES_H
#define WEBIMAGE_CODEC_LIBRARIES_H

typedef enum {
    WEBIMAGE_CODEC_HEIF = 0,
    WEBIMAGE_CODEC_AVIF = 1,
    WEBIMAGE_CODEC_JXL = 2,
    WEBIMAGE_CODEC_JXL_THREADS = 3,
} webimage_codec_library;

/// Opens `library` (once per process; later calls return the first answer) and resolves every
/// function WebImage calls in it. 1 when they can all be called, 0 when not: not installed, a
/// version other than the one WebImage was built against, a function missing, or named in the
/// WEBIMAGE_DISABLED_CODECS environment variable (a comma-separated list of heif, avif, jxl),
/// read at the first call. Thread-safe.
int webimage_codec_library_load(webimage_codec_library library);

/// Why webimage_codec_library_load(library) returned 0 (empty when it returned 1 or was not called).
const char *webimage_codec_library_error(webimage_codec_library library);

#endif
