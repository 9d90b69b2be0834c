/*
 * The raw C libraries on their own, for comparison with Imago's decoders:
 * the same calls, the same output formats, no Swift in between.
 *
 *   raw_codecs jpeg|jpeg-thumb|png|webp|gif|gif-rgba FILE ITERATIONS
 *
 * Prints {"median_ms": M, "min_ms": N} after one warm-up run.
 */
#include <gif_lib.h>
#include <spng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <turbojpeg.h>
#include <webp/decode.h>

static unsigned char *input;
static size_t input_size;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void fail(const char *what) {
    fprintf(stderr, "raw_codecs: %s\n", what);
    exit(1);
}

/* Full decode to RGB (or gray), as Imago does. */
static void jpeg(int scale_to_thumbnail) {
    tjhandle handle = tjInitDecompress();
    int width, height, subsampling, colorspace;
    if (tjDecompressHeader3(handle, input, input_size, &width, &height, &subsampling, &colorspace)) fail(tjGetErrorStr2(handle));
    if (scale_to_thumbnail) { /* the smallest scale whose longer side covers 256 */
        int count; tjscalingfactor *factors = tjGetScalingFactors(&count);
        int best_w = width, best_h = height;
        for (int i = 0; i < count; i++) {
            if (factors[i].num > factors[i].denom) continue;
            int w = TJSCALED(width, factors[i]), h = TJSCALED(height, factors[i]);
            if ((w > h ? w : h) >= 256 && w * h < best_w * best_h) { best_w = w; best_h = h; }
        }
        width = best_w; height = best_h;
    }
    int gray = colorspace == TJCS_GRAY;
    int channels = gray ? 1 : 3;
    unsigned char *pixels = malloc((size_t)width * height * channels);
    if (tjDecompress2(handle, input, input_size, pixels, width, width * channels, height, gray ? TJPF_GRAY : TJPF_RGB, 0)
        && tjGetErrorCode(handle) != TJERR_WARNING) fail(tjGetErrorStr2(handle));
    free(pixels);
    tjDestroy(handle);
}

static void png(void) {
    spng_ctx *ctx = spng_ctx_new(0);
    spng_set_png_buffer(ctx, input, input_size);
    struct spng_ihdr ihdr;
    if (spng_get_ihdr(ctx, &ihdr)) fail("ihdr");
    struct spng_trns trns;
    int alpha = ihdr.color_type == 4 || ihdr.color_type == 6 || spng_get_trns(ctx, &trns) == 0;
    int fmt = alpha ? SPNG_FMT_RGBA8 : SPNG_FMT_RGB8;
    size_t size;
    spng_decoded_image_size(ctx, fmt, &size);
    unsigned char *pixels = malloc(size);
    if (spng_decode_image(ctx, pixels, size, fmt, SPNG_DECODE_TRNS)) fail("decode");
    free(pixels);
    spng_ctx_free(ctx);
}

static void webp(void) {
    WebPBitstreamFeatures features;
    if (WebPGetFeatures(input, input_size, &features) != VP8_STATUS_OK) fail("features");
    int channels = features.has_alpha ? 4 : 3;
    size_t stride = (size_t)features.width * channels, size = stride * features.height;
    unsigned char *pixels = malloc(size);
    unsigned char *ok = features.has_alpha
        ? WebPDecodeRGBAInto(input, input_size, pixels, size, (int)stride)
        : WebPDecodeRGBInto(input, input_size, pixels, size, (int)stride);
    if (!ok) fail("decode");
    free(pixels);
}

struct reader { size_t offset; };
static int read_gif(GifFileType *gif, GifByteType *buffer, int length) {
    struct reader *reader = gif->UserData;
    size_t left = input_size - reader->offset;
    size_t n = (size_t)length < left ? (size_t)length : left;
    memcpy(buffer, input + reader->offset, n);
    reader->offset += n;
    return (int)n;
}

/* giflib's own decode of every frame (colour indices, no compositing). */
static void gif(void) {
    struct reader reader = {0};
    int error;
    GifFileType *file = DGifOpen(&reader, read_gif, &error);
    if (!file) fail("open");
    if (DGifSlurp(file) != GIF_OK) fail("slurp");
    DGifCloseFile(file, &error);
}

/* giflib plus the compositing Imago does: every frame drawn on an RGBA
 * canvas (transparency, disposal 2 and 3, interlace) and copied out. */
