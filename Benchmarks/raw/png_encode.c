// libspng's PNG encoder called directly, for Benchmarks/compare-png: the
// source PNG is decoded once, then encoded ITERATIONS times into libspng's
// own buffer at zlib LEVEL with libspng's default filter choice (every
// filter, chosen per row). Prints {"median_ms": ..., "bytes": ...}.
//
//   png_encode FILE.png LEVEL ITERATIONS
#include <spng.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: png_encode FILE.png LEVEL ITERATIONS\n"); return 2; }
    FILE *file = fopen(argv[1], "rb");
    if (!file) { perror(argv[1]); return 1; }
    fseek(file, 0, SEEK_END);
    long size = ftell(file);
    fseek(file, 0, SEEK_SET);
    unsigned char *png = malloc(size);
    if (fread(png, 1, size, file) != (size_t)size) return 1;
    fclose(file);
    spng_ctx *decoder = spng_ctx_new(0);
    spng_set_png_buffer(decoder, png, size);
    struct spng_ihdr header;
    if (spng_get_ihdr(decoder, &header)) return 1;
    int alpha = header.color_type == SPNG_COLOR_TYPE_TRUECOLOR_ALPHA || header.color_type == SPNG_COLOR_TYPE_GRAYSCALE_ALPHA;
    int format = alpha ? SPNG_FMT_RGBA8 : SPNG_FMT_RGB8;
    size_t length;
    spng_decoded_image_size(decoder, format, &length);
    unsigned char *pixels = malloc(length);
    if (spng_decode_image(decoder, pixels, length, format, 0)) return 1;
    spng_ctx_free(decoder);

    int level = atoi(argv[2]), iterations = atoi(argv[3]);
    double *times = malloc(sizeof(double) * iterations);
    size_t bytes = 0;
    for (int run = -1; run < iterations; run++) {
        double start = now_ms();
        spng_ctx *encoder = spng_ctx_new(SPNG_CTX_ENCODER);
        spng_set_option(encoder, SPNG_ENCODE_TO_BUFFER, 1);
        spng_set_option(encoder, SPNG_IMG_COMPRESSION_LEVEL, level);
        struct spng_ihdr out = header;
        out.bit_depth = 8;
        out.color_type = alpha ? SPNG_COLOR_TYPE_TRUECOLOR_ALPHA : SPNG_COLOR_TYPE_TRUECOLOR;
        out.interlace_method = 0;
        spng_set_ihdr(encoder, &out);
        if (spng_encode_image(encoder, pixels, length, SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE)) return 1;
        int error;
        void *buffer = spng_get_png_buffer(encoder, &bytes, &error);
        free(buffer);
        spng_ctx_free(encoder);
        if (run >= 0) times[run] = now_ms() - start;
    }
    qsort(times, iterations, sizeof(double), compare);
    printf("{\"median_ms\": %.3f, \"bytes\": %zu}\n", times[iterations / 2], bytes);
    return 0;
}
