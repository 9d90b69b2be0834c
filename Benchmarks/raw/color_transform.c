// Times lcms2's own 8-bit transform against Imago's matrix-and-curves
// kernel (Sources/CImagoKernels/ColorTransform.c) on the same 12 MP of
// packed RGB, one thread, both writing into a buffer allocated once, in
// alternation; and checks the kernel against lcms2 on every one of the
// 16.7 million RGB colours (largest difference in levels).
//   gcc -O2 -I Sources/CImagoKernels/include Benchmarks/raw/color_transform.c \
//       Sources/CImagoKernels/ColorTransform.c -o color_transform -llcms2 -lm
//   ./color_transform PROFILE.icc [RUNS]
// The tables are built as Imago's MatrixShaper builds them (profile curves
// at each level, colorants to sRGB's by matrix, sRGB's curve by table).
#include <lcms2.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ColorTransform.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void colorants(cmsHPROFILE p, double m[9]) {
    cmsTagSignature tags[3] = {cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag};
    for (int c = 0; c < 3; c++) {
        cmsCIEXYZ *xyz = cmsReadTag(p, tags[c]);
        m[c] = xyz->X; m[3 + c] = xyz->Y; m[6 + c] = xyz->Z;
    }
}

static void invert(const double m[9], double r[9]) {
    double c[9] = {m[4]*m[8]-m[5]*m[7], m[2]*m[7]-m[1]*m[8], m[1]*m[5]-m[2]*m[4],
                   m[5]*m[6]-m[3]*m[8], m[0]*m[8]-m[2]*m[6], m[2]*m[3]-m[0]*m[5],
                   m[3]*m[7]-m[4]*m[6], m[1]*m[6]-m[0]*m[7], m[0]*m[4]-m[1]*m[3]};
    double d = m[0]*c[0] + m[1]*c[3] + m[2]*c[6];
    for (int i = 0; i < 9; i++) r[i] = c[i] / d;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: %s PROFILE.icc [RUNS]\n", argv[0]); return 2; }
    int runs = argc > 2 ? atoi(argv[2]) : 15;
    cmsHPROFILE input = cmsOpenProfileFromFile(argv[1], "r"), srgb = cmsCreate_sRGBProfile();
    if (!input || !cmsIsMatrixShaper(input)) { fprintf(stderr, "not a matrix-and-curves profile\n"); return 1; }
    cmsHTRANSFORM lcms = cmsCreateTransform(input, TYPE_RGB_8, srgb, TYPE_RGB_8, INTENT_PERCEPTUAL, cmsFLAGS_NOCACHE);

    double a[9], b[9], bi[9], m[9];
    colorants(input, a); colorants(srgb, b); invert(b, bi);
    for (int i = 0; i < 9; i++) m[i] = bi[i / 3 * 3] * a[i % 3] + bi[i / 3 * 3 + 1] * a[3 + i % 3] + bi[i / 3 * 3 + 2] * a[6 + i % 3];
    float linear[768], matrix[9];
    cmsTagSignature trc[3] = {cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag};
    for (int c = 0; c < 3; c++)
        for (int l = 0; l < 256; l++) linear[c * 256 + l] = cmsEvalToneCurveFloat(cmsReadTag(input, trc[c]), l / 255.0f);
    for (int i = 0; i < 9; i++) matrix[i] = (float)m[i];
    static uint8_t encode[IMAGO_COLOR_ENCODE_STEPS];
    for (int s = 0; s < IMAGO_COLOR_ENCODE_STEPS; s++) {
        double v = s / (double)(IMAGO_COLOR_ENCODE_STEPS - 1);
        double e = v <= 0.0031308 ? v * 12.92 : 1.055 * pow(v, 1 / 2.4) - 0.055;
        encode[s] = (uint8_t)lround(e * 255);
    }
    imago_matrix_shaper *kernel = imago_matrix_shaper_make(linear, matrix, encode);

    // Accuracy: every RGB colour, once.
    size_t cube = 256 * 256 * 256;
    uint8_t *all = malloc(cube * 3), *viaLcms = malloc(cube * 3), *viaKernel = malloc(cube * 3);
    for (size_t i = 0; i < cube; i++) { all[i * 3] = i >> 16; all[i * 3 + 1] = i >> 8; all[i * 3 + 2] = i; }
    cmsDoTransform(lcms, all, viaLcms, (cmsUInt32Number)cube);
    imago_matrix_shaper_convert(kernel, all, cube * 3, viaKernel, cube * 3, cube, 1, 3);
    int worst = 0; size_t differing = 0;
    for (size_t i = 0; i < cube * 3; i++) {
        int d = abs((int)viaLcms[i] - (int)viaKernel[i]);
        if (d > worst) worst = d;
        if (d) differing++;
    }

    // Speed: 4000 x 3000 of the cube's first colours (a realistic spread is
    // not needed: both paths cost the same for every colour).
    size_t pixels = 4000 * 3000;
    uint8_t *source = malloc(pixels * 3), *target = malloc(pixels * 3);
    srand(1);
    for (size_t i = 0; i < pixels * 3; i++) source[i] = (uint8_t)(rand() >> 7);
    memset(target, 0, pixels * 3);
    double *lcmsTimes = malloc(sizeof(double) * runs), *kernelTimes = malloc(sizeof(double) * runs);
    for (int r = -1; r < runs; r++) {
        double t0 = now();
        cmsDoTransform(lcms, source, target, (cmsUInt32Number)pixels);
        double t1 = now();
        imago_matrix_shaper_convert(kernel, source, pixels * 3, target, pixels * 3, pixels, 1, 3);
        double t2 = now();
        if (r >= 0) { lcmsTimes[r] = t1 - t0; kernelTimes[r] = t2 - t1; }
    }
    qsort(lcmsTimes, runs, sizeof(double), compare);
    qsort(kernelTimes, runs, sizeof(double), compare);
    printf("%s: lcms2 %.1f ms, kernel %.1f ms (%.1fx) on 12 MP; vs lcms2 on all 16.7M colours: max %d level(s), %.2f%% of channels differ\n",
           argv[1], lcmsTimes[runs / 2], kernelTimes[runs / 2], lcmsTimes[runs / 2] / kernelTimes[runs / 2], worst,
           100.0 * differing / (cube * 3));
    return 0;
}
