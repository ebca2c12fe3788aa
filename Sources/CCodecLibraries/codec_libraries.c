#include "codec_libraries.h"

#if defined(__linux__)
#include "codec_libraries_internal.h"
#include <avif/avif.h>
#include <dlfcn.h>
#include <jxl/decode.h>
#include <libheif/heif.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LIBRARY_COUNT = 4, MAX_SYMBOLS = 64, MAX_CANDIDATES = 16 };

typedef struct {
    const char *short_name;                     // as WEBIMAGE_DISABLED_CODECS names it
    const char *const *symbols;
    pthread_once_t once;
    int loaded;
    void *functions[MAX_SYMBOLS];
    char error[256];
} library_state;

static library_state libraries[LIBRARY_COUNT] = {
    [WEBIMAGE_CODEC_HEIF] = {.short_name = "heif", .symbols = webimage_heif_symbols, .once = PTHREAD_ONCE_INIT},
    [WEBIMAGE_CODEC_AVIF] = {.short_name = "avif", .symbols = webimage_avif_symbols, .once = PTHREAD_ONCE_INIT},
    [WEBIMAGE_CODEC_JXL] = {.short_name = "jxl", .symbols = webimage_jxl_symbols, .once = PTHREAD_ONCE_INIT},
    [WEBIMAGE_CODEC_JXL_THREADS] = {.short_name = "jxl", .symbols = webimage_jxl_threads_symbols, .once = PTHREAD_ONCE_INIT},
};

/// The file names to try, best first: the development symlink (the very library the build
/// linked against, when its -dev package is installed), then the sonames of the versions whose
/// headers match the build's.
static int candidates(webimage_codec_library library, char names[MAX_CANDIDATES][64]) {
    int count = 0;
    switch (library) {
    case WEBIMAGE_CODEC_HEIF:
        snprintf(names[count++], 64, "libheif.so.%d", LIBHEIF_NUMERIC_VERSION >> 24);
        snprintf(names[count++], 64, "libheif.so");
        break;
    case WEBIMAGE_CODEC_AVIF:
        // libavif's soname counts ABI breaks, not versions; the version check below picks the one.
        snprintf(names[count++], 64, "libavif.so");
        for (int soname = 20; soname >= 9 && count < MAX_CANDIDATES; soname--) snprintf(names[count++], 64, "libavif.so.%d", soname);
        break;
    case WEBIMAGE_CODEC_JXL:
    case WEBIMAGE_CODEC_JXL_THREADS: {
        const char *base = library == WEBIMAGE_CODEC_JXL ? "libjxl" : "libjxl_threads";
        if (JPEGXL_MAJOR_VERSION == 0) snprintf(names[count++], 64, "%s.so.0.%d", base, JPEGXL_MINOR_VERSION);
        else snprintf(names[count++], 64, "%s.so.%d", base, JPEGXL_MAJOR_VERSION);
        snprintf(names[count++], 64, "%s.so", base);
        break;
    }
    }
    return count;
}

/// Whether the opened library is the version WebImage's declarations (and its reads of avifDecoder
/// and avifImage fields) were compiled for: same major and minor.
static int matches_build(webimage_codec_library library, void *handle) {
    switch (library) {
    case WEBIMAGE_CODEC_HEIF: {
        uint32_t (*version)(void) = (uint32_t (*)(void))dlsym(handle, "heif_get_version_number");
        // libheif keeps its ABI within a major version (its structs carry their own versions).
        return version && (version() >> 24) == (LIBHEIF_NUMERIC_VERSION >> 24) &&
               ((version() >> 16) & 0xff) >= ((LIBHEIF_NUMERIC_VERSION >> 16) & 0xff);
    }
    case WEBIMAGE_CODEC_AVIF: {
        const char *(*version)(void) = (const char *(*)(void))dlsym(handle, "avifVersion");
        int major = -1, minor = -1;
        return version && sscanf(version(), "%d.%d", &major, &minor) == 2 && major == AVIF_VERSION_MAJOR &&
               minor == AVIF_VERSION_MINOR;
    }
    case WEBIMAGE_CODEC_JXL: {
        uint32_t (*version)(void) = (uint32_t (*)(void))dlsym(handle, "JxlDecoderVersion");
        return version && version() / 1000 == (JPEGXL_MAJOR_VERSION * 1000000 + JPEGXL_MINOR_VERSION * 1000) / 1000;
    }
    case WEBIMAGE_CODEC_JXL_THREADS:
        return 1;  // versioned with libjxl: its soname carries the same major and minor
    }
    return 0;
}

