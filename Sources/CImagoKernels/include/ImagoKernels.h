#ifndef IMAGO_KERNELS_H
#define IMAGO_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "ColorTransform.h"

/// Rounds `count` floats to bytes, as Imago's resampler does: each value
/// plus 0.5, clamped to [0, 255], truncated. SSE2 or NEON where the target
/// has it, the same arithmetic in scalar code elsewhere, so the bytes are
/// identical on every platform.
void imago_floats_to_bytes(const float *input, uint8_t *output, size_t count);

/// One row resampled horizontally, as Imago's resampler does: output pixel
/// `x` sums `taps` source pixels from `starts[x]`, each times its weight
/// `weights[x * taps + k]`, in ascending order. RGB (3 channels) sums the
/// channels as they are; RGBA (4) premultiplies by alpha (each colour times
/// alpha times weight, and alpha times weight into the fourth sum). The
/// source row is `rowBytes` long and never read past. The float operations
/// are the scalar ones, in the same order, so the sums are bit for bit those
/// of the Swift loops they replace.
void imago_resample_row_rgb(const uint8_t *row, size_t rowBytes, const intptr_t *starts, const float *weights,
                            size_t taps, size_t outputWidth, float *output);
void imago_resample_row_rgba(const uint8_t *row, const intptr_t *starts, const float *weights,
                             size_t taps, size_t outputWidth, float *output);

/// One source row added into the vertical sums of an output row, for
/// resampling rows first (``imago_resample_float_row`` then resamples the
/// finished sums across): `sums[i]` becomes `row[i] * weight`, or gets it
/// added when `first` is 0, for `pixels * channels` values. With
/// `premultiplies`, the last channel is alpha and each colour is weighted by
/// alpha too (colour times alpha-times-weight; alpha-times-weight into the
/// alpha sum), so transparent pixels do not bleed. The float operations are
/// the scalar ones in the same order on every platform (SSE2 where there is
/// SSE2), so the sums are identical everywhere.
void imago_accumulate_row(const uint8_t *row, size_t pixels, size_t channels, int premultiplies, float weight, int first,
                          float *sums);

/// A row of float sums (`channels` floats a pixel) resampled horizontally:
/// output pixel `x` sums `taps` pixels from `starts[x]`, each times
/// `weights[x * taps + k]`, in ascending order, each channel as it is. With
/// 3 channels the row must hold one float more than its pixels (read, never
/// used). Identical on every platform, as above.
void imago_resample_float_row(const float *row, size_t channels, const intptr_t *starts, const float *weights,
                              size_t taps, size_t outputWidth, float *output);

/// PNG's filtering of `height` rows of `rowBytes` bytes (`stride` apart in
/// `pixels`, `bytesPerPixel` bytes a pixel): each row gets the filter of
/// the five whose output has the smallest sum of absolute values (as
/// libpng and Pillow choose), written to `output` as the filter's byte
/// followed by the filtered row, `rowBytes + 1` bytes a row. `scratch`
/// holds `5 * rowBytes` bytes. All five filters and their sums come from
/// one pass over each row, 16 bytes a step with SSE2 where the target has
/// it; the output is the same on every platform.
void imago_png_filter_rows(const uint8_t *pixels, size_t stride, size_t rowBytes, size_t height, size_t bytesPerPixel,
                           uint8_t *output, uint8_t *scratch);

/// PNG's Sub (1), Average (3) or Paeth (4) filter undone for one row of
/// `count` bytes, `bpp` bytes a pixel: the filters that predict from the
/// byte just produced, so they go a pixel at a time. `source` holds the
/// filtered bytes, `previous` the row above, unfiltered (NULL for the first
/// row), and `destination` gets the row; it may be `source` itself or start
/// before it (an in-place pass that drops each row's filter byte), never
/// after it. Returns 0 for any other filter type, else 1. SSE2 for 3- and
/// 4-byte pixels where the target has it; the same bytes everywhere.
int imago_png_unfilter_from_left(uint8_t filter, const uint8_t *source, uint8_t *destination, const uint8_t *previous,
                                 size_t count, size_t bpp);

/// The palette of an RGB (`bytesPerPixel` 3) or RGBA (4) image of at most
/// 256 colours, and each pixel's entry in it: `indices` gets `width` bytes
/// a row (`width * height` in all), `palette` 4 bytes an entry (red, green,
/// blue, alpha; alpha 255 for RGB), the entries with alpha below 255 first,
/// the rest in the order the image first has them. Returns the number of
/// entries, or -1 (and `indices` and `palette` undefined) for an image of
/// more colours or another `bytesPerPixel`. `palette` holds 1024 bytes.
int imago_png_palette(const uint8_t *pixels, size_t stride, size_t width, size_t height, size_t bytesPerPixel,
                      uint8_t *indices, uint8_t *palette);

/// The bytes `imago_gif_lzw_decode`'s output needs past the frame's pixels:
/// the last code's string may run past them, strings are copied eight bytes
/// at a time, and the literal codes' strings are kept after them.
#define IMAGO_GIF_LZW_SLACK 4376   /* 4096 + 16 + 264 */

/// Decodes a GIF frame's raster: `data` starts after the LZW minimum code
/// size (`codeSize`) and holds the data sub-blocks, `size` bytes at most
/// (the rest of the file). Writes `count` colour indices to `output`, which
/// holds `capacity` bytes, at least `count + IMAGO_GIF_LZW_SLACK` (the bytes
/// after the pixels are scratch). The codes are read as giflib reads them.
/// Returns the bytes of `data` the raster takes, through its empty
/// sub-block, or -1 when the frame is not one this decoder takes: damaged
/// data (a code not yet defined, an early end code, an empty or cut
/// sub-block), a code size outside 2...8, or a `count` of 0 or near 2^32 or larger.
/// Then the caller lets giflib decode the frame, which decides the outcome.
/// It never reads `data` past `size` nor writes `output` past `capacity`.
ptrdiff_t imago_gif_lzw_decode(const uint8_t *data, size_t size, unsigned codeSize,
                               uint8_t *output, size_t count, size_t capacity);

/// Draws `count` colour indices through `palette` (256 RGBA words, in
/// memory order) to `destination` (`4 * count` bytes). With
/// `keepsTransparent`, a palette word of 0 (the transparent index) leaves
/// the destination pixel as it was.
void imago_gif_draw_row(const uint8_t *indices, size_t count, const uint32_t *palette, uint8_t *destination,
                        int keepsTransparent);

/// APNG's `APNG_BLEND_OP_OVER` for one row of `count` straight-alpha RGBA8
/// pixels: `source` composited over `destination`, in place, rounded as
/// Imago's APNG decoder rounds it (see APNGBlend.c).
void imago_apng_blend_over_row(const uint8_t *source, uint8_t *destination, size_t count);

#endif
