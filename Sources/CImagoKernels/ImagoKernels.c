#include "ImagoKernels.h"

/* No fused multiply-add: the results must match Swift's separate rounding. */
#pragma STDC FP_CONTRACT OFF

#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

static inline uint8_t to_byte(float value) {
    value += 0.5f;
    value = value >= 0.0f ? value : 0.0f;   /* also turns NaN into 0, as the vector paths do */
    value = value < 255.0f ? value : 255.0f;
    return (uint8_t)value;                 /* truncates: value is in [0, 255] */
}

void imago_floats_to_bytes(const float *input, uint8_t *output, size_t count) {
    size_t i = 0;
#if defined(__SSE2__)
    const __m128 half = _mm_set1_ps(0.5f), zero = _mm_setzero_ps(), top = _mm_set1_ps(255.0f);
    for (; i + 16 <= count; i += 16) {
        __m128i lanes[4];
        for (int k = 0; k < 4; k++) {
            __m128 value = _mm_add_ps(_mm_loadu_ps(input + i + 4 * k), half);
            value = _mm_min_ps(_mm_max_ps(value, zero), top);   /* maxps(NaN, 0) is 0 */
            lanes[k] = _mm_cvttps_epi32(value);
        }
        __m128i words = _mm_packs_epi32(lanes[0], lanes[1]), high = _mm_packs_epi32(lanes[2], lanes[3]);
        _mm_storeu_si128((__m128i *)(output + i), _mm_packus_epi16(words, high));
    }
#elif defined(__ARM_NEON)
    const float32x4_t half = vdupq_n_f32(0.5f), zero = vdupq_n_f32(0.0f), top = vdupq_n_f32(255.0f);
    for (; i + 8 <= count; i += 8) {
        float32x4_t low = vaddq_f32(vld1q_f32(input + i), half), high = vaddq_f32(vld1q_f32(input + i + 4), half);
        low = vminq_f32(vmaxq_f32(low, zero), top);
        high = vminq_f32(vmaxq_f32(high, zero), top);
        uint16x8_t words = vcombine_u16(vmovn_u32(vcvtq_u32_f32(low)), vmovn_u32(vcvtq_u32_f32(high)));
        vst1_u8(output + i, vmovn_u16(words));
    }
#endif
    for (; i < count; i++) output[i] = to_byte(input[i]);
}

#if defined(__SSE2__)
/* Four bytes at `p` as four floats. */
static inline __m128 load4(const uint8_t *p) {
    uint32_t word;
    memcpy(&word, p, 4);
    __m128i bytes = _mm_cvtsi32_si128((int)word), zero = _mm_setzero_si128();
    return _mm_cvtepi32_ps(_mm_unpacklo_epi16(_mm_unpacklo_epi8(bytes, zero), zero));
}
#endif

void imago_resample_row_rgb(const uint8_t *row, size_t rowBytes, const intptr_t *starts, const float *weights,
                            size_t taps, size_t outputWidth, float *output) {
    const float *w = weights;
    for (size_t x = 0; x < outputWidth; x++, output += 3) {
        size_t source = (size_t)starts[x] * 3;
#if defined(__SSE2__)
        if (source + taps * 3 + 1 <= rowBytes) {   /* every 4-byte load stays in the row */
            __m128 sum = _mm_setzero_ps();
            for (size_t k = 0; k < taps; k++, source += 3)
                sum = _mm_add_ps(sum, _mm_mul_ps(load4(row + source), _mm_set1_ps(*w++)));
            float lanes[4];
            _mm_storeu_ps(lanes, sum);
            output[0] = lanes[0]; output[1] = lanes[1]; output[2] = lanes[2];
            continue;
        }
#endif
        float r = 0, g = 0, b = 0;
        for (size_t k = 0; k < taps; k++, source += 3) {
            float weight = *w++;
            r += (float)row[source] * weight;
            g += (float)row[source + 1] * weight;
            b += (float)row[source + 2] * weight;
        }
        output[0] = r; output[1] = g; output[2] = b;
    }
}

void imago_resample_row_rgba(const uint8_t *row, const intptr_t *starts, const float *weights,
                             size_t taps, size_t outputWidth, float *output) {
    const float *w = weights;
    for (size_t x = 0; x < outputWidth; x++, output += 4) {
        size_t source = (size_t)starts[x] * 4;
#if defined(__SSE2__)
        __m128 sum = _mm_setzero_ps();
        const __m128 one = _mm_set_ps(1.0f, 0.0f, 0.0f, 0.0f), colours = _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1));
        for (size_t k = 0; k < taps; k++, source += 4) {
            __m128 pixel = load4(row + source);
            /* alpha times weight, in every lane; the alpha lane then sums 1 x that. */
            __m128 weighted = _mm_mul_ps(_mm_shuffle_ps(pixel, pixel, _MM_SHUFFLE(3, 3, 3, 3)), _mm_set1_ps(*w++));
            pixel = _mm_or_ps(_mm_and_ps(pixel, colours), one);
            sum = _mm_add_ps(sum, _mm_mul_ps(pixel, weighted));
        }
        _mm_storeu_ps(output, sum);
