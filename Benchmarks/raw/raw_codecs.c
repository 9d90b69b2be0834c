/*
 * The raw C libraries on their own, for comparison with Imago's decoders:
 * the same calls, the same output formats, no Swift in between.
 *
 *   raw_codecs MODE FILE ITERATIONS
 *
 * MODE: jpeg, jpeg-thumb, jpeg-icc (jpeg, then lcms2's transform from the file's
 * embedded profile, one APP2 segment, to sRGB into a second buffer; the
 * transform is built once, outside the timing), png (libspng), webp, gif, gif-rgba;
 * png-libdeflate, png-libdeflate-branchless and png-libdeflate-simd (the PNG
 * fast-path prototype with scalar filters, the same with a branch-free Paeth,
 * or SSE2 filters); png-verify (libspng and every prototype must give the same
 * bytes; exits 1 if not). A prototype exits 2 on files outside its case.
 * A -reuse suffix decodes into one buffer, allocated in the warm-up run (which
 * also touches its pages), instead of malloc and free per run; a -huge suffix
 * mallocs per run but asks for transparent huge pages (madvise) first; a -split
 * suffix on png-libdeflate* also times its phases.
 *
 * Prints {"median_ms": M, "min_ms": N} after one warm-up run.
 *
 *   gcc -O2 Benchmarks/raw/raw_codecs.c -o Benchmarks/.build-raw/raw_codecs \
 *       -lturbojpeg -lspng -lwebp -lgif -ldeflate -llcms2
 */
#include <emmintrin.h>
#include <gif_lib.h>
#include <lcms2.h>
#include <libdeflate.h>
#include <spng.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* Output buffers: fresh per run, or the one reused buffer. */
static int reuse, huge;
static unsigned char *reused;
static size_t reused_size;

#define HUGE ((size_t)2 << 20)
static unsigned char *pixels_alloc(size_t size) {
    if (huge) { /* fresh, but the 2 MiB-aligned interior asks for transparent huge pages */
        unsigned char *p = malloc(size);
        uintptr_t start = ((uintptr_t)p + HUGE - 1) & ~(uintptr_t)(HUGE - 1), end = ((uintptr_t)p + size) & ~(uintptr_t)(HUGE - 1);
        if (end > start) madvise((void *)start, end - start, MADV_HUGEPAGE);
        return p;
    }
    if (!reuse) return malloc(size);
    if (!reused) { reused = malloc(size); reused_size = size; }
    if (size > reused_size) fail("reused buffer too small");
    return reused;
}

static void pixels_free(unsigned char *pixels) {
    if (!reuse) free(pixels);
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
    unsigned char *pixels = pixels_alloc((size_t)width * height * channels);
    if (tjDecompress2(handle, input, input_size, pixels, width, width * channels, height, gray ? TJPF_GRAY : TJPF_RGB, 0)
        && tjGetErrorCode(handle) != TJERR_WARNING) fail(tjGetErrorStr2(handle));
    pixels_free(pixels);
    tjDestroy(handle);
}

/* The JPEG's embedded profile (one APP2 ICC_PROFILE segment) to sRGB, RGB8. */
static cmsHTRANSFORM jpeg_profile_transform(void) {
    static cmsHTRANSFORM transform;
    if (transform) return transform;
    for (size_t i = 2; i + 4 < input_size && input[i] == 0xFF && input[i + 1] != 0xDA;) {
        size_t length = ((size_t)input[i + 2] << 8) | input[i + 3];
        if (input[i + 1] == 0xE2 && length > 16 && i + 2 + length <= input_size && !memcmp(input + i + 4, "ICC_PROFILE", 12)) {
            cmsHPROFILE source = cmsOpenProfileFromMem(input + i + 18, (cmsUInt32Number)(length - 16));
            if (!source) fail("unreadable profile");
            transform = cmsCreateTransform(source, TYPE_RGB_8, cmsCreate_sRGBProfile(), TYPE_RGB_8, INTENT_PERCEPTUAL, cmsFLAGS_NOCACHE);
            if (!transform) fail("no transform");
            return transform;
        }
        i += 2 + length;
    }
    fail("no ICC profile");
    return NULL;
}

