/*
 * gcc -O2 -Wall Benchmarks/raw/avif_encoders.c -o Benchmarks/.build-raw/avif_encoders \
 *     $(pkg-config --cflags --libs libheif libavif)
 *
 * The AV1 encoders Debian's libavif and libheif offer, each called the way an
 * image library would: 8-bit RGB in, one AVIF file out, one thread.
 *
 *   avif_encoders MODE INPUT.ppm QUALITY SPEED ITERATIONS OUTPUT.avif [KEY=VALUE ...]
 *
 * MODE
 *   libavif-aom, libavif-rav1e, libavif-svt
 *       libavif (Debian 0.11.1): avifImageRGBToYUV to YUV 4:2:0 (BT.601,
 *       full range, as Pillow and libheif write), then avifEncoderWrite with
 *       codecChoice, maxThreads = 1, speed = SPEED and minQuantizer =
 *       maxQuantizer = ((100 - QUALITY) * 63 + 50) / 100, the mapping libavif
 *       1.x applies to its `quality` field (Pillow's quality argument).
 *       KEY=VALUE pairs go to avifEncoderSetCodecSpecificOption.
 *   libheif-aom
 *       libheif (Debian 1.15.1) with its aom plugin, as Imago's AVIFEncoder
 *       before this harness: interleaved RGB image, quality = QUALITY,
 *       speed = SPEED, threads = 1; KEY=VALUE pairs go to
 *       heif_encoder_set_parameter.
 *   versions  prints libavif's codec versions and exits.
 *
 * The process is pinned to the CPU it starts on (sched_setaffinity), so an
 * encoder that starts threads of its own (SVT-AV1 does) cannot use a second
 * core; PIN=0 leaves it free. One warm-up run, then ITERATIONS timed runs; each run includes the
 * RGB to YUV conversion and the container. Prints one JSON line: median wall
 * ms, median CPU ms (user + system of the process, all threads) and bytes.
 */
#define _GNU_SOURCE
#include <avif/avif.h>
#include <libheif/heif.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

typedef struct {
    int width, height;
    uint8_t * pixels;
} RGB;

