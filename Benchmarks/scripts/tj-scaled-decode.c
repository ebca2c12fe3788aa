/* TurboJPEG's own scaled decode, timed like `webimage bench-decode`: each decode reads the header
 * (tjDecompressHeader3), allocates the scaled RGBA bitmap and decodes into it with tjDecompress2
 * at scaling factor 1/DENOM, on one thread (TurboJPEG never starts one). Prints one JSON line:
 * {"width":..,"height":..,"msPerDecode":..}.
 * Build: cc -O2 -o tj-scaled-decode tj-scaled-decode.c -lturbojpeg
 * Usage: tj-scaled-decode FILE.jpg DENOM ITERATIONS */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <turbojpeg.h>

static int decode_once(tjhandle handle, const unsigned char *jpeg, unsigned long size, int denom,
                       int *out_width, int *out_height) {
    int width, height, subsampling, colorspace;
    if (tjDecompressHeader3(handle, jpeg, size, &width, &height, &subsampling, &colorspace) != 0) return -1;
    tjscalingfactor factor = {1, denom};
    int scaled_width = TJSCALED(width, factor), scaled_height = TJSCALED(height, factor);
    unsigned char *pixels = malloc((size_t)scaled_width * scaled_height * 4);
    if (!pixels) return -1;
    int status = tjDecompress2(handle, jpeg, size, pixels, scaled_width, 0, scaled_height, TJPF_RGBA, 0);
    free(pixels);
    if (status != 0 && tjGetErrorCode(handle) != TJERR_WARNING) return -1;
    *out_width = scaled_width;
    *out_height = scaled_height;
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: %s FILE.jpg DENOM ITERATIONS\n", argv[0]); return 2; }
    FILE *file = fopen(argv[1], "rb");
    if (!file) { perror(argv[1]); return 1; }
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    unsigned char *jpeg = malloc(size);
    if (!jpeg || fread(jpeg, 1, size, file) != (size_t)size) { fprintf(stderr, "cannot read %s\n", argv[1]); return 1; }
    fclose(file);
    int denom = atoi(argv[2]), iterations = atoi(argv[3]);
    tjhandle handle = tjInitDecompress();
    int width = 0, height = 0;
    /* One untimed decode first, as bench-decode does. */
    if (decode_once(handle, jpeg, size, denom, &width, &height) != 0) {
        fprintf(stderr, "%s\n", tjGetErrorStr2(handle));
        return 1;
    }
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int i = 0; i < iterations; i++) {
        if (decode_once(handle, jpeg, size, denom, &width, &height) != 0) { fprintf(stderr, "%s\n", tjGetErrorStr2(handle)); return 1; }
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    double seconds = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
    printf("{\"width\":%d,\"height\":%d,\"msPerDecode\":%.3f}\n", width, height,
           seconds / (iterations > 0 ? iterations : 1) * 1000);
    tjDestroy(handle);
    free(jpeg);
    return 0;
}