/* jpeg(0), then the embedded profile's transform to sRGB into a second buffer. */
static void jpeg_icc(void) {
    static unsigned char *converted_reused;
    cmsHTRANSFORM transform = jpeg_profile_transform();
    tjhandle handle = tjInitDecompress();
    int width, height, subsampling, colorspace;
    if (tjDecompressHeader3(handle, input, input_size, &width, &height, &subsampling, &colorspace)) fail(tjGetErrorStr2(handle));
    size_t size = (size_t)width * height * 3;
    unsigned char *pixels = pixels_alloc(size);
    if (tjDecompress2(handle, input, input_size, pixels, width, width * 3, height, TJPF_RGB, 0) && tjGetErrorCode(handle) != TJERR_WARNING)
        fail(tjGetErrorStr2(handle));
    unsigned char *converted = reuse ? (converted_reused ? converted_reused : (converted_reused = malloc(size))) : malloc(size);
    cmsDoTransform(transform, pixels, converted, (cmsUInt32Number)((size_t)width * height));
    if (!reuse) free(converted);
    pixels_free(pixels);
    tjDestroy(handle);
}

/* libspng to RGB8, or RGBA8 with alpha or tRNS; returns the pixels. */
static unsigned char *png_spng(size_t *size_out) {
    spng_ctx *ctx = spng_ctx_new(0);
    spng_set_png_buffer(ctx, input, input_size);
    struct spng_ihdr ihdr;
    if (spng_get_ihdr(ctx, &ihdr)) fail("ihdr");
    struct spng_trns trns;
    int alpha = ihdr.color_type == 4 || ihdr.color_type == 6 || spng_get_trns(ctx, &trns) == 0;
    int fmt = alpha ? SPNG_FMT_RGBA8 : SPNG_FMT_RGB8;
    size_t size;
    if (spng_decoded_image_size(ctx, fmt, &size)) fail("decode");
    unsigned char *pixels = pixels_alloc(size);
    if (spng_decode_image(ctx, pixels, size, fmt, SPNG_DECODE_TRNS)) fail("decode");
    spng_ctx_free(ctx);
    *size_out = size;
    return pixels;
}

static void png(void) {
    size_t size;
    pixels_free(png_spng(&size));
}

/*
 * The fast-path prototype (docs/plans/performance.md, section 3), for 8-bit
 * RGB and RGBA without interlacing or tRNS only: check every chunk's CRC with
 * libdeflate_crc32, join the IDATs, one libdeflate_zlib_decompress (which
 * checks Adler-32), then undo the filters straight into the output (the
 * previous row is the output's).
 */
enum { SCALAR, BRANCHLESS, SSE2, VARIANTS };
static const char *variant_names[VARIANTS] = {"png-libdeflate", "png-libdeflate-branchless", "png-libdeflate-simd"};
static int variant;
static int split;        /* time the phases below */
enum { CRC, COPY, INFLATE, UNFILTER, PAETH, PHASES };
static double phase[PHASES];
static long filter_rows[5];

static void unsupported(const char *what) {
    fprintf(stderr, "raw_codecs: png-libdeflate: unsupported: %s\n", what);
    exit(2);
}

