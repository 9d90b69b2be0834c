/*
 * gcc -O2 -Wall Benchmarks/raw/next_codecs.c -o Benchmarks/.build-raw/next_codecs \
 *     $(pkg-config --cflags --libs libheif libavif libjxl libjxl_threads)
 *
 * AVIF, HEIC and JPEG XL decoders on their own (candidates for Imago): the raw
 * C libraries, decoding a whole file into interleaved 8-bit RGB (RGBA when the
 * file has alpha), as fast as each library's API allows.
 *
 *   next_codecs MODE FILE ITERATIONS [THREADS]
 *
 * MODE
 *   heif, heif-dav1d, heif-aom, heif-libde265
 *       libheif: heif_context_read_from_memory_without_copy, primary handle,
 *       heif_decode_image(RGB, interleaved RGB/RGBA) with the default decoder
 *       or the one named (heif_decoding_options.decoder_id, libheif >= 1.15),
 *       then the rows copied into a reused buffer (timed apart as "copy").
 *   heif-yuv  the same, but asking for YCbCr 4:2:0 planes (the test files'
 *       layout; heif_chroma_undefined would upsample to 4:4:4), to see what
 *       libheif's own YCbCr->RGB conversion costs. (With 1.15 it is no faster:
 *       its scalar float conversion code still runs on the planes.)
 *   avif-dav1d, avif-aom, avif-libgav1
 *       libavif: avifDecoderCreate, codecChoice, maxThreads = THREADS,
 *       avifDecoderSetIOMemory, avifDecoderParse, avifDecoderNextImage,
 *       avifImageYUVToRGB into a reused buffer (rgb.pixels/rowBytes set here).
 *   jxl  libjxl: BASIC_INFO|FULL_IMAGE, JXL_TYPE_UINT8 into a reused buffer;
 *       THREADS 1 = no parallel runner, THREADS >= 2 = one
 *       JxlThreadParallelRunner with that many threads (created once).
 *   heif-header, heif-header-copy, avif-header
 *       only the container: context/decoder, read/parse, width and height
 *       (heif-header-copy: heif_context_read_from_memory, which copies).
 *   heif-info, avif-info  (ITERATIONS ignored)
 *       decoders available, colour profile, transformations, bit depth,
 *       size limits, what 8-bit RGB output does with deeper files.
 *
 * AVOID_LIBYUV=1 makes libavif use its built-in YUV->RGB code instead of libyuv.
 *
 * THREADS (default 1). libheif 1.15 cannot tell its AV1/HEVC plugin how many
 * threads to use (dav1d gets n_threads = 0, i.e. one per CPU in the process's
 * affinity mask; libde265 gets one worker). So with THREADS = 1 the harness
 * pins the whole process to the CPU it is on (sched_setaffinity) for every
 * mode, and sets heif_context_set_max_decoding_threads(ctx, 0) (grid tiles in
 * the calling thread); with THREADS = N >= 2 it leaves the affinity alone and
 * sets max_decoding_threads to N. Set PIN=0 to never pin.
 *
 * One warm-up run, then ITERATIONS timed runs. Prints one JSON line: min and
 * median total ms, medians of the phases (parse, decode, convert = YUV->RGB
 * when the library does it apart, copy = rows out of libheif's image,
 * release = freeing the decoder/context), peak RSS (getrusage ru_maxrss,
 * which includes the input file and the reused output buffer) and the RSS
 * before the first decode.
 */
#define _GNU_SOURCE
#include <avif/avif.h>
#include <jxl/decode.h>
#include <jxl/thread_parallel_runner.h>
#include <libheif/heif.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static unsigned char *input;
static size_t input_size;
static int threads = 1;

static unsigned char *out_buf; /* reused output buffer */
static size_t out_cap;

/* Per-run phase times, ms. */
enum { PH_PARSE, PH_DECODE, PH_CONVERT, PH_COPY, PH_RELEASE, PH_COUNT };
static const char *phase_names[PH_COUNT] = {"parse", "decode", "convert", "copy", "release"};
static double phase[PH_COUNT];
static int phase_used[PH_COUNT];
static unsigned out_w, out_h, out_channels;

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void die(const char *what, const char *detail) {
    fprintf(stderr, "%s: %s\n", what, detail ? detail : "");
    exit(1);
}

