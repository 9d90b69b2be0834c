#pragma once
#include <lcms2.h>

// lcms2's pixel-format constants are macros Swift cannot import; these are
// the same values as constants.
static const cmsUInt32Number imago_lcms_rgb8 = TYPE_RGB_8;
static const cmsUInt32Number imago_lcms_rgba8 = TYPE_RGBA_8;
static const cmsUInt32Number imago_lcms_gray8 = TYPE_GRAY_8;
static const cmsUInt32Number imago_lcms_graya8 = TYPE_GRAYA_8;
static const cmsUInt32Number imago_lcms_rgb16 = TYPE_RGB_16;
/// Adobe's inverted CMYK, as libjpeg-turbo hands over a CMYK JPEG's inks (255 is no ink).
static const cmsUInt32Number imago_lcms_cmyk8_inverted = TYPE_CMYK_8_REV;
