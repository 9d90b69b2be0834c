#include "ImagoKernels.h"
#include <string.h>

// An image's colours counted in an open-addressing table of 1024 slots (at
// most 256 of them full, so a probe ends quickly), with the last colour
// looked up kept aside: flat graphics repeat a colour for long runs, and a
// photo gives up within its first few hundred pixels.

enum { IMAGO_PALETTE_SLOTS = 1024 };

/// A pixel's bytes as one number, alpha 255 for RGB.
static inline uint32_t imago_palette_key(const uint8_t *pixel, size_t bytesPerPixel) {
    uint32_t alpha = bytesPerPixel == 4 ? pixel[3] : 255u;
    return (uint32_t)pixel[0] | (uint32_t)pixel[1] << 8 | (uint32_t)pixel[2] << 16 | alpha << 24;
}

/// Fills `indices` and `colours` with the image's entries; returns how many,
/// or -1 past 256. Inlined for each pixel size, so the key is built with
/// no branch on it.
static inline int imago_palette_count(const uint8_t *pixels, size_t stride, size_t width, size_t height,
                                      size_t bytesPerPixel, uint8_t *indices, uint32_t colours[256]) {
    uint32_t keys[IMAGO_PALETTE_SLOTS];
    int16_t slots[IMAGO_PALETTE_SLOTS];   // the entry a key has, -1 for an empty slot
    memset(slots, 0xFF, sizeof slots);
    int count = 0;
    // The first pixel's key is looked up: no entry has it yet.
    uint32_t lastKey = ~imago_palette_key(pixels, bytesPerPixel);
    uint8_t lastIndex = 0;
    for (size_t y = 0; y < height; y++) {
        const uint8_t *row = pixels + y * stride;
        uint8_t *out = indices + y * width;
        for (size_t x = 0; x < width; x++) {
            uint32_t key = imago_palette_key(row + x * bytesPerPixel, bytesPerPixel);
            if (key != lastKey) {
                uint32_t slot = (key * 2654435761u) >> 22;   // the top 10 bits of a multiplicative hash
                while (slots[slot] >= 0 && keys[slot] != key) slot = (slot + 1) & (IMAGO_PALETTE_SLOTS - 1);
                if (slots[slot] < 0) {
                    if (count == 256) return -1;
                    keys[slot] = key;
                    slots[slot] = (int16_t)count;
                    colours[count++] = key;
                }
                lastKey = key;
                lastIndex = (uint8_t)slots[slot];
            }
            out[x] = lastIndex;
        }
    }
    return count;
}

int imago_png_palette(const uint8_t *pixels, size_t stride, size_t width, size_t height, size_t bytesPerPixel,
                      uint8_t *indices, uint8_t *palette) {
    uint32_t colours[256];
    int count;
    if (width == 0 || height == 0) return -1;
    if (bytesPerPixel == 3) count = imago_palette_count(pixels, stride, width, height, 3, indices, colours);
    else if (bytesPerPixel == 4) count = imago_palette_count(pixels, stride, width, height, 4, indices, colours);
    else return -1;
    if (count < 0) return -1;
    // Entries with alpha below 255 first, so a tRNS chunk lists only those.
    uint8_t remap[256];
    int translucent = 0;
    for (int i = 0; i < count; i++) if (colours[i] >> 24 != 255) translucent++;
    int nextTranslucent = 0, nextOpaque = translucent, moved = 0;
    for (int i = 0; i < count; i++) {
        int target = colours[i] >> 24 != 255 ? nextTranslucent++ : nextOpaque++;
        remap[i] = (uint8_t)target;
        moved |= target != i;
        uint32_t colour = colours[i];
        for (int channel = 0; channel < 4; channel++) palette[target * 4 + channel] = (uint8_t)(colour >> (8 * channel));
    }
    if (moved) {
        for (size_t i = 0, total = width * height; i < total; i++) indices[i] = remap[indices[i]];
    }
    return count;
}