static void gif_rgba(void) {
    struct reader reader = {0};
    int error;
    GifFileType *file = DGifOpen(&reader, read_gif, &error);
    if (!file) fail("open");
    if (DGifSlurp(file) != GIF_OK) fail("slurp");
    size_t width = file->SWidth, height = file->SHeight, canvas_size = width * height * 4;
    unsigned char *canvas = calloc(canvas_size, 1), *previous = malloc(canvas_size);
    /* One buffer per frame, as a decoder handing frames to its caller allocates them. */
    unsigned char **frames = malloc(sizeof(unsigned char *) * file->ImageCount);
    for (int f = 0; f < file->ImageCount; f++) {
        SavedImage *image = &file->SavedImages[f];
        GraphicsControlBlock gcb = {.DisposalMode = 0, .TransparentColor = -1};
        DGifSavedExtensionToGCB(file, f, &gcb);
        ColorMapObject *map = image->ImageDesc.ColorMap ? image->ImageDesc.ColorMap : file->SColorMap;
        int left = image->ImageDesc.Left, top = image->ImageDesc.Top, w = image->ImageDesc.Width, h = image->ImageDesc.Height;
        if (gcb.DisposalMode == DISPOSE_PREVIOUS) memcpy(previous, canvas, canvas_size);
        static const int starts[] = {0, 4, 2, 1}, steps[] = {8, 8, 4, 2};
        int row = 0;
        for (int pass = 0; pass < (image->ImageDesc.Interlace ? 4 : 1); pass++) {
            int start = image->ImageDesc.Interlace ? starts[pass] : 0, step = image->ImageDesc.Interlace ? steps[pass] : 1;
            for (int y = start; y < h; y += step, row++) {
                const GifByteType *indices = image->RasterBits + (size_t)row * w;
                unsigned char *out = canvas + ((size_t)(top + y) * width + left) * 4;
                for (int x = 0; x < w; x++, out += 4) {
                    int index = indices[x];
                    if (index == gcb.TransparentColor) continue;
                    GifColorType c = index < map->ColorCount ? map->Colors[index] : (GifColorType){0, 0, 0};
                    out[0] = c.Red; out[1] = c.Green; out[2] = c.Blue; out[3] = 255;
                }
            }
        }
        frames[f] = malloc(canvas_size);
        memcpy(frames[f], canvas, canvas_size);
        if (gcb.DisposalMode == DISPOSE_BACKGROUND)
            for (int y = 0; y < h; y++) memset(canvas + ((size_t)(top + y) * width + left) * 4, 0, (size_t)w * 4);
        else if (gcb.DisposalMode == DISPOSE_PREVIOUS) memcpy(canvas, previous, canvas_size);
    }
    for (int f = 0; f < file->ImageCount; f++) free(frames[f]);
    free(canvas); free(previous); free(frames);
    DGifCloseFile(file, &error);
}

int main(int argc, char **argv) {
    if (argc != 4) fail("usage: raw_codecs jpeg|jpeg-thumb|png|webp|gif FILE ITERATIONS");
    FILE *f = fopen(argv[2], "rb");
    if (!f) fail("cannot open file");
    fseek(f, 0, SEEK_END); input_size = ftell(f); fseek(f, 0, SEEK_SET);
    input = malloc(input_size);
    if (fread(input, 1, input_size, f) != input_size) fail("cannot read file");
    fclose(f);
    int iterations = atoi(argv[3]);
    double *times = malloc(sizeof(double) * iterations);
    for (int i = -1; i < iterations; i++) {
        double start = now_ms();
        if (!strcmp(argv[1], "jpeg")) jpeg(0);
        else if (!strcmp(argv[1], "jpeg-thumb")) jpeg(1);
        else if (!strcmp(argv[1], "png")) png();
        else if (!strcmp(argv[1], "webp")) webp();
        else if (!strcmp(argv[1], "gif")) gif();
        else if (!strcmp(argv[1], "gif-rgba")) gif_rgba();
        else fail("unknown codec");
        if (i >= 0) times[i] = now_ms() - start;
    }
    for (int i = 1; i < iterations; i++) /* insertion sort */
        for (int j = i; j > 0 && times[j] < times[j - 1]; j--) { double t = times[j]; times[j] = times[j - 1]; times[j - 1] = t; }
    double median = iterations % 2 ? times[iterations / 2] : (times[iterations / 2 - 1] + times[iterations / 2]) / 2;
    printf("{\"median_ms\": %.3f, \"min_ms\": %.3f}\n", median, times[0]);
    return 0;
}