static unsigned char *ensure_out(size_t size) {
    if (size > out_cap) {
        free(out_buf);
        out_buf = malloc(size);
        if (!out_buf) die("malloc", "output buffer");
        memset(out_buf, 0, size); /* touch the pages once, outside the timing */
        out_cap = size;
    }
    return out_buf;
}

static long rss_kb(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

/* ------------------------------------------------------------------ libheif */

static const char *heif_decoder_id; /* NULL = libheif's choice */

static void heif_check(struct heif_error e, const char *what) {
    if (e.code != heif_error_Ok) die(what, e.message);
}

static void decode_heif(int yuv) {
    double t0 = now_ms();
    struct heif_context *ctx = heif_context_alloc();
    heif_context_set_max_decoding_threads(ctx, threads >= 2 ? threads : 0);
    heif_check(heif_context_read_from_memory_without_copy(ctx, input, input_size, NULL), "heif read");
    struct heif_image_handle *handle;
    heif_check(heif_context_get_primary_image_handle(ctx, &handle), "heif primary handle");
    int alpha = heif_image_handle_has_alpha_channel(handle);
    double t1 = now_ms();

    struct heif_decoding_options *options = heif_decoding_options_alloc();
    options->decoder_id = heif_decoder_id;
    struct heif_image *image;
    if (yuv)
        heif_check(heif_decode_image(handle, &image, heif_colorspace_YCbCr, heif_chroma_420, options), "heif decode yuv");
    else
        heif_check(heif_decode_image(handle, &image, heif_colorspace_RGB,
                                     alpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB, options),
                   "heif decode");
    heif_decoding_options_free(options);
    double t2 = now_ms();

    int w = heif_image_get_width(image, yuv ? heif_channel_Y : heif_channel_interleaved);
    int h = heif_image_get_height(image, yuv ? heif_channel_Y : heif_channel_interleaved);
    if (!yuv) {
        int stride;
        const uint8_t *plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride);
        if (!plane) die("heif", "no interleaved plane (deeper than 8 bits?)");
        unsigned channels = alpha ? 4 : 3;
        size_t row = (size_t)w * channels;
        unsigned char *dst = ensure_out(row * h);
        for (int y = 0; y < h; y++) memcpy(dst + row * y, plane + (size_t)stride * y, row);
        out_channels = channels;
    } else {
        out_channels = 0;
    }
    double t3 = now_ms();
    heif_image_release(image);
    heif_image_handle_release(handle);
    heif_context_free(ctx);
    double t4 = now_ms();
    out_w = w;
    out_h = h;
    phase[PH_PARSE] = t1 - t0;
    phase[PH_DECODE] = t2 - t1; /* AV1/HEVC decode + YCbCr->RGB inside libheif */
    phase[PH_COPY] = t3 - t2;
    phase[PH_RELEASE] = t4 - t3;
    phase_used[PH_PARSE] = phase_used[PH_DECODE] = phase_used[PH_COPY] = phase_used[PH_RELEASE] = 1;
}

static int heif_header_copy; /* heif_context_read_from_memory (copies the file) */

static void heif_header(void) {
    double t0 = now_ms();
    struct heif_context *ctx = heif_context_alloc();
    if (heif_header_copy)
        heif_check(heif_context_read_from_memory(ctx, input, input_size, NULL), "heif read");
    else
        heif_check(heif_context_read_from_memory_without_copy(ctx, input, input_size, NULL), "heif read");
    struct heif_image_handle *handle;
    heif_check(heif_context_get_primary_image_handle(ctx, &handle), "heif primary handle");
    out_w = heif_image_handle_get_width(handle);
    out_h = heif_image_handle_get_height(handle);
    heif_image_handle_release(handle);
    heif_context_free(ctx);
    phase[PH_PARSE] = now_ms() - t0;
    phase_used[PH_PARSE] = 1;
}

static void list_heif_decoders(enum heif_compression_format format, const char *label) {
    const struct heif_decoder_descriptor *d[16];
    int n = heif_get_decoder_descriptors(format, d, 16);
    printf("  %s decoders (priority order):", label);
    for (int i = 0; i < n; i++)
        printf(" [%s: %s]", heif_decoder_descriptor_get_id_name(d[i]) ? heif_decoder_descriptor_get_id_name(d[i]) : "?",
               heif_decoder_descriptor_get_name(d[i]));
    printf("\n");
}

