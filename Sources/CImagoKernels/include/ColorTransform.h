#ifndef IMAGO_COLOR_TRANSFORM_H
#define IMAGO_COLOR_TRANSFORM_H

#include <stddef.h>
#include <stdint.h>

/// Entries of a matrix-and-curves transform's output table: linear light
/// from 0 to 1 in 16,383 steps (lcms2's 8-bit matrix-shaper uses as many).
#define IMAGO_COLOR_ENCODE_STEPS 16384

/// A conversion from one matrix-and-curves RGB space to another in 8 bits:
/// each channel made linear by its curve, the 3x3 matrix applied, the
/// result clamped to [0, 1] and encoded by one output table. Opaque; made
/// by `imago_matrix_shaper_make`, freed by `imago_matrix_shaper_free`.
typedef struct imago_matrix_shaper imago_matrix_shaper;

/// Makes a transform, or returns NULL when out of memory.
///
/// - `linear`: 3 x 256 values, linear light (0 to 1) of each input level of
///   red, green and blue, in that order.
/// - `matrix`: row-major 3x3; output channel `i` is the sum over `j` of
///   `matrix[3 * i + j]` times linear input channel `j`.
/// - `encode`: `IMAGO_COLOR_ENCODE_STEPS` output levels, step `s` for linear
///   light `s / (IMAGO_COLOR_ENCODE_STEPS - 1)`.
imago_matrix_shaper *imago_matrix_shaper_make(const float *linear, const float *matrix, const uint8_t *encode);

/// Frees a transform made by `imago_matrix_shaper_make`.
void imago_matrix_shaper_free(imago_matrix_shaper *transform);

/// Converts `height` rows of `width` pixels of `channels` bytes (3, RGB; or
/// 4, RGBA, whose alpha is copied) from `input` (`inputStride` bytes a row)
/// to `output` (`outputStride` bytes a row). The two may not overlap.
void imago_matrix_shaper_convert(const imago_matrix_shaper *transform, const uint8_t *input, size_t inputStride,
                                 uint8_t *output, size_t outputStride, size_t width, size_t height, size_t channels);

/// Maps each colour byte of `height` rows of `width` pixels of `channels`
/// bytes through `table` (256 entries); with 2 or 4 channels the last,
/// alpha, is copied. For gray profiles (one table for gray, or the same
/// table for R, G and B).
void imago_table_convert(const uint8_t *table, const uint8_t *input, size_t inputStride,
                         uint8_t *output, size_t outputStride, size_t width, size_t height, size_t channels);

#endif
