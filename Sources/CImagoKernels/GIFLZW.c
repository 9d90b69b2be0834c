#include "ImagoKernels.h"

#include <stdlib.h>
#include <string.h>

/*
 * A GIF frame's LZW raster decoded in one call, for frames whose data is
 * clean. The rules of the code stream are giflib's (DGifDecompressLine and
 * DGifDecompressInput): the code width grows from a count of the codes read
 * since the last clear code, the table stops growing at 4096 entries, and
 * the pixels end the frame (what follows them in the raster is skipped, up
 * to the empty sub-block). Whatever giflib would treat as an error or
 * decode in its own peculiar way (a code not yet in the table, an early end
 * code, an empty sub-block before the pixels are complete, data that ends
 * early, a minimum code size outside 2...8) is declined: the caller lets
 * giflib decode the frame, so the outcome is always giflib's.
 *
 * Each table entry is the place of its string in the output: a new entry
 * is the previous code's string followed by the first byte of the current
 * one, which the output holds contiguously. A code is decoded by copying its
 * string from there, as an LZ77 match, instead of walking a chain of
 * prefixes one byte at a time.
 */

#define GIF_TABLE_SIZE 4096

/* Where the 256 one-byte strings of the literal codes lie in `output`: past anything the codes write. */
#define GIF_LITERALS (4096 + 16)

/* One table entry: where its string starts in the output, and its length (0: the clear or end code). */
typedef struct {
    uint32_t start;
    uint32_t length;
} gif_string;

static inline uint64_t load64(const uint8_t *bytes) {
    uint64_t word;
    memcpy(&word, bytes, 8);
    return word;   /* little-endian hosts only: GIF's bit order is LSB first */
}

ptrdiff_t imago_gif_lzw_decode(const uint8_t *data, size_t size, unsigned codeSize,
                               uint8_t *output, size_t count, size_t capacity) {
    if (count == 0 || codeSize < 2 || codeSize > 8 || capacity < IMAGO_GIF_LZW_SLACK || count > capacity - IMAGO_GIF_LZW_SLACK
        || count > UINT32_MAX - 2 * IMAGO_GIF_LZW_SLACK) return -1;
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
    return -1;
#endif

    /* The sub-blocks, through the empty one; any cut short: declined (giflib fails on them). */
    size_t end = 0, total = 0;
    while (1) {
        if (end >= size) return -1;
        const size_t length = data[end++];
        if (length == 0) break;
        if (length > size - end) return -1;
        end += length;
        total += length;
    }
    /* Their payloads joined, with eight zero bytes after them for the 64-bit reads. */
    uint8_t *joined = malloc(total + 8);
    if (joined == NULL) return -1;
    for (size_t offset = 0, filled = 0; filled < total;) {
        const size_t length = data[offset];
        memcpy(joined + filled, data + offset + 1, length);
        filled += length;
        offset += 1 + length;
    }
    memset(joined + total, 0, 8);

    /* The literal codes' strings, 0...255 and eight bytes for the 64-bit copies, out of the codes' reach. */
    const size_t literals = count + GIF_LITERALS;
    for (unsigned byte = 0; byte < 256; byte++) output[literals + byte] = (uint8_t)byte;
    memset(output + literals + 256, 0, 8);
    gif_string table[GIF_TABLE_SIZE];
    const unsigned clear = 1u << codeSize, stop = clear + 1;
    for (unsigned code = 0; code < clear; code++) table[code] = (gif_string){(uint32_t)(literals + code), 1};
    table[clear] = table[stop] = (gif_string){0, 0};

    const uint8_t *input = joined, *const inputEnd = joined + total;
    uint64_t bits = 0;
    unsigned bitCount = 0;
    unsigned width = codeSize + 1, limit = 1u << width, next = stop + 1;
    size_t previousStart = 0, previousLength = 0, position = 0;
    ptrdiff_t result = -1;

#define READ_CODE(code)                                            \
    do {                                                           \
        if (bitCount < width) {                                    \
            /* Up to seven bytes more: at least 56 bits in hand. */ \
            if (input > inputEnd) goto done;                       \
            bits |= load64(input) << bitCount;                     \
            input += (63 - bitCount) >> 3;                         \
            bitCount |= 56;                                        \
        }                                                          \
        code = (unsigned)(bits & (limit - 1));                     \
        bits >>= width;                                            \
        bitCount -= width;                                         \
    } while (0)

    /* The first code, as after a clear code: a literal, defining nothing. */
    unsigned code;
    goto first;
    while (position < count) {
        READ_CODE(code);
        size_t start, length;
        if (code < next) {
            start = table[code].start;
            length = table[code].length;
            if (length == 0) {
                if (code != clear) goto done;   /* the end code, before the last pixel */
            first:
                /* giflib's code count cannot widen the first code after a clear for sizes of 2 and up. */
                width = codeSize + 1;
                limit = 1u << width;
                next = stop + 1;
                do {
                    READ_CODE(code);
                } while (code == clear);
                if (code > clear) goto done;   /* the end code, or a code not yet defined */
                output[position] = (uint8_t)code;
                previousStart = position;
                previousLength = 1;
                position += 1;
                continue;
            }
        } else if (code == next && next < GIF_TABLE_SIZE) {
            /* The code being defined: the previous string and its own first byte. */
            start = previousStart;
            length = previousLength + 1;
        } else {
            goto done;   /* a code not yet defined */
        }
        /* Never true (strings are at most 4096 bytes and end before the literals): a guard. */
        if (length > GIF_TABLE_SIZE || position + length + 8 > literals) goto done;
        const uint8_t *source = output + start;
        uint8_t *target = output + position;
        if (start + 8 <= position || start >= literals) {
            /* Eight bytes at a time; the bytes written past the string are rewritten by the next codes. */
            uint8_t *const targetEnd = target + length;
            do {
                memcpy(target, source, 8);
                source += 8;
                target += 8;
            } while (target < targetEnd);
        } else {
            /* Overlapping (the code just being defined, or a short distance): a byte at a time, forward. */
            for (size_t i = 0; i < length; i++) target[i] = source[i];
        }
        if (next < GIF_TABLE_SIZE) {
            table[next].start = (uint32_t)previousStart;
            table[next].length = (uint32_t)(previousLength + 1);
            /* giflib widens the codes once its count of codes passes 2^width: here, when the table reaches it. */
            if (++next == limit && width < 12) {
                width++;
                limit <<= 1;
            }
        }
        previousStart = position;
        previousLength = length;
        position += length;
    }
#undef READ_CODE
    /* The codes must have come from the data, not from the zeros after it. */
    if ((size_t)(input - joined) * 8 - bitCount <= total * 8) result = (ptrdiff_t)end;
done:
    free(joined);
    return result;
}

void imago_gif_draw_row(const uint8_t *indices, size_t count, const uint32_t *palette, uint8_t *destination,
                        int keepsTransparent) {
    if (!keepsTransparent) {
        for (size_t x = 0; x < count; x++) memcpy(destination + 4 * x, &palette[indices[x]], 4);
        return;
    }
    for (size_t x = 0; x < count; x++) {
        const uint32_t color = palette[indices[x]];
        if (color != 0) memcpy(destination + 4 * x, &color, 4);
    }
}