static void heif_try_decode(struct heif_image_handle *handle, int ignore_transformations, enum heif_chroma chroma,
                            const char *label) {
    struct heif_decoding_options *o = heif_decoding_options_alloc();
    o->ignore_transformations = ignore_transformations;
    struct heif_image *image;
    struct heif_error e = heif_decode_image(handle, &image, heif_colorspace_RGB, chroma, o);
    heif_decoding_options_free(o);
    if (e.code != heif_error_Ok) {
        printf("  %s: error %d/%d %s\n", label, e.code, e.subcode, e.message);
        return;
    }
    int stride = 0;
    const uint8_t *p = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride);
    printf("  %s: ok, %dx%d, chroma %d, bits/px range %d, stride %d, first pixel %d,%d,%d, image ICC %zu bytes\n",
           label, heif_image_get_width(image, heif_channel_interleaved), heif_image_get_height(image, heif_channel_interleaved),
           heif_image_get_chroma_format(image), heif_image_get_bits_per_pixel_range(image, heif_channel_interleaved), stride,
           p ? p[0] : -1, p ? p[1] : -1, p ? p[2] : -1, heif_image_get_raw_color_profile_size(image));
    heif_image_release(image);
}

static void heif_info(const char *path) {
    printf("libheif %s\n", heif_get_version());
    list_heif_decoders(heif_compression_AV1, "AV1");
    list_heif_decoders(heif_compression_HEVC, "HEVC");
    struct heif_context *ctx = heif_context_alloc();
    heif_check(heif_context_read_from_memory_without_copy(ctx, input, input_size, NULL), "heif read");
    struct heif_image_handle *handle;
    heif_check(heif_context_get_primary_image_handle(ctx, &handle), "heif primary handle");
    int w = heif_image_handle_get_width(handle), h = heif_image_handle_get_height(handle);
    printf("  %s: %dx%d (ispe %dx%d), alpha %d, luma bits %d, chroma bits %d, thumbnails %d, top-level images %d\n", path, w, h,
           heif_image_handle_get_ispe_width(handle), heif_image_handle_get_ispe_height(handle),
           heif_image_handle_has_alpha_channel(handle), heif_image_handle_get_luma_bits_per_pixel(handle),
           heif_image_handle_get_chroma_bits_per_pixel(handle), heif_image_handle_get_number_of_thumbnails(handle),
           heif_context_get_number_of_top_level_images(ctx));
    enum heif_color_profile_type type = heif_image_handle_get_color_profile_type(handle);
    size_t icc = heif_image_handle_get_raw_color_profile_size(handle);
    printf("  colour profile type %.4s, raw ICC %zu bytes", type ? (const char *)&(uint32_t){__builtin_bswap32(type)} : "none", icc);
    if (icc) {
        unsigned char *b = malloc(icc);
        heif_check(heif_image_handle_get_raw_color_profile(handle, b), "raw colour profile");
        printf(" (ICC header size field %u, class %.4s, colour space %.4s)", (b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3],
               b + 12, b + 16);
        free(b);
    }
    struct heif_color_profile_nclx *nclx = NULL;
    if (heif_image_handle_get_nclx_color_profile(handle, &nclx).code == heif_error_Ok && nclx) {
        printf(", nclx primaries %d transfer %d matrix %d full range %d", nclx->color_primaries,
               nclx->transfer_characteristics, nclx->matrix_coefficients, nclx->full_range_flag);
        heif_nclx_color_profile_free(nclx);
    }
    printf("\n");
    heif_try_decode(handle, 0, heif_chroma_interleaved_RGB, "decode RGB8 (transformations applied)");
    heif_try_decode(handle, 1, heif_chroma_interleaved_RGB, "decode RGB8 (ignore_transformations=1)");
    heif_try_decode(handle, 0, heif_chroma_interleaved_RGBA, "decode RGBA8");
    heif_try_decode(handle, 0, heif_chroma_interleaved_RRGGBB_LE, "decode RRGGBB_LE (16-bit container)");
    heif_image_handle_release(handle);
    heif_context_free(ctx);

    /* Security limit: is the argument a width or a pixel count (width^2)? */
    int limits[] = {w - 1, (int)(w > h ? w : h), 0};
    for (int i = 0; limits[i]; i++) {
        ctx = heif_context_alloc();
        heif_context_set_maximum_image_size_limit(ctx, limits[i]);
        struct heif_error e = heif_context_read_from_memory_without_copy(ctx, input, input_size, NULL);
        const char *stage = "read";
        if (e.code == heif_error_Ok) {
            stage = "handle";
            e = heif_context_get_primary_image_handle(ctx, &handle);
            if (e.code == heif_error_Ok) {
                struct heif_image *image;
                stage = "decode";
                e = heif_decode_image(handle, &image, heif_colorspace_RGB, heif_chroma_interleaved_RGB, NULL);
                if (e.code == heif_error_Ok) heif_image_release(image);
                heif_image_handle_release(handle);
            }
        }
        printf("  maximum_image_size_limit(%d) on %dx%d (%d px; limit^2 = %lld): %s%s%s\n", limits[i], w, h, w * h,
               (long long)limits[i] * limits[i], e.code == heif_error_Ok ? "accepted" : "refused at ", e.code == heif_error_Ok ? "" : stage,
               e.code == heif_error_Ok ? "" : e.message);
        heif_context_free(ctx);
    }
}