#else
        float r = 0, g = 0, b = 0, a = 0;
        for (size_t k = 0; k < taps; k++, source += 4) {
            float weighted = (float)row[source + 3] * *w++;
            r += (float)row[source] * weighted;
            g += (float)row[source + 1] * weighted;
            b += (float)row[source + 2] * weighted;
            a += weighted;
        }
        output[0] = r; output[1] = g; output[2] = b; output[3] = a;
#endif
    }
}

#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
#include <immintrin.h>
#define IMAGO_HAS_AVX2_PATH 1
/// The unpremultiplied sums of `imago_accumulate_row`, 16 bytes a step with
/// AVX2 (the same multiplications and additions, so the same floats);
/// returns how many values it did.
__attribute__((target("avx2"))) static size_t imago_accumulate_avx2(const uint8_t *row, size_t count, float weight, int first,
                                                                     float *sums) {
    const __m256 w = _mm256_set1_ps(weight);
    size_t i = 0;
    for (; i + 16 <= count; i += 16) {
        __m128i bytes = _mm_loadu_si128((const __m128i *)(row + i));
        __m256 low = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(bytes)), w);
        __m256 high = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(bytes, 8))), w);
        if (!first) {
            low = _mm256_add_ps(_mm256_loadu_ps(sums + i), low);
            high = _mm256_add_ps(_mm256_loadu_ps(sums + i + 8), high);
        }
        _mm256_storeu_ps(sums + i, low);
        _mm256_storeu_ps(sums + i + 8, high);
    }
    return i;
}
#endif

void imago_accumulate_row(const uint8_t *row, size_t pixels, size_t channels, int premultiplies, float weight, int first,
                          float *sums) {
    size_t count = pixels * channels, i = 0;
    if (!premultiplies) {
#if defined(IMAGO_HAS_AVX2_PATH)
        if (__builtin_cpu_supports("avx2")) i = imago_accumulate_avx2(row, count, weight, first, sums);
#endif
#if defined(__SSE2__)
        const __m128 w = _mm_set1_ps(weight);
        const __m128i zero = _mm_setzero_si128();
        for (; i + 16 <= count; i += 16) {
            __m128i bytes = _mm_loadu_si128((const __m128i *)(row + i));
            __m128i low = _mm_unpacklo_epi8(bytes, zero), high = _mm_unpackhi_epi8(bytes, zero);
            __m128 values[4] = {
                _mm_cvtepi32_ps(_mm_unpacklo_epi16(low, zero)), _mm_cvtepi32_ps(_mm_unpackhi_epi16(low, zero)),
                _mm_cvtepi32_ps(_mm_unpacklo_epi16(high, zero)), _mm_cvtepi32_ps(_mm_unpackhi_epi16(high, zero)),
            };
            for (int k = 0; k < 4; k++) {
                __m128 product = _mm_mul_ps(values[k], w);
                float *out = sums + i + 4 * k;
                _mm_storeu_ps(out, first ? product : _mm_add_ps(_mm_loadu_ps(out), product));
            }
        }
#endif
        if (first) {
            for (; i < count; i++) sums[i] = (float)row[i] * weight;
        } else {
            for (; i < count; i++) sums[i] += (float)row[i] * weight;
        }
        return;
    }
    size_t alpha = channels - 1;
    for (size_t x = 0; x < pixels; x++, row += channels, sums += channels) {
        float weighted = (float)row[alpha] * weight;
        for (size_t c = 0; c < alpha; c++) {
            float product = (float)row[c] * weighted;
            sums[c] = first ? product : sums[c] + product;
        }
        sums[alpha] = first ? weighted : sums[alpha] + weighted;
    }
}

void imago_resample_float_row(const float *row, size_t channels, const intptr_t *starts, const float *weights,
                              size_t taps, size_t outputWidth, float *output) {
    const float *w = weights;
#if defined(__SSE2__)
    if (channels == 3 || channels == 4) {
        for (size_t x = 0; x < outputWidth; x++, output += channels) {
            const float *source = row + (size_t)starts[x] * channels;
            __m128 sum = _mm_setzero_ps();
            /* Three channels read a fourth float, past the last pixel's: the row has one more. */
            for (size_t k = 0; k < taps; k++, source += channels)
                sum = _mm_add_ps(sum, _mm_mul_ps(_mm_loadu_ps(source), _mm_set1_ps(*w++)));
            if (channels == 4) {
                _mm_storeu_ps(output, sum);
            } else {
                float lanes[4];
                _mm_storeu_ps(lanes, sum);
                output[0] = lanes[0]; output[1] = lanes[1]; output[2] = lanes[2];
            }
        }
        return;
    }
#endif
    for (size_t x = 0; x < outputWidth; x++, output += channels) {
        const float *source = row + (size_t)starts[x] * channels;
        for (size_t c = 0; c < channels; c++) output[c] = 0;
        for (size_t k = 0; k < taps; k++, source += channels) {
            float weight = *w++;
            for (size_t c = 0; c < channels; c++) output[c] += source[c] * weight;
        }
    }
}
