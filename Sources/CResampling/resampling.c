#include "resampling.h"

#include <string.h>

// Products and sums stay separate operations (no fused multiply-add, which AVX2 machines have
// and the baseline lacks), so both builds round alike.
#pragma clang fp contract(off)
// The 8-float vectors only pass between always-inline helpers, never across a call, so the
// baseline build's calling convention for them never comes into play.
#pragma clang diagnostic ignored "-Wpsabi"

typedef float f4 __attribute__((ext_vector_type(4)));
typedef float f8 __attribute__((ext_vector_type(8)));
typedef int32_t i4 __attribute__((ext_vector_type(4)));
typedef int32_t i8 __attribute__((ext_vector_type(8)));
typedef uint8_t b4 __attribute__((ext_vector_type(4)));
typedef uint8_t b8 __attribute__((ext_vector_type(8)));

#define ALWAYS_INLINE static inline __attribute__((always_inline))

ALWAYS_INLINE f4 load4(const float *p) { f4 v; memcpy(&v, p, sizeof v); return v; }
ALWAYS_INLINE f8 load8(const float *p) { f8 v; memcpy(&v, p, sizeof v); return v; }
ALWAYS_INLINE void store4(float *p, f4 v) { memcpy(p, &v, sizeof v); }
ALWAYS_INLINE void store8(float *p, f8 v) { memcpy(p, &v, sizeof v); }

// Adding 1.5 x 2^23 leaves a float within +-2^22 of it with no fraction: its low bits are the
// value rounded to nearest even, offset. Sums here stay far inside that range.
#define MAGIC 12582912.0f
#define MAGIC_BITS 0x4B400000

ALWAYS_INLINE i4 rounded4(f4 v) {
    i4 r = (i4)(v + MAGIC) - MAGIC_BITS;
    return __builtin_elementwise_min(__builtin_elementwise_max(r, (i4)0), (i4)255);
}

ALWAYS_INLINE i8 rounded8(f8 v) {
    i8 r = (i8)(v + MAGIC) - MAGIC_BITS;
    return __builtin_elementwise_min(__builtin_elementwise_max(r, (i8)0), (i8)255);
}

// A premultiplied sum as a straight-alpha pixel; under half a unit of alpha is transparent black.
ALWAYS_INLINE void store_straight(f4 sum, uint8_t *out) {
    float alpha = sum.w < 0 ? 0 : (sum.w > 255 ? 255 : sum.w);
    if (!(alpha >= 0.5f)) { memset(out, 0, 4); return; }
    float unpremultiply = 255 / alpha;
    b4 bytes = __builtin_convertvector(rounded4(sum * (f4){unpremultiply, unpremultiply, unpremultiply, 1}), b4);
    memcpy(out, &bytes, 4);
}

ALWAYS_INLINE void store_opaque(f4 sum, uint8_t *out) {
    i4 r = rounded4(sum);
    r.w = 255;
    b4 bytes = __builtin_convertvector(r, b4);
    memcpy(out, &bytes, 4);
}

ALWAYS_INLINE void store_opaque_pair(f8 sums, uint8_t *out) {
    i8 r = rounded8(sums);
    r.s3 = 255;
    r.s7 = 255;
    b8 bytes = __builtin_convertvector(r, b8);
    memcpy(out, &bytes, 8);
}

// The row as floats, premultiplied unless every alpha is 255 (then multiplying by
// 255 * (1/255f), which is exactly 1, changes nothing and is skipped).
ALWAYS_INLINE int convert_row(const uint8_t *source, intptr_t count, float *out) {
    uint8_t alphas = 255;
    for (intptr_t x = 0; x < count; x++) alphas &= source[x * 4 + 3];
    if (alphas == 255) {
        intptr_t x = 0;
        for (; x + 2 <= count; x += 2) {
            b8 bytes;
            memcpy(&bytes, source + x * 4, sizeof bytes);
            store8(out + x * 4, __builtin_convertvector(bytes, f8));
        }
        if (x < count) {
            b4 bytes;
            memcpy(&bytes, source + x * 4, sizeof bytes);
            store4(out + x * 4, __builtin_convertvector(bytes, f4));
        }
        return 1;
    }
    for (intptr_t x = 0; x < count; x++) {
        b4 bytes;
        memcpy(&bytes, source + x * 4, sizeof bytes);
        f4 pixel = __builtin_convertvector(bytes, f4);
        float alpha = pixel.w * (1 / 255.0f);
        store4(out + x * 4, pixel * (f4){alpha, alpha, alpha, 1});
    }
    return 0;
}