/* ------------------------------------------------------------------ libavif */

static avifCodecChoice avif_codec;
static avifBool avoid_libyuv; /* AVOID_LIBYUV=1: libavif's built-in YUV->RGB */

static void avif_check(avifResult r, const char *what) {
    if (r != AVIF_RESULT_OK) die(what, avifResultToString(r));
}

static void decode_avif(void) {
    double t0 = now_ms();
    avifDecoder *decoder = avifDecoderCreate();
    decoder->codecChoice = avif_codec;
    decoder->maxThreads = threads;
    avif_check(avifDecoderSetIOMemory(decoder, input, input_size), "avifDecoderSetIOMemory");
    avif_check(avifDecoderParse(decoder), "avifDecoderParse");
    double t1 = now_ms();
    avif_check(avifDecoderNextImage(decoder), "avifDecoderNextImage");
    double t2 = now_ms();
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, decoder->image);
    rgb.format = decoder->alphaPresent ? AVIF_RGB_FORMAT_RGBA : AVIF_RGB_FORMAT_RGB;
    rgb.depth = 8;
    rgb.avoidLibYUV = avoid_libyuv;
    unsigned channels = decoder->alphaPresent ? 4 : 3;
    rgb.rowBytes = rgb.width * channels;
    rgb.pixels = ensure_out((size_t)rgb.rowBytes * rgb.height);
    avif_check(avifImageYUVToRGB(decoder->image, &rgb), "avifImageYUVToRGB");
    double t3 = now_ms();
    out_w = rgb.width;
    out_h = rgb.height;
    out_channels = channels;
    avifDecoderDestroy(decoder);
    double t4 = now_ms();
    phase[PH_PARSE] = t1 - t0;
    phase[PH_DECODE] = t2 - t1;
    phase[PH_CONVERT] = t3 - t2;
    phase[PH_RELEASE] = t4 - t3;
    phase_used[PH_PARSE] = phase_used[PH_DECODE] = phase_used[PH_CONVERT] = phase_used[PH_RELEASE] = 1;
}

static void avif_header(void) {
    double t0 = now_ms();
    avifDecoder *decoder = avifDecoderCreate();
    avif_check(avifDecoderSetIOMemory(decoder, input, input_size), "avifDecoderSetIOMemory");
    avif_check(avifDecoderParse(decoder), "avifDecoderParse");
    out_w = decoder->image->width;
    out_h = decoder->image->height;
    avifDecoderDestroy(decoder);
    phase[PH_PARSE] = now_ms() - t0;
    phase_used[PH_PARSE] = 1;
}

