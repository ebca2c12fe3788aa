// The resampler's two inner passes (Resampler.swift holds the geometry, the threads and the
// checks). They are C so that one source compiles twice: for the baseline every x86-64 has
// (SSE2) and for AVX2, picked at run time. Swift has no per-function target features, and
// compiling the library for AVX2 would drop the machines without it. Both builds run the same
// vector operations in the same order with no fused multiply-add, so their bytes are equal
// (ResamplingKernelTests compares them).
#ifndef WEBIMAGE_RESAMPLING_H
#define WEBIMAGE_RESAMPLING_H

#include <stdint.h>

/// Which build of the kernels to run.
typedef enum {
    WEBIMAGE_RESAMPLING_BASELINE = 0,
    WEBIMAGE_RESAMPLING_AVX2 = 1,
} webimage_resampling_variant;

/// The fastest variant this CPU runs (AVX2 where the CPU and the OS support it).
webimage_resampling_variant webimage_resampling_best_variant(void);

/// One source row of `source_width` RGBA8 pixels, shrunk (or stretched) horizontally to `width`
/// premultiplied float pixels at `out` (4 floats each). Target pixel x is the sum over
/// counts[x] taps of source pixel starts[x] + t times weights[x * stride + t].
/// `scratch` holds source_width * 4 floats. Returns 1 when every pixel of the row is opaque.
/// The caller guarantees starts[x] + counts[x] <= source_width.
int webimage_resample_row(const uint8_t *source, intptr_t source_width, const intptr_t *starts,
                          const intptr_t *counts, const float *weights, intptr_t stride,
                          intptr_t width, float *scratch, float *out,
                          webimage_resampling_variant variant);

/// One target row: `width` pixels summed over `taps` rows of `width` float pixels, the first at
/// `first`, each next `width` pixels on, weighted by `weights`; written to `out` as RGBA8
/// (straight alpha, rounded to nearest even, clamped). With `opaque`, every source row was
/// opaque: the sums are already straight colours and alpha is 255.
void webimage_resample_column(const float *first, intptr_t width, intptr_t taps, const float *weights,
                              uint8_t *out, int opaque, webimage_resampling_variant variant);

#endif
