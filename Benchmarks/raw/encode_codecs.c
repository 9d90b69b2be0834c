/*
 * gcc -O2 -Wall Benchmarks/raw/encode_codecs.c -o Benchmarks/.build-raw/encode_codecs -lturbojpeg -lwebp
 *
 * Debian's JPEG and WebP encoders on their own, called as Imago's JPEGEncoder
 * and WebPEncoder call them, to split the gap between Imago and Pillow into
 * Imago's own overhead and the libraries' versions.
 *
 *   encode_codecs MODE INPUT.ppm QUALITY ITERATIONS
 *
 * MODE
 *   jpeg        tjCompress2, RGB, 4:2:0, no flags (Huffman tables not
 *               optimised, the accurate integer DCT), TurboJPEG allocates the
 *               output: JPEGEncoder's call.
 *   jpeg-rgbx   the same from 4-byte RGBX pixels (as Pillow hands libjpeg).
 *   webp        WebPEncodeRGB (method 4, one thread): WebPEncoder's call.
 *   webp-anim   WebPAnimEncoder with one RGBA frame, method 4, then
 *               WebPAnimEncoderAssemble: what Pillow 13's WebP plugin does
 *               for a still image.
 *
 * One warm-up run, then ITERATIONS timed runs; prints one JSON line with the
 * median and minimum wall ms, the median CPU ms of the thread (what a busy
 * machine disturbs least) and the size of the output.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <turbojpeg.h>
#include <webp/encode.h>
#include <webp/mux.h>

static int width, height;
static uint8_t * rgb;
static uint8_t * rgbx;

static double now(clockid_t clock)
{
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int compare(const void * a, const void * b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static size_t encode(const char * mode, int quality)
{
    if (!strncmp(mode, "jpeg", 4)) {
        int four = !strcmp(mode, "jpeg-rgbx");
        tjhandle handle = tjInitCompress();
        unsigned char * output = NULL;
        unsigned long length = 0;
        if (tjCompress2(handle, four ? rgbx : rgb, width, width * (four ? 4 : 3), height, four ? TJPF_RGBX : TJPF_RGB, &output,
                        &length, TJSAMP_420, quality, 0) != 0) {
            fprintf(stderr, "tjCompress2: %s\n", tjGetErrorStr2(handle));
            exit(1);
        }
        tjFree(output);
        tjDestroy(handle);
        return length;
    }
    if (!strcmp(mode, "webp")) {
        uint8_t * output = NULL;
        size_t length = WebPEncodeRGB(rgb, width, height, width * 3, (float)quality, &output);
        WebPFree(output);
        return length;
    }
    if (!strcmp(mode, "webp-anim")) {
        WebPAnimEncoderOptions options;
        WebPAnimEncoderOptionsInit(&options);
        WebPAnimEncoder * encoder = WebPAnimEncoderNew(width, height, &options);
        WebPConfig config;
        WebPConfigInit(&config);
        config.quality = (float)quality;
        config.method = 4;
        WebPPicture picture;
        WebPPictureInit(&picture);
        picture.width = width;
        picture.height = height;
        picture.use_argb = 1;
        WebPPictureImportRGBX(&picture, rgbx, width * 4);
        if (!WebPAnimEncoderAdd(encoder, &picture, 0, &config) || !WebPAnimEncoderAdd(encoder, NULL, 0, NULL)) {
            fprintf(stderr, "WebPAnimEncoderAdd failed\n");
            exit(1);
        }
        WebPData data;
        WebPDataInit(&data);
        WebPAnimEncoderAssemble(encoder, &data);
        size_t length = data.size;
        WebPDataClear(&data);
        WebPPictureFree(&picture);
        WebPAnimEncoderDelete(encoder);
        return length;
    }
    fprintf(stderr, "unknown mode %s\n", mode);
    exit(2);
}

int main(int argc, char ** argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: %s MODE INPUT.ppm QUALITY ITERATIONS\n", argv[0]);
        return 2;
    }
    FILE * f = fopen(argv[2], "rb");
    int maxValue = 0;
    if (!f || fscanf(f, "P6 %d %d %d", &width, &height, &maxValue) != 3 || maxValue != 255 || fgetc(f) == EOF) {
        fprintf(stderr, "cannot read %s as an 8-bit binary PPM\n", argv[2]);
        return 1;
    }
    size_t pixels = (size_t)width * height;
    rgb = malloc(pixels * 3);
    rgbx = malloc(pixels * 4);
    if (fread(rgb, 3, pixels, f) != pixels) {
        fprintf(stderr, "short PPM\n");
        return 1;
    }
    for (size_t i = 0; i < pixels; ++i) {
        memcpy(rgbx + i * 4, rgb + i * 3, 3);
        rgbx[i * 4 + 3] = 255;
    }
    int quality = atoi(argv[3]), iterations = atoi(argv[4]);
    double * times = calloc(iterations > 0 ? iterations : 1, sizeof(double));
    double * cpu = calloc(iterations > 0 ? iterations : 1, sizeof(double));
    size_t bytes = encode(argv[1], quality);
    for (int i = 0; i < iterations; ++i) {
        double start = now(CLOCK_MONOTONIC), cpuStart = now(CLOCK_THREAD_CPUTIME_ID);
        encode(argv[1], quality);
        times[i] = now(CLOCK_MONOTONIC) - start;
        cpu[i] = now(CLOCK_THREAD_CPUTIME_ID) - cpuStart;
    }
    qsort(times, iterations, sizeof(double), compare);
    qsort(cpu, iterations, sizeof(double), compare);
    printf("{\"mode\": \"%s\", \"median_ms\": %.3f, \"min_ms\": %.3f, \"cpu_ms\": %.3f, \"bytes\": %zu}\n", argv[1],
           times[iterations / 2], times[0], cpu[iterations / 2], bytes);
    return 0;
}