static RGB readPPM(const char * path)
{
    RGB rgb = { 0, 0, NULL };
    FILE * f = fopen(path, "rb");
    int maxValue = 0;
    if (!f || fscanf(f, "P6 %d %d %d", &rgb.width, &rgb.height, &maxValue) != 3 || maxValue != 255 || fgetc(f) == EOF) {
        fprintf(stderr, "cannot read %s as an 8-bit binary PPM\n", path);
        exit(1);
    }
    size_t size = (size_t)rgb.width * rgb.height * 3;
    rgb.pixels = malloc(size);
    if (fread(rgb.pixels, 1, size, f) != size) {
        fprintf(stderr, "short PPM %s\n", path);
        exit(1);
    }
    fclose(f);
    return rgb;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double cpuNow(void)
{
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return (usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e3;
}

static int compare(const void * a, const void * b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct {
    const char * mode;
    int quality, speed, optionCount;
    char ** options;
} Settings;

static size_t encodeLibavif(const RGB * source, const Settings * s, avifRWData * output)
{
    avifCodecChoice choice = !strcmp(s->mode, "libavif-aom") ? AVIF_CODEC_CHOICE_AOM
                             : !strcmp(s->mode, "libavif-rav1e") ? AVIF_CODEC_CHOICE_RAV1E
                                                                  : AVIF_CODEC_CHOICE_SVT;
    avifImage * image = avifImageCreate(source->width, source->height, 8, AVIF_PIXEL_FORMAT_YUV420);
    image->yuvRange = AVIF_RANGE_FULL;
    image->matrixCoefficients = AVIF_MATRIX_COEFFICIENTS_BT601;
    image->colorPrimaries = AVIF_COLOR_PRIMARIES_BT709;
    image->transferCharacteristics = AVIF_TRANSFER_CHARACTERISTICS_SRGB;
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, image);
    rgb.format = AVIF_RGB_FORMAT_RGB;
    rgb.pixels = source->pixels;
    rgb.rowBytes = source->width * 3;
    if (avifImageRGBToYUV(image, &rgb) != AVIF_RESULT_OK) {
        fprintf(stderr, "avifImageRGBToYUV failed\n");
        exit(1);
    }
    avifEncoder * encoder = avifEncoderCreate();
    encoder->codecChoice = choice;
    encoder->maxThreads = 1;
    encoder->speed = s->speed;
    int quantizer = ((100 - s->quality) * 63 + 50) / 100;
    encoder->minQuantizer = encoder->maxQuantizer = quantizer;
    for (int i = 0; i < s->optionCount; ++i) {
        char key[128];
        const char * equals = strchr(s->options[i], '=');
        snprintf(key, sizeof key, "%.*s", (int)(equals - s->options[i]), s->options[i]);
        avifEncoderSetCodecSpecificOption(encoder, key, equals + 1);
    }
    avifResult result = avifEncoderWrite(encoder, image, output);
    if (result != AVIF_RESULT_OK) {
        fprintf(stderr, "avifEncoderWrite: %s (%s)\n", avifResultToString(result), encoder->diag.error);
        exit(1);
    }
    avifEncoderDestroy(encoder);
    avifImageDestroy(image);
    return output->size;
}

static struct heif_error collect(struct heif_context * context, const void * data, size_t size, void * userdata)
{
    (void)context;
    avifRWData * output = userdata;
    avifRWDataSet(output, data, size);
    struct heif_error ok = { heif_error_Ok, heif_suberror_Unspecified, "" };
    return ok;
}

static void check(struct heif_error error)
{
    if (error.code != heif_error_Ok) {
        fprintf(stderr, "libheif: %s\n", error.message);
        exit(1);
    }
}

static size_t encodeLibheif(const RGB * source, const Settings * s, avifRWData * output)
{
    struct heif_context * context = heif_context_alloc();
    struct heif_encoder * encoder;
    check(heif_context_get_encoder_for_format(context, heif_compression_AV1, &encoder));
    check(heif_encoder_set_lossy_quality(encoder, s->quality));
    check(heif_encoder_set_parameter_integer(encoder, "speed", s->speed));
    check(heif_encoder_set_parameter_integer(encoder, "threads", 1));
    for (int i = 0; i < s->optionCount; ++i) {
        char key[128];
        const char * equals = strchr(s->options[i], '=');
        snprintf(key, sizeof key, "%.*s", (int)(equals - s->options[i]), s->options[i]);
        check(heif_encoder_set_parameter(encoder, key, equals + 1));
    }
    struct heif_image * image;
    check(heif_image_create(source->width, source->height, heif_colorspace_RGB, heif_chroma_interleaved_RGB, &image));
    check(heif_image_add_plane(image, heif_channel_interleaved, source->width, source->height, 8));
    int stride;
    uint8_t * plane = heif_image_get_plane(image, heif_channel_interleaved, &stride);
    for (int y = 0; y < source->height; ++y) {
        memcpy(plane + (size_t)y * stride, source->pixels + (size_t)y * source->width * 3, source->width * 3);
    }
    check(heif_context_encode_image(context, image, encoder, NULL, NULL));
    struct heif_writer writer = { 1, collect };
    check(heif_context_write(context, &writer, output));
    heif_image_release(image);
    heif_encoder_release(encoder);
    heif_context_free(context);
    return output->size;
}

int main(int argc, char ** argv)
{
    if (argc >= 2 && !strcmp(argv[1], "versions")) {
        char versions[256];
        avifCodecVersions(versions);
        printf("libavif %s: %s; libheif %s\n", avifVersion(), versions, heif_get_version());
        return 0;
    }
    if (argc < 7) {
        fprintf(stderr, "usage: %s MODE INPUT.ppm QUALITY SPEED ITERATIONS OUTPUT.avif [KEY=VALUE ...]\n", argv[0]);
        return 2;
    }
    const char * pin = getenv("PIN");
    if (!pin || strcmp(pin, "0")) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(sched_getcpu(), &one);
        sched_setaffinity(0, sizeof one, &one);
    }

    Settings s = { argv[1], atoi(argv[3]), atoi(argv[4]), argc - 7, argv + 7 };
    int iterations = atoi(argv[5]);
    RGB source = readPPM(argv[2]);
    int libheif = !strcmp(s.mode, "libheif-aom");
    if (!libheif && strcmp(s.mode, "libavif-aom") && strcmp(s.mode, "libavif-rav1e") && strcmp(s.mode, "libavif-svt")) {
        fprintf(stderr, "unknown mode %s\n", s.mode);
        return 2;
    }
    double * wall = calloc(iterations > 0 ? iterations : 1, sizeof(double));
    double * cpu = calloc(iterations > 0 ? iterations : 1, sizeof(double));
    size_t bytes = 0;
    for (int i = -1; i < iterations; ++i) {
        avifRWData output = AVIF_DATA_EMPTY;
        double start = now(), cpuStart = cpuNow();
        bytes = libheif ? encodeLibheif(&source, &s, &output) : encodeLibavif(&source, &s, &output);
        double elapsed = now() - start, cpuElapsed = cpuNow() - cpuStart;
        if (i >= 0) {
            wall[i] = elapsed;
            cpu[i] = cpuElapsed;
        } else {
            FILE * f = fopen(argv[6], "wb");
            if (!f || fwrite(output.data, 1, output.size, f) != output.size) {
                fprintf(stderr, "cannot write %s\n", argv[6]);
                return 1;
            }
            fclose(f);
        }
        avifRWDataFree(&output);
    }
    qsort(wall, iterations, sizeof(double), compare);
    qsort(cpu, iterations, sizeof(double), compare);
    if (iterations < 1) {   // the file only
        wall[0] = cpu[0] = 0;
    }
    printf("{\"mode\": \"%s\", \"quality\": %d, \"speed\": %d, \"median_ms\": %.2f, \"cpu_ms\": %.2f, \"bytes\": %zu}\n",
           s.mode, s.quality, s.speed, wall[iterations / 2], cpu[iterations / 2], bytes);
    return 0;
}
