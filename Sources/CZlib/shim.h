#pragma once
#include <zlib.h>

/// `input` as one zlib stream at `level` with `strategy` (Z_RLE,
/// Z_FILTERED, ...), in `output`: its length, or 0 when `output` is too
/// short or zlib fails. `input` of any length (fed in pieces zlib's 32-bit
/// counts hold). deflateInit2 is a macro Swift cannot import.
static inline size_t imago_zlib_compress(const unsigned char *input, size_t inputCount, unsigned char *output,
                                         size_t outputCount, int level, int strategy) {
    z_stream stream = {0};
    if (deflateInit2(&stream, level, Z_DEFLATED, 15, 8, strategy) != Z_OK) return 0;
    const size_t piece = 1u << 30;
    size_t written = 0, read = 0;
    int status = Z_OK;
    while (status == Z_OK || status == Z_BUF_ERROR) {
        size_t inputLeft = inputCount - read, outputLeft = outputCount - written;
        if (outputLeft == 0) break;
        stream.next_in = (unsigned char *)input + read;
        stream.avail_in = (uInt)(inputLeft < piece ? inputLeft : piece);
        stream.next_out = output + written;
        stream.avail_out = (uInt)(outputLeft < piece ? outputLeft : piece);
        uInt offered = stream.avail_in, room = stream.avail_out;
        status = deflate(&stream, inputLeft <= piece ? Z_FINISH : Z_NO_FLUSH);
        read += offered - stream.avail_in;
        written += room - stream.avail_out;
        if (status == Z_STREAM_END) break;
        if (status == Z_BUF_ERROR && offered == stream.avail_in && room == stream.avail_out) break;
    }
    deflateEnd(&stream);
    return status == Z_STREAM_END ? written : 0;
}

/// The most `imago_zlib_compress` can write for `count` bytes.
static inline size_t imago_zlib_bound(size_t count) {
    // deflateBound's stored-block worst case, in 64-bit arithmetic.
    return count + (count >> 12) + (count >> 14) + (count >> 25) + 13 + 6 + 64;
}