static void avif_info(const char *path) {
    char versions[256];
    avifCodecVersions(versions);
    printf("libavif %s, codecs: %s, libyuv version %u\n", avifVersion(), versions, avifLibYUVVersion());
    avifDecoder *d = avifDecoderCreate();
    printf("  defaults: maxThreads %d, imageSizeLimit %u, imageDimensionLimit %u, imageCountLimit %u, strictFlags %#x\n",
           d->maxThreads, d->imageSizeLimit, d->imageDimensionLimit, d->imageCountLimit, d->strictFlags);
    avif_check(avifDecoderSetIOMemory(d, input, input_size), "io");
    avif_check(avifDecoderParse(d), "parse");
    avifImage *im = d->image;
    uint32_t w = im->width, h = im->height;
    printf("  %s: %ux%u depth %u yuvFormat %d range %d alpha %d, ICC %zu bytes, nclx %d/%d/%d, transformFlags %#x "
           "(irot angle %u, imir mode %u)\n",
           path, w, h, im->depth, im->yuvFormat, im->yuvRange, d->alphaPresent, im->icc.size, im->colorPrimaries,
           im->transferCharacteristics, im->matrixCoefficients, im->transformFlags, im->irot.angle, im->imir.mode);
    avif_check(avifDecoderNextImage(d), "next");
    avifRGBImage rgb;
    avifRGBImageSetDefaults(&rgb, d->image);
    rgb.format = AVIF_RGB_FORMAT_RGB;
    rgb.depth = 8;
    rgb.rowBytes = rgb.width * 3;
    rgb.pixels = malloc((size_t)rgb.rowBytes * rgb.height);
    avifResult r = avifImageYUVToRGB(d->image, &rgb);
    printf("  YUV(depth %u) -> RGB8: %s, %ux%u (pixels are NOT rotated/mirrored by libavif), first pixel %d,%d,%d\n",
           d->image->depth, avifResultToString(r), rgb.width, rgb.height, rgb.pixels[0], rgb.pixels[1], rgb.pixels[2]);
    free(rgb.pixels);
    avifDecoderDestroy(d);

    struct { const char *name; uint32_t size, dim; } tests[] = {
        {"imageSizeLimit = w*h - 1", w * h - 1, AVIF_DEFAULT_IMAGE_DIMENSION_LIMIT},
        {"imageSizeLimit = w*h", w * h, AVIF_DEFAULT_IMAGE_DIMENSION_LIMIT},
        {"imageDimensionLimit = max(w,h) - 1", AVIF_DEFAULT_IMAGE_SIZE_LIMIT, (w > h ? w : h) - 1},
    };
    for (int i = 0; i < 3; i++) {
        d = avifDecoderCreate();
        d->imageSizeLimit = tests[i].size;
        d->imageDimensionLimit = tests[i].dim;
        avif_check(avifDecoderSetIOMemory(d, input, input_size), "io");
        avifResult pr = avifDecoderParse(d);
        avifResult nr = pr == AVIF_RESULT_OK ? avifDecoderNextImage(d) : pr;
        printf("  %s: parse %s, decode %s%s%s\n", tests[i].name, avifResultToString(pr), avifResultToString(nr),
               d->diag.error[0] ? " - " : "", d->diag.error);
        avifDecoderDestroy(d);
    }
}

/* ------------------------------------------------------------------ libjxl */

static void *jxl_runner;

