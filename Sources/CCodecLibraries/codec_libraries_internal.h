// What the generated forwarders (forwarders_*.c) share with the loader.
#ifndef WEBIMAGE_CODEC_LIBRARIES_INTERNAL_H
#define WEBIMAGE_CODEC_LIBRARIES_INTERNAL_H
#include "codec_libraries.h"

/// The names each forwarder file resolves, in the order of its indices; NULL-terminated.
extern const char *const webimage_heif_symbols[];
extern const char *const webimage_avif_symbols[];
extern const char *const webimage_jxl_symbols[];
extern const char *const webimage_jxl_threads_symbols[];

/// The address of function `index` of `library`. Callers (WebImage's coders) load the library
/// with webimage_codec_library_load() first and never call into it when that said 0; reaching
/// here without that is a programming error, reported and aborted rather than a jump to NULL.
void *webimage_codec_symbol(webimage_codec_library library, int index);

#endif
