#include "ColorTransform.h"
#include <stdlib.h>
#include <string.h>

// Each input level's linear light is stored already multiplied by the
// matrix column it meets, as four floats (the fourth zero), so a pixel is
// three table reads and two vector additions; then a clamp, a conversion
// to indices and three reads of the output table. The tables (12 KB and
// 16 KB) stay in the first-level cache. SSE2 on x86-64, NEON on ARM, the
// same arithmetic in scalar code elsewhere.

#if defined(__SSE2__)
#include <emmintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

struct imago_matrix_shaper {
    float columns[3][256][4];   // read unaligned: malloc's alignment is enough on every target
    uint8_t encode[IMAGO_COLOR_ENCODE_STEPS];
};

imago_matrix_shaper *imago_matrix_shaper_make(const float *linear, const float *matrix, const uint8_t *encode) {
    imago_matrix_shaper *transform = malloc(sizeof(imago_matrix_shaper));
    if (transform == NULL) return NULL;
    const float top = (float)(IMAGO_COLOR_ENCODE_STEPS - 1);
    for (int channel = 0; channel < 3; channel++) {
        for (int level = 0; level < 256; level++) {
            float value = linear[channel * 256 + level] * top;
            float *column = transform->columns[channel][level];
            column[0] = matrix[channel] * value;
            column[1] = matrix[3 + channel] * value;
            column[2] = matrix[6 + channel] * value;
            column[3] = 0.0f;
        }
    }
    memcpy(transform->encode, encode, IMAGO_COLOR_ENCODE_STEPS);
    return transform;
}

void imago_matrix_shaper_free(imago_matrix_shaper *transform) { free(transform); }

/// The output-table index of each channel of the pixel at `in`.
static inline void imago_indices(const imago_matrix_shaper *t, const uint8_t *in, int32_t index[4]) {
    const float top = (float)(IMAGO_COLOR_ENCODE_STEPS - 1);
#if defined(__SSE2__)
    __m128 sum = _mm_add_ps(_mm_add_ps(_mm_loadu_ps(t->columns[0][in[0]]), _mm_loadu_ps(t->columns[1][in[1]])),
                            _mm_loadu_ps(t->columns[2][in[2]]));
    sum = _mm_min_ps(_mm_max_ps(sum, _mm_setzero_ps()), _mm_set1_ps(top));
    _mm_storeu_si128((__m128i *)index, _mm_cvttps_epi32(_mm_add_ps(sum, _mm_set1_ps(0.5f))));
#elif defined(__ARM_NEON)
    float32x4_t sum = vaddq_f32(vaddq_f32(vld1q_f32(t->columns[0][in[0]]), vld1q_f32(t->columns[1][in[1]])),
                                vld1q_f32(t->columns[2][in[2]]));
    sum = vminq_f32(vmaxq_f32(sum, vdupq_n_f32(0.0f)), vdupq_n_f32(top));
    vst1q_s32(index, vcvtq_s32_f32(vaddq_f32(sum, vdupq_n_f32(0.5f))));
#else
    for (int c = 0; c < 3; c++) {
        float sum = t->columns[0][in[0]][c] + t->columns[1][in[1]][c] + t->columns[2][in[2]][c];
        sum = sum > 0.0f ? sum : 0.0f;
        sum = sum < top ? sum : top;
        index[c] = (int32_t)(sum + 0.5f);
    }
#endif
}

void imago_matrix_shaper_convert(const imago_matrix_shaper *transform, const uint8_t *input, size_t inputStride,
                                 uint8_t *output, size_t outputStride, size_t width, size_t height, size_t channels) {
    const uint8_t *encode = transform->encode;
    for (size_t y = 0; y < height; y++) {
        const uint8_t *in = input + y * inputStride;
        uint8_t *out = output + y * outputStride;
        if (channels == 4) {
            for (size_t x = 0; x < width; x++, in += 4, out += 4) {
                int32_t index[4];
                imago_indices(transform, in, index);
                out[0] = encode[index[0]];
                out[1] = encode[index[1]];
                out[2] = encode[index[2]];
                out[3] = in[3];
            }
        } else {
            for (size_t x = 0; x < width; x++, in += 3, out += 3) {
                int32_t index[4];
                imago_indices(transform, in, index);
                out[0] = encode[index[0]];
                out[1] = encode[index[1]];
                out[2] = encode[index[2]];
            }
        }
    }
}

void imago_table_convert(const uint8_t *table, const uint8_t *input, size_t inputStride,
                         uint8_t *output, size_t outputStride, size_t width, size_t height, size_t channels) {
    size_t colours = (channels == 2 || channels == 4) ? channels - 1 : channels;
    for (size_t y = 0; y < height; y++) {
        const uint8_t *restrict in = input + y * inputStride;
        uint8_t *restrict out = output + y * outputStride;
        for (size_t x = 0; x < width; x++, in += channels, out += channels) {
            for (size_t c = 0; c < colours; c++) out[c] = table[in[c]];
            if (colours < channels) out[colours] = in[colours];
        }
    }
}