static void decode_jxl(void) {
    double t0 = now_ms();
    JxlDecoder *dec = JxlDecoderCreate(NULL);
    if (JxlDecoderSubscribeEvents(dec, JXL_DEC_BASIC_INFO | JXL_DEC_FULL_IMAGE) != JXL_DEC_SUCCESS) die("jxl", "subscribe");
    if (jxl_runner && JxlDecoderSetParallelRunner(dec, JxlThreadParallelRunner, jxl_runner) != JXL_DEC_SUCCESS)
        die("jxl", "runner");
    JxlDecoderSetInput(dec, input, input_size);
    JxlDecoderCloseInput(dec);
    JxlBasicInfo info;
    JxlPixelFormat format = {3, JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    double t1 = 0;
    for (;;) {
        JxlDecoderStatus s = JxlDecoderProcessInput(dec);
        if (s == JXL_DEC_BASIC_INFO) {
            if (JxlDecoderGetBasicInfo(dec, &info) != JXL_DEC_SUCCESS) die("jxl", "basic info");
            format.num_channels = info.alpha_bits ? 4 : 3;
            t1 = now_ms();
        } else if (s == JXL_DEC_NEED_IMAGE_OUT_BUFFER) {
            size_t size;
            if (JxlDecoderImageOutBufferSize(dec, &format, &size) != JXL_DEC_SUCCESS) die("jxl", "buffer size");
            if (JxlDecoderSetImageOutBuffer(dec, &format, ensure_out(size), size) != JXL_DEC_SUCCESS) die("jxl", "set buffer");
        } else if (s == JXL_DEC_FULL_IMAGE) {
            continue;
        } else if (s == JXL_DEC_SUCCESS) {
            break;
        } else {
            die("jxl", s == JXL_DEC_NEED_MORE_INPUT ? "truncated" : "decode error");
        }
    }
    double t2 = now_ms();
    JxlDecoderDestroy(dec);
    out_w = info.xsize;
    out_h = info.ysize;
    out_channels = format.num_channels;
    phase[PH_PARSE] = t1 - t0;
    phase[PH_DECODE] = t2 - t1; /* libjxl decodes and converts in one go */
    phase[PH_RELEASE] = now_ms() - t2;
    phase_used[PH_PARSE] = phase_used[PH_DECODE] = phase_used[PH_RELEASE] = 1;
}

/* ------------------------------------------------------------------ main */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: %s MODE FILE ITERATIONS [THREADS]\n", argv[0]);
        return 2;
    }
    const char *mode = argv[1];
    int iterations = atoi(argv[3]);
    if (argc > 4) threads = atoi(argv[4]);
    if (threads < 1) threads = 1;

    FILE *f = fopen(argv[2], "rb");
    if (!f) die("open", argv[2]);
    fseek(f, 0, SEEK_END);
    input_size = ftell(f);
    fseek(f, 0, SEEK_SET);
    input = malloc(input_size);
    if (fread(input, 1, input_size, f) != input_size) die("read", argv[2]);
    fclose(f);

    const char *pin = getenv("PIN");
    if (threads == 1 && !(pin && pin[0] == '0')) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(sched_getcpu(), &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0) perror("sched_setaffinity");
    }

    avoid_libyuv = getenv("AVOID_LIBYUV") && getenv("AVOID_LIBYUV")[0] == '1';
    heif_init(NULL);
    void (*run)(void) = NULL;
    int heif_yuv = 0;
    if (!strcmp(mode, "heif-info")) {
        heif_info(argv[2]);
        return 0;
    } else if (!strcmp(mode, "avif-info")) {
        avif_info(argv[2]);
        return 0;
    } else if (!strcmp(mode, "heif") || !strcmp(mode, "heif-yuv")) {
        heif_yuv = !strcmp(mode, "heif-yuv");
    } else if (!strcmp(mode, "heif-header") || !strcmp(mode, "heif-header-copy")) {
        run = heif_header;
        heif_header_copy = !strcmp(mode, "heif-header-copy");
    } else if (!strncmp(mode, "heif-", 5)) {
        heif_decoder_id = mode + 5;
    } else if (!strcmp(mode, "avif-header")) {
        run = avif_header;
    } else if (!strcmp(mode, "avif-dav1d")) {
        avif_codec = AVIF_CODEC_CHOICE_DAV1D;
    } else if (!strcmp(mode, "avif-aom")) {
        avif_codec = AVIF_CODEC_CHOICE_AOM;
    } else if (!strcmp(mode, "avif-libgav1")) {
        avif_codec = AVIF_CODEC_CHOICE_LIBGAV1;
    } else if (!strcmp(mode, "jxl")) {
        run = decode_jxl;
        if (threads >= 2) jxl_runner = JxlThreadParallelRunnerCreate(NULL, threads);
    } else {
        die("unknown mode", mode);
    }
    if (!run) run = !strncmp(mode, "avif-", 5) ? decode_avif : NULL;

    double *total = malloc(sizeof(double) * iterations);
    double *ph[PH_COUNT];
    for (int p = 0; p < PH_COUNT; p++) ph[p] = malloc(sizeof(double) * iterations);
    long rss_before = rss_kb();
    for (int i = -1; i < iterations; i++) {
        memset(phase, 0, sizeof phase);
        double t0 = now_ms();
        if (run)
            run();
        else
            decode_heif(heif_yuv);
        double t = now_ms() - t0;
        if (i < 0) continue; /* warm-up */
        total[i] = t;
        for (int p = 0; p < PH_COUNT; p++) ph[p][i] = phase[p];
    }
    long rss_peak = rss_kb();
    double mn = total[0];
    for (int i = 1; i < iterations; i++)
        if (total[i] < mn) mn = total[i];
    printf("{\"mode\": \"%s\", \"file\": \"%s\", \"threads\": %d, \"size\": \"%ux%ux%u\", \"min_ms\": %.3f, \"median_ms\": %.3f",
           mode, argv[2], threads, out_w, out_h, out_channels, mn, median(total, iterations));
    for (int p = 0; p < PH_COUNT; p++)
        if (phase_used[p]) printf(", \"%s_ms\": %.3f", phase_names[p], median(ph[p], iterations));
    printf(", \"rss_before_mb\": %.1f, \"peak_rss_mb\": %.1f}\n", rss_before / 1024.0, rss_peak / 1024.0);
    if (jxl_runner) JxlThreadParallelRunnerDestroy(jxl_runner);
    heif_deinit();
    return 0;
}