// Two taps at a time: one 8-float load holds two neighbouring pixels, weighed by their two
// weights; the halves are added at the end, then an odd last tap.
ALWAYS_INLINE int resample_row(const uint8_t *source, intptr_t source_width, const intptr_t *starts,
                               const intptr_t *counts, const float *weights, intptr_t stride,
                               intptr_t width, float *scratch, float *out) {
    int opaque = convert_row(source, source_width, scratch);
    for (intptr_t x = 0; x < width; x++) {
        const float *taps = scratch + starts[x] * 4;
        const float *w = weights + x * stride;
        intptr_t count = counts[x], t = 0;
        f8 pairs = 0;
        for (; t + 2 <= count; t += 2) {
            f8 tapWeights = {w[t], w[t], w[t], w[t], w[t + 1], w[t + 1], w[t + 1], w[t + 1]};
            pairs += load8(taps + t * 4) * tapWeights;
        }
        f4 sum = pairs.lo + pairs.hi;
        if (t < count) sum += load4(taps + t * 4) * w[t];
        store4(out + x * 4, sum);
    }
    return opaque;
}

// Eight pixels at a time, their sums in registers through every tap (in the taps' order, as
// the one-pixel tail sums them), then written out at once.
ALWAYS_INLINE void resample_column(const float *first, intptr_t width, intptr_t taps, const float *weights,
                                   uint8_t *out, int opaque) {
    const intptr_t rowFloats = width * 4;
    intptr_t x = 0;
    for (; x + 8 <= width; x += 8) {
        f8 s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        const float *source = first + x * 4;
        for (intptr_t t = 0; t < taps; t++) {
            f8 w = weights[t];
            s0 += load8(source) * w;
            s1 += load8(source + 8) * w;
            s2 += load8(source + 16) * w;
            s3 += load8(source + 24) * w;
            source += rowFloats;
        }
        uint8_t *pixel = out + x * 4;
        if (opaque) {
            store_opaque_pair(s0, pixel);
            store_opaque_pair(s1, pixel + 8);
            store_opaque_pair(s2, pixel + 16);
            store_opaque_pair(s3, pixel + 24);
        } else {
            store_straight(s0.lo, pixel);
            store_straight(s0.hi, pixel + 4);
            store_straight(s1.lo, pixel + 8);
            store_straight(s1.hi, pixel + 12);
            store_straight(s2.lo, pixel + 16);
            store_straight(s2.hi, pixel + 20);
            store_straight(s3.lo, pixel + 24);
            store_straight(s3.hi, pixel + 28);
        }
    }
    for (; x < width; x++) {
        f4 sum = 0;
        const float *source = first + x * 4;
        for (intptr_t t = 0; t < taps; t++) {
            sum += load4(source) * weights[t];
            source += rowFloats;
        }
        if (opaque) store_opaque(sum, out + x * 4); else store_straight(sum, out + x * 4);
    }
}

static int row_baseline(const uint8_t *source, intptr_t source_width, const intptr_t *starts, const intptr_t *counts,
                        const float *weights, intptr_t stride, intptr_t width, float *scratch, float *out) {
    return resample_row(source, source_width, starts, counts, weights, stride, width, scratch, out);
}

static void column_baseline(const float *first, intptr_t width, intptr_t taps, const float *weights, uint8_t *out, int opaque) {
    resample_column(first, width, taps, weights, out, opaque);
}

#if defined(__x86_64__)
#define HAS_AVX2_BUILD 1
__attribute__((target("avx2")))
static int row_avx2(const uint8_t *source, intptr_t source_width, const intptr_t *starts, const intptr_t *counts,
                    const float *weights, intptr_t stride, intptr_t width, float *scratch, float *out) {
    return resample_row(source, source_width, starts, counts, weights, stride, width, scratch, out);
}

__attribute__((target("avx2")))
static void column_avx2(const float *first, intptr_t width, intptr_t taps, const float *weights, uint8_t *out, int opaque) {
    resample_column(first, width, taps, weights, out, opaque);
}
#endif

webimage_resampling_variant webimage_resampling_best_variant(void) {
#if HAS_AVX2_BUILD
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) return WEBIMAGE_RESAMPLING_AVX2;
#endif
    return WEBIMAGE_RESAMPLING_BASELINE;
}

int webimage_resample_row(const uint8_t *source, intptr_t source_width, const intptr_t *starts, const intptr_t *counts,
                          const float *weights, intptr_t stride, intptr_t width, float *scratch, float *out,
                          webimage_resampling_variant variant) {
#if HAS_AVX2_BUILD
    if (variant == WEBIMAGE_RESAMPLING_AVX2)
        return row_avx2(source, source_width, starts, counts, weights, stride, width, scratch, out);
#endif
    return row_baseline(source, source_width, starts, counts, weights, stride, width, scratch, out);
}

void webimage_resample_column(const float *first, intptr_t width, intptr_t taps, const float *weights,
                              uint8_t *out, int opaque, webimage_resampling_variant variant) {
#if HAS_AVX2_BUILD
    if (variant == WEBIMAGE_RESAMPLING_AVX2) {
        column_avx2(first, width, taps, weights, out, opaque);
        return;
    }
#endif
    column_baseline(first, width, taps, weights, out, opaque);
}
