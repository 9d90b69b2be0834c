#include "ImagoKernels.h"
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// PNG's filters of one row, all five at once, with the cost of each (the
// sum of the filtered bytes' absolute values, read as signed): one pass
// over the row that reads each source byte once and writes four candidate
// rows (None's is the row itself). SSE2 does 16 bytes a step where the
// target has it; the scalar loop does the rest and every byte elsewhere,
// with the same arithmetic, so the choice and the bytes are the same on
// every platform.

/// The scalar filters of bytes `from` to `to` of a row, their costs added to `costs`.
static void imago_png_filter_span(const uint8_t *row, const uint8_t *up, size_t bpp, size_t from, size_t to,
                                  uint8_t *sub, uint8_t *upFiltered, uint8_t *average, uint8_t *paeth, uint32_t costs[5]) {
    for (size_t i = from; i < to; i++) {
        int x = row[i], b = up[i];
        int a = i >= bpp ? row[i - bpp] : 0, c = i >= bpp ? up[i - bpp] : 0;
        int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
        // Ties go to a, then b, as the specification's predictor says.
        int predictor = pb < pa ? b : a;
        int smallest = pb < pa ? pb : pa;
        predictor = pc < smallest ? c : predictor;
        uint8_t values[5] = {(uint8_t)x, (uint8_t)(x - a), (uint8_t)(x - b), (uint8_t)(x - ((a + b) >> 1)),
                             (uint8_t)(x - predictor)};
        sub[i] = values[1];
        upFiltered[i] = values[2];
        average[i] = values[3];
        paeth[i] = values[4];
        for (int filter = 0; filter < 5; filter++) {
            int value = (int8_t)values[filter];
            costs[filter] += (uint32_t)(value < 0 ? -value : value);
        }
    }
}

#if defined(__SSE2__)
/// |v| of each signed byte, as an unsigned byte (128 for -128).
static inline __m128i imago_abs8(__m128i v) {
    return _mm_min_epu8(v, _mm_sub_epi8(_mm_setzero_si128(), v));
}

/// Paeth's predictor of 8 pixels' bytes, as 16-bit lanes.
static inline __m128i imago_paeth16(__m128i a, __m128i b, __m128i c) {
    __m128i bc = _mm_sub_epi16(b, c), ac = _mm_sub_epi16(a, c);
    __m128i sum = _mm_add_epi16(bc, ac);
    __m128i pa = _mm_max_epi16(bc, _mm_sub_epi16(_mm_setzero_si128(), bc));
    __m128i pb = _mm_max_epi16(ac, _mm_sub_epi16(_mm_setzero_si128(), ac));
    __m128i pc = _mm_max_epi16(sum, _mm_sub_epi16(_mm_setzero_si128(), sum));
    __m128i takeB = _mm_cmplt_epi16(pb, pa);
    __m128i predictor = _mm_or_si128(_mm_and_si128(takeB, b), _mm_andnot_si128(takeB, a));
    __m128i smallest = _mm_min_epi16(pa, pb);
    __m128i takeC = _mm_cmplt_epi16(pc, smallest);
    return _mm_or_si128(_mm_and_si128(takeC, c), _mm_andnot_si128(takeC, predictor));
}

/// The filters of bytes `from` to `to` (`from >= bpp`, whole steps of 16),
/// their costs added to `costs`.
static void imago_png_filter_sse2(const uint8_t *row, const uint8_t *up, size_t bpp, size_t from, size_t to,
                                  uint8_t *sub, uint8_t *upFiltered, uint8_t *average, uint8_t *paeth, uint32_t costs[5]) {
    const __m128i zero = _mm_setzero_si128(), one = _mm_set1_epi8(1);
    __m128i sums[5] = {zero, zero, zero, zero, zero};
    for (size_t i = from; i + 16 <= to; i += 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(row + i));
        __m128i a = _mm_loadu_si128((const __m128i *)(row + i - bpp));
        __m128i b = _mm_loadu_si128((const __m128i *)(up + i));
        __m128i c = _mm_loadu_si128((const __m128i *)(up + i - bpp));
        // (a + b) >> 1: the rounded-up average less the bit it rounded by.
        __m128i floor = _mm_sub_epi8(_mm_avg_epu8(a, b), _mm_and_si128(_mm_xor_si128(a, b), one));
        __m128i low = imago_paeth16(_mm_unpacklo_epi8(a, zero), _mm_unpacklo_epi8(b, zero), _mm_unpacklo_epi8(c, zero));
        __m128i high = imago_paeth16(_mm_unpackhi_epi8(a, zero), _mm_unpackhi_epi8(b, zero), _mm_unpackhi_epi8(c, zero));
        __m128i filtered[5] = {x, _mm_sub_epi8(x, a), _mm_sub_epi8(x, b), _mm_sub_epi8(x, floor),
                               _mm_sub_epi8(x, _mm_packus_epi16(low, high))};
        _mm_storeu_si128((__m128i *)(sub + i), filtered[1]);
        _mm_storeu_si128((__m128i *)(upFiltered + i), filtered[2]);
        _mm_storeu_si128((__m128i *)(average + i), filtered[3]);
        _mm_storeu_si128((__m128i *)(paeth + i), filtered[4]);
        for (int filter = 0; filter < 5; filter++) {
            sums[filter] = _mm_add_epi64(sums[filter], _mm_sad_epu8(imago_abs8(filtered[filter]), zero));
        }
    }
    for (int filter = 0; filter < 5; filter++) {
        // Two 64-bit halves; a row's cost fits 32 bits (rows under 2^24 bytes).
        costs[filter] += (uint32_t)_mm_cvtsi128_si32(sums[filter]) + (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(sums[filter], 8));
    }
}
#endif