static uint32_t be32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline unsigned char paeth(int a, int b, int c) {
    int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

/* The same predictor without branches (stb_image's form; all 2^24 inputs
 * checked against the one above). */
static inline unsigned char paeth_branchless(int a, int b, int c) {
    int threshold = 3 * c - (a + b), lo = a < b ? a : b, hi = a < b ? b : a;
    int t = hi <= threshold ? lo : c;
    return threshold <= lo ? hi : t;
}

static void unfilter_scalar(int filter, unsigned char *restrict out, const unsigned char *restrict in,
                            const unsigned char *restrict prev, size_t n, size_t bpp) {
    size_t i;
    switch (filter) {
    case 0: memcpy(out, in, n); break;
    case 1:
        for (i = 0; i < bpp; i++) out[i] = in[i];
        for (; i < n; i++) out[i] = in[i] + out[i - bpp];
        break;
    case 2: for (i = 0; i < n; i++) out[i] = in[i] + prev[i]; break;
    case 3:
        for (i = 0; i < bpp; i++) out[i] = in[i] + (prev[i] >> 1);
        for (; i < n; i++) out[i] = in[i] + ((out[i - bpp] + prev[i]) >> 1);
        break;
    case 4: /* the first pixel has a = c = 0, so Paeth picks b */
        for (i = 0; i < bpp; i++) out[i] = in[i] + prev[i];
        if (variant == BRANCHLESS)
            for (; i < n; i++) out[i] = in[i] + paeth_branchless(out[i - bpp], prev[i], prev[i - bpp]);
        else
            for (; i < n; i++) out[i] = in[i] + paeth(out[i - bpp], prev[i], prev[i - bpp]);
        break;
    }
}

/* SSE2, one pixel per step for the serial filters, Paeth in 16-bit lanes in
 * the branch-free form. Pixels move as 4 bytes, except the last of an RGB
 * row (3 bytes); the fourth byte stored lands on the next pixel, which is
 * written next. */
static inline __m128i load_px(const unsigned char *p, size_t i, size_t n) {
    uint32_t v = 0;
    if (i + 4 <= n) memcpy(&v, p + i, 4);
    else memcpy(&v, p + i, 3);
    return _mm_cvtsi32_si128((int)v);
}

static inline void store_px(unsigned char *p, size_t i, size_t n, __m128i v) {
    uint32_t w = (uint32_t)_mm_cvtsi128_si32(v);
    if (i + 4 <= n) memcpy(p + i, &w, 4);
    else memcpy(p + i, &w, 3);
}

static inline __m128i select16(__m128i mask, __m128i yes, __m128i no) {
    return _mm_or_si128(_mm_and_si128(mask, yes), _mm_andnot_si128(mask, no));
}

static void unfilter_sse2(int filter, unsigned char *restrict out, const unsigned char *restrict in,
                          const unsigned char *restrict prev, size_t n, size_t bpp) {
    const __m128i zero = _mm_setzero_si128();
    size_t i = 0;
    switch (filter) {
    case 0: memcpy(out, in, n); break;
    case 1: {
        __m128i a = zero;
        for (; i < n; i += bpp) {
            a = _mm_add_epi8(load_px(in, i, n), a);
            store_px(out, i, n, a);
        }
        break;
    }
    case 2:
        for (; i + 16 <= n; i += 16)
            _mm_storeu_si128((__m128i *)(out + i), _mm_add_epi8(_mm_loadu_si128((const __m128i *)(in + i)),
                                                                 _mm_loadu_si128((const __m128i *)(prev + i))));
        for (; i < n; i++) out[i] = in[i] + prev[i];
        break;
    case 3: {
        const __m128i one = _mm_set1_epi8(1);
        __m128i a = zero;
        for (; i < n; i += bpp) {
            __m128i b = load_px(prev, i, n);
            /* avg_epu8 rounds up; PNG rounds down */
            __m128i average = _mm_sub_epi8(_mm_avg_epu8(a, b), _mm_and_si128(_mm_xor_si128(a, b), one));
            a = _mm_add_epi8(load_px(in, i, n), average);
            store_px(out, i, n, a);
        }
        break;
    }
    case 4: {
        __m128i a = zero, c = zero;
        for (; i < n; i += bpp) {
            __m128i b = _mm_unpacklo_epi8(load_px(prev, i, n), zero);
            __m128i lo = _mm_min_epi16(a, b), hi = _mm_max_epi16(a, b);
            __m128i threshold = _mm_sub_epi16(_mm_add_epi16(c, _mm_add_epi16(c, c)), _mm_add_epi16(a, b));
            __m128i t = select16(_mm_cmpgt_epi16(hi, threshold), c, lo);
            __m128i predictor = select16(_mm_cmpgt_epi16(threshold, lo), t, hi);
            a = _mm_add_epi8(_mm_unpacklo_epi8(load_px(in, i, n), zero), predictor); /* high bytes stay 0 */
            store_px(out, i, n, _mm_packus_epi16(a, a));
            c = b;
        }
        break;
    }
    }
}

static unsigned char *png_deflate(size_t *size_out) {
    static const unsigned char signature[8] = {137, 80, 78, 71, 13, 10, 26, 10};
    if (input_size < 8 + 25 || memcmp(input, signature, 8)) fail("not a PNG");
    const unsigned char *ihdr = input + 8;
    if (be32(ihdr) != 13 || memcmp(ihdr + 4, "IHDR", 4)) fail("no IHDR");
    size_t width = be32(ihdr + 8), height = be32(ihdr + 12);
    if (ihdr[16] != 8 || (ihdr[17] != 2 && ihdr[17] != 6) || ihdr[20])
        unsupported("only 8-bit colour types 2 and 6, non-interlaced");
    if (!width || !height || width > 0x7fffffff || height > 0x7fffffff || ihdr[18] || ihdr[19]) fail("bad IHDR");
    size_t bpp = ihdr[17] == 6 ? 4 : 3, row_bytes = width * bpp, stride = 1 + row_bytes;
    double t = 0;

    /* The chunks: every CRC checked, the IDATs contiguous and joined. */
    unsigned char *idat = malloc(input_size);
    if (!idat) fail("out of memory");
    size_t idat_size = 0, offset = 8;
    int idat_seen = 0, idat_done = 0;
    for (;;) {
        if (input_size - offset < 12) fail("truncated");
        size_t length = be32(input + offset);
        if (length > 0x7fffffff || length > input_size - offset - 12) fail("truncated chunk");
        const unsigned char *type = input + offset + 4, *data = type + 4;
        if (split) t = now_ms();
        if (libdeflate_crc32(0, type, length + 4) != be32(data + length)) fail("CRC mismatch");
        if (split) phase[CRC] += now_ms() - t;
        int first = offset == 8;
        offset += 12 + length;
        if (!memcmp(type, "IDAT", 4)) {
            if (idat_done) fail("IDATs not contiguous");
            idat_seen = 1;
            if (split) t = now_ms();
            memcpy(idat + idat_size, data, length);
            idat_size += length;
            if (split) phase[COPY] += now_ms() - t;
            continue;
        }
        if (idat_seen) idat_done = 1;
        if (!memcmp(type, "IEND", 4)) break;
        if (!memcmp(type, "tRNS", 4)) unsupported("tRNS");
        if (!(type[0] & 0x20) && !first && memcmp(type, "PLTE", 4)) fail("unexpected critical chunk");
    }
    if (!idat_seen) fail("no IDAT");

    if (split) t = now_ms();
    unsigned char *filtered = malloc(stride * height);
    if (!filtered) fail("out of memory");
    struct libdeflate_decompressor *decompressor = libdeflate_alloc_decompressor();
    if (libdeflate_zlib_decompress(decompressor, idat, idat_size, filtered, stride * height, NULL) != LIBDEFLATE_SUCCESS)
        fail("inflate");
    libdeflate_free_decompressor(decompressor);
    free(idat);
    if (split) phase[INFLATE] += now_ms() - t;

    if (split) t = now_ms();
    unsigned char *pixels = pixels_alloc(row_bytes * height), *zero = calloc(row_bytes, 1);
    void (*unfilter)(int, unsigned char *restrict, const unsigned char *restrict, const unsigned char *restrict,
                     size_t, size_t) = variant == SSE2 ? unfilter_sse2 : unfilter_scalar;
    for (size_t y = 0; y < height; y++) {
        const unsigned char *row = filtered + y * stride;
        unsigned char *out = pixels + y * row_bytes;
        if (row[0] > 4) fail("bad filter type");
        double row_start = split && row[0] == 4 ? now_ms() : 0;
        unfilter(row[0], out, row + 1, y ? out - row_bytes : zero, row_bytes, bpp);
        if (split) {
            filter_rows[row[0]]++;
            if (row[0] == 4) phase[PAETH] += now_ms() - row_start;
        }
    }
    free(zero);
    free(filtered);
    if (split) phase[UNFILTER] += now_ms() - t;
    *size_out = row_bytes * height;
    return pixels;
}

/* libspng and every prototype on FILE; exits 1 unless all bytes agree. */
static int png_verify(void) {
    size_t expected_size, size;
    unsigned char *expected = png_spng(&expected_size);
    for (variant = 0; variant < VARIANTS; variant++) {
        unsigned char *pixels = png_deflate(&size);
        size_t i = 0;
        while (i < size && i < expected_size && pixels[i] == expected[i]) i++;
        if (size != expected_size || i < size) {
            fprintf(stderr, "raw_codecs: png-verify: %s: %zu bytes, libspng %zu; first difference at byte %zu\n",
                    variant_names[variant], size, expected_size, i);
            exit(1);
        }
        free(pixels);
    }
    printf("{\"identical\": true, \"bytes\": %zu}\n", expected_size);
    return 0;
}

static void webp(void) {
    WebPBitstreamFeatures features;
    if (WebPGetFeatures(input, input_size, &features) != VP8_STATUS_OK) fail("features");
    int channels = features.has_alpha ? 4 : 3;
    size_t stride = (size_t)features.width * channels, size = stride * features.height;
    unsigned char *pixels = pixels_alloc(size);
    unsigned char *ok = features.has_alpha
        ? WebPDecodeRGBAInto(input, input_size, pixels, size, (int)stride)
        : WebPDecodeRGBInto(input, input_size, pixels, size, (int)stride);
    if (!ok) fail("decode");
    pixels_free(pixels);
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

static int ends_with(char *mode, const char *suffix) { /* and cuts it off */
    size_t n = strlen(mode), k = strlen(suffix);
    if (n <= k || strcmp(mode + n - k, suffix)) return 0;
    mode[n - k] = 0;
    return 1;
}

static double median(double *times, int n) { /* sorts times */
    for (int i = 1; i < n; i++) /* insertion sort */
        for (int j = i; j > 0 && times[j] < times[j - 1]; j--) { double t = times[j]; times[j] = times[j - 1]; times[j - 1] = t; }
    return n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
}

int main(int argc, char **argv) {
    if (argc != 4) fail("usage: raw_codecs MODE FILE ITERATIONS (see the comment at the top)");
    char *mode = argv[1];
    split = ends_with(mode, "-split");
    reuse = ends_with(mode, "-reuse");
    huge = ends_with(mode, "-huge");
    FILE *f = fopen(argv[2], "rb");
    if (!f) fail("cannot open file");
    fseek(f, 0, SEEK_END); input_size = ftell(f); fseek(f, 0, SEEK_SET);
    input = malloc(input_size);
    if (fread(input, 1, input_size, f) != input_size) fail("cannot read file");
    fclose(f);
    if (!strcmp(mode, "png-verify")) return png_verify();
    int iterations = atoi(argv[3]);
    double *times = malloc(sizeof(double) * iterations), *phases = malloc(sizeof(double) * iterations * PHASES);
    for (int i = -1; i < iterations; i++) {
        memset(phase, 0, sizeof phase);
        size_t size;
        double start = now_ms();
        if (!strcmp(mode, "jpeg")) jpeg(0);
        else if (!strcmp(mode, "jpeg-thumb")) jpeg(1);
        else if (!strcmp(mode, "jpeg-icc") || !strcmp(mode, "jpeg-icc-reuse")) jpeg_icc();
        else if (!strcmp(mode, "png")) png();
        else if (!strncmp(mode, "png-libdeflate", 14)) {
            for (variant = 0; variant < VARIANTS && strcmp(mode, variant_names[variant]); variant++) {}
            if (variant == VARIANTS) fail("unknown codec");
            pixels_free(png_deflate(&size));
        }
        else if (!strcmp(mode, "webp")) webp();
        else if (!strcmp(mode, "gif")) gif();
        else if (!strcmp(mode, "gif-rgba")) gif_rgba();
        else fail("unknown codec");
        if (i >= 0) {
            times[i] = now_ms() - start;
            for (int p = 0; p < PHASES; p++) phases[p * iterations + i] = phase[p];
        }
    }
    double median_ms = median(times, iterations); /* sorts: times[0] is then the minimum */
    printf("{\"median_ms\": %.3f, \"min_ms\": %.3f", median_ms, times[0]);
    if (split) {
        static const char *names[PHASES] = {"crc_ms", "idat_copy_ms", "inflate_ms", "unfilter_ms", "paeth_ms"};
        for (int p = 0; p < PHASES; p++) printf(", \"%s\": %.3f", names[p], median(phases + p * iterations, iterations));
        long runs = iterations + 1; /* rows per filter type, per decode */
        printf(", \"rows_by_filter\": [%ld, %ld, %ld, %ld, %ld]", filter_rows[0] / runs, filter_rows[1] / runs,
               filter_rows[2] / runs, filter_rows[3] / runs, filter_rows[4] / runs);
    }
    printf("}\n");
    return 0;
}
