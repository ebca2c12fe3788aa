// libwebp with its demux (animation, alpha) and mux (animated encoding) halves (Debian: libwebp-dev).
#include <webp/decode.h>
#include <webp/encode.h>
#include <webp/demux.h>
#include <webp/mux.h>