/// Whether WEBIMAGE_DISABLED_CODECS names the library (a comma-separated list; spaces ignored).
static int disabled(const char *short_name) {
    const char *list = getenv("WEBIMAGE_DISABLED_CODECS");
    size_t length = strlen(short_name);
    for (const char *cursor = list; cursor && *cursor;) {
        while (*cursor == ' ') cursor++;
        const char *end = strchr(cursor, ',');
        size_t item = end ? (size_t)(end - cursor) : strlen(cursor);
        while (item > 0 && cursor[item - 1] == ' ') item--;
        if (item == length && strncmp(cursor, short_name, length) == 0) return 1;
        cursor = end ? end + 1 : NULL;
    }
    return 0;
}

static void load(webimage_codec_library library) {
    library_state *state = &libraries[library];
    if (disabled(state->short_name)) {
        snprintf(state->error, sizeof state->error, "disabled by WEBIMAGE_DISABLED_CODECS");
        return;
    }
    char names[MAX_CANDIDATES][64];
    int count = candidates(library, names);
    void *handle = NULL;
    const char *handle_name = NULL;
    state->error[0] = 0;
    for (int candidate = 0; candidate < count && !handle; candidate++) {
        void *opened = dlopen(names[candidate], RTLD_NOW | RTLD_LOCAL);
        if (!opened) {
            const char *why = dlerror();
            if (!state->error[0]) snprintf(state->error, sizeof state->error, "%s", why ? why : names[candidate]);
            continue;
        }
        if (matches_build(library, opened)) {
            handle = opened;
            handle_name = names[candidate];
        } else {
            snprintf(state->error, sizeof state->error, "%s is not the version WebImage was built with", names[candidate]);
            dlclose(opened);
        }
    }
    if (!handle) return;
    for (int index = 0; state->symbols[index]; index++) {
        void *function = index < MAX_SYMBOLS ? dlsym(handle, state->symbols[index]) : NULL;
        if (!function) {
            snprintf(state->error, sizeof state->error, "%s has no %s", handle_name, state->symbols[index]);
            dlclose(handle);  // nothing was called through it yet
            return;
        }
        state->functions[index] = function;
    }
    state->error[0] = 0;
    state->loaded = 1;  // published to other threads by pthread_once's return
}

static void load_heif(void) { load(WEBIMAGE_CODEC_HEIF); }
static void load_avif(void) { load(WEBIMAGE_CODEC_AVIF); }
static void load_jxl(void) { load(WEBIMAGE_CODEC_JXL); }
static void load_jxl_threads(void) { load(WEBIMAGE_CODEC_JXL_THREADS); }
static void (*const loaders[LIBRARY_COUNT])(void) = {load_heif, load_avif, load_jxl, load_jxl_threads};

int webimage_codec_library_load(webimage_codec_library library) {
    if ((unsigned)library >= LIBRARY_COUNT) return 0;
    pthread_once(&libraries[library].once, loaders[library]);
    return libraries[library].loaded;
}

const char *webimage_codec_library_error(webimage_codec_library library) {
    if ((unsigned)library >= LIBRARY_COUNT) return "no such library";
    return libraries[library].error;
}

void *webimage_codec_symbol(webimage_codec_library library, int index) {
    if (!webimage_codec_library_load(library)) {
        fprintf(stderr, "webimage: %s called before its library was loaded (%s)\n", libraries[library].symbols[index],
                libraries[library].error);
        abort();
    }
    return libraries[library].functions[index];
}

#else

int webimage_codec_library_load(webimage_codec_library library) { (void)library; return 1; }
const char *webimage_codec_library_error(webimage_codec_library library) { (void)library; return ""; }

#endif