void imago_png_filter_rows(const uint8_t *pixels, size_t stride, size_t rowBytes, size_t height, size_t bytesPerPixel,
                           uint8_t *output, uint8_t *scratch) {
    uint8_t *sub = scratch;
    uint8_t *upFiltered = scratch + rowBytes;
    uint8_t *average = scratch + 2 * rowBytes;
    uint8_t *paeth = scratch + 3 * rowBytes;
    uint8_t *zero = scratch + 4 * rowBytes;
    memset(zero, 0, rowBytes);
    size_t bpp = bytesPerPixel < rowBytes ? bytesPerPixel : rowBytes;
    for (size_t y = 0; y < height; y++) {
        const uint8_t *row = pixels + y * stride;
        const uint8_t *up = y > 0 ? pixels + (y - 1) * stride : zero;
        uint32_t costs[5] = {0, 0, 0, 0, 0};
        size_t done = 0;
#if defined(__SSE2__)
        // The first 16 bytes (which hold the first pixel, with no left
        // neighbour) are scalar, so every vector step reads inside the row.
        if (bpp <= 16 && rowBytes >= 32) {
            imago_png_filter_span(row, up, bpp, 0, 16, sub, upFiltered, average, paeth, costs);
            done = 16 + (rowBytes - 16) / 16 * 16;
            imago_png_filter_sse2(row, up, bpp, 16, done, sub, upFiltered, average, paeth, costs);
        }
#endif
        imago_png_filter_span(row, up, bpp, done, rowBytes, sub, upFiltered, average, paeth, costs);
        const uint8_t *candidates[5] = {row, sub, upFiltered, average, paeth};
        int best = 0;
        for (int filter = 1; filter < 5; filter++) {
            if (costs[filter] < costs[best]) best = filter;
        }
        uint8_t *destination = output + y * (rowBytes + 1);
        destination[0] = (uint8_t)best;
        memcpy(destination + 1, candidates[best], rowBytes);
    }
}

// Undoing the filters that depend on the pixel just produced (Sub, Average,
// Paeth) goes a pixel at a time; each pixel is read and written with exactly
// its own bytes (so an in-place pass whose output runs behind its input is
// safe) and worked on in 16-bit lanes.

#if defined(__SSE2__)
/// The `bpp` (3 or 4, a constant where it is inlined) bytes of a pixel as 16-bit lanes.
static inline __m128i imago_load_pixel(const uint8_t *p, size_t bpp) {
    uint32_t word = 0;
    if (bpp == 3) memcpy(&word, p, 3); else memcpy(&word, p, 4);
    return _mm_unpacklo_epi8(_mm_cvtsi32_si128((int)word), _mm_setzero_si128());
}

static inline void imago_store_pixel(uint8_t *p, __m128i lanes, size_t bpp) {
    uint32_t word = (uint32_t)_mm_cvtsi128_si32(_mm_packus_epi16(lanes, lanes));
    if (bpp == 3) memcpy(p, &word, 3); else memcpy(p, &word, 4);
}

/// One row of Sub, Average or Paeth for `bpp`-byte pixels; inlined once for each of 3 and 4.
static inline void imago_unfilter_pixels(uint8_t filter, const uint8_t *source, uint8_t *destination, const uint8_t *previous,
                                         size_t count, size_t bpp) {
    const __m128i mask = _mm_set1_epi16(0xFF);
    __m128i a = _mm_setzero_si128(), c = _mm_setzero_si128();
    if (filter == 1 || (filter == 4 && previous == NULL)) {   /* Paeth with no row above predicts from the left */
        for (size_t i = 0; i + bpp <= count; i += bpp) {
            a = _mm_and_si128(_mm_add_epi16(imago_load_pixel(source + i, bpp), a), mask);
            imago_store_pixel(destination + i, a, bpp);
        }
    } else if (filter == 3) {
        for (size_t i = 0; i + bpp <= count; i += bpp) {
            __m128i b = previous ? imago_load_pixel(previous + i, bpp) : _mm_setzero_si128();
            a = _mm_and_si128(_mm_add_epi16(imago_load_pixel(source + i, bpp), _mm_srli_epi16(_mm_add_epi16(a, b), 1)), mask);
            imago_store_pixel(destination + i, a, bpp);
        }
    } else {
        for (size_t i = 0; i + bpp <= count; i += bpp) {
            __m128i b = imago_load_pixel(previous + i, bpp);
            a = _mm_and_si128(_mm_add_epi16(imago_load_pixel(source + i, bpp), imago_paeth16(a, b, c)), mask);
            c = b;
            imago_store_pixel(destination + i, a, bpp);
        }
    }
}
#endif

int imago_png_unfilter_from_left(uint8_t filter, const uint8_t *source, uint8_t *destination, const uint8_t *previous,
                                 size_t count, size_t bpp) {
    if (filter != 1 && filter != 3 && filter != 4) return 0;
#if defined(__SSE2__)
    if (bpp == 3) { imago_unfilter_pixels(filter, source, destination, previous, count, 3); return 1; }
    if (bpp == 4) { imago_unfilter_pixels(filter, source, destination, previous, count, 4); return 1; }
#endif
    for (size_t i = 0; i < count; i++) {
        int x = source[i], a = i >= bpp ? destination[i - bpp] : 0;
        int b = previous ? previous[i] : 0, c = previous && i >= bpp ? previous[i - bpp] : 0;
        int predictor;
        if (filter == 1) {
            predictor = a;
        } else if (filter == 3) {
            predictor = (a + b) >> 1;
        } else {
            int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
            predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
        }
        destination[i] = (uint8_t)(x + predictor);
    }
    return 1;
}
