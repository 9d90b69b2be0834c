#include "ImagoKernels.h"
#include <stdlib.h>
#include <string.h>

// Written as plain loops over bytes so the compiler vectorises each one
// (clang at -O2): encoding filters read only the source rows, so no loop
// carries a dependency from one byte to the next.

static uint32_t imago_png_cost(const uint8_t *restrict row, size_t count) {
    uint32_t sum = 0;
    for (size_t i = 0; i < count; i++) {
        int value = (int8_t)row[i];
        sum += (uint32_t)(value < 0 ? -value : value);
    }
    return sum;
}

void imago_png_filter_rows(const uint8_t *pixels, size_t stride, size_t rowBytes, size_t height, size_t bytesPerPixel,
                           uint8_t *output, uint8_t *scratch) {
    uint8_t *restrict sub = scratch;
    uint8_t *restrict upFiltered = scratch + rowBytes;
    uint8_t *restrict average = scratch + 2 * rowBytes;
    uint8_t *restrict paeth = scratch + 3 * rowBytes;
    uint8_t *zero = scratch + 4 * rowBytes;
    memset(zero, 0, rowBytes);
    size_t bpp = bytesPerPixel < rowBytes ? bytesPerPixel : rowBytes;
    for (size_t y = 0; y < height; y++) {
        const uint8_t *restrict row = pixels + y * stride;
        const uint8_t *restrict up = y > 0 ? pixels + (y - 1) * stride : zero;
        for (size_t i = 0; i < bpp; i++) {
            sub[i] = row[i];
            average[i] = (uint8_t)(row[i] - (up[i] >> 1));
            paeth[i] = (uint8_t)(row[i] - up[i]);
        }
        for (size_t i = 0; i < rowBytes; i++) upFiltered[i] = (uint8_t)(row[i] - up[i]);
        for (size_t i = bpp; i < rowBytes; i++) sub[i] = (uint8_t)(row[i] - row[i - bpp]);
        for (size_t i = bpp; i < rowBytes; i++) average[i] = (uint8_t)(row[i] - ((row[i - bpp] + up[i]) >> 1));
        for (size_t i = bpp; i < rowBytes; i++) {
            int a = row[i - bpp], b = up[i], c = up[i - bpp];
            int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
            // Ties go to a, then b, as the specification's predictor says.
            int predictor = pb < pa ? b : a;
            int smallest = pb < pa ? pb : pa;
            predictor = pc < smallest ? c : predictor;
            paeth[i] = (uint8_t)(row[i] - predictor);
        }
        const uint8_t *candidates[5] = {row, sub, upFiltered, average, paeth};
        int best = 0;
        uint32_t bestCost = imago_png_cost(row, rowBytes);
        for (int filter = 1; filter < 5; filter++) {
            uint32_t cost = imago_png_cost(candidates[filter], rowBytes);
            if (cost < bestCost) { bestCost = cost; best = filter; }
        }
        uint8_t *destination = output + y * (rowBytes + 1);
        destination[0] = (uint8_t)best;
        memcpy(destination + 1, candidates[best], rowBytes);
    }
}
