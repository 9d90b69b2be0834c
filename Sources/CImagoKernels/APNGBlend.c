#include "ImagoKernels.h"

#include <string.h>

/*
 * APNG_BLEND_OP_OVER on straight (not premultiplied) RGBA8, rounded as
 * Imago has always rounded it: with a = source alpha and d = destination
 * alpha times (255 - a), the output alpha scaled by 255 is o = 255 a + d,
 * each colour is (255 a source + d destination + o / 2) / o, and the alpha
 * is (o + 127) / 255. Opaque source pixels are copied and transparent ones
 * skipped, a run at a time: most pixels of an animation's frames are one
 * or the other.
 */
void imago_apng_blend_over_row(const uint8_t *source, uint8_t *destination, size_t count) {
    size_t x = 0;
    while (x < count) {
        const uint8_t alpha = source[4 * x + 3];
        if (alpha == 255) {
            size_t end = x + 1;
            while (end < count && source[4 * end + 3] == 255) end++;
            memcpy(destination + 4 * x, source + 4 * x, 4 * (end - x));
            x = end;
        } else if (alpha == 0) {
            x++;
            while (x < count && source[4 * x + 3] == 0) x++;
        } else {
            const uint8_t *s = source + 4 * x;
            uint8_t *t = destination + 4 * x;
            const uint32_t a = alpha, d = (uint32_t)t[3] * (255 - a), o = a * 255 + d;
            for (int channel = 0; channel < 3; channel++) {
                t[channel] = (uint8_t)(((uint32_t)s[channel] * a * 255 + (uint32_t)t[channel] * d + o / 2) / o);
            }
            t[3] = (uint8_t)((o + 127) / 255);
            x++;
        }
    }
}
