// CIELab -> sRGB through lcms2 (dlsym). The format words are lcms2.h's documented bit fields.
#include <stdio.h>
#include <stdlib.h>
#include "cic_lab.h"
#include "cdl.h"

#define LAB_COLORSPACE_SH(s) ((uint32_t)(s) << 16)
#define LAB_EXTRA_SH(e) ((uint32_t)(e) << 7)
#define LAB_CHANNELS_SH(c) ((uint32_t)(c) << 3)
enum { LAB_PT_RGB = 4, LAB_PT_LAB = 10, LAB_INTENT_PERCEPTUAL = 0 };
// TYPE_Lab_8 and TYPE_RGBA_8, each with one extra (alpha) byte that the transform does not touch.
#define LAB_TYPE_LABA_8 (LAB_COLORSPACE_SH(LAB_PT_LAB) | LAB_EXTRA_SH(1) | LAB_CHANNELS_SH(3) | 1)
#define LAB_TYPE_RGBA_8 (LAB_COLORSPACE_SH(LAB_PT_RGB) | LAB_EXTRA_SH(1) | LAB_CHANNELS_SH(3) | 1)

struct cic_lab_api {
    void *(*create_lab2)(const void *white_point);
    void *(*create_srgb)(void);
    int (*close_profile)(void *);
    void *(*create_transform)(void *, uint32_t, void *, uint32_t, uint32_t, uint32_t);
    void (*delete_transform)(void *);
    void (*do_transform)(void *, const void *, void *, uint32_t);
};

static const cdl_symbol lab_symbols[] = {
    CDL_REQUIRED(cic_lab_api, create_lab2, "cmsCreateLab2Profile"),
    CDL_REQUIRED(cic_lab_api, create_srgb, "cmsCreate_sRGBProfile"),
    CDL_REQUIRED(cic_lab_api, close_profile, "cmsCloseProfile"),
    CDL_REQUIRED(cic_lab_api, create_transform, "cmsCreateTransform"),
    CDL_REQUIRED(cic_lab_api, delete_transform, "cmsDeleteTransform"),
    CDL_REQUIRED(cic_lab_api, do_transform, "cmsDoTransform"),
};

const cic_lab_api *cic_lab_load(void *dl_handle, char *missing, size_t missing_len) {
    return cdl_load(dl_handle, lab_symbols, CDL_COUNT(lab_symbols), sizeof(cic_lab_api), missing, missing_len);
}

void *cic_lab_create_transform(const cic_lab_api *api) {
    // A NULL white point is D50, as Pillow's ImageCms.createProfile("LAB").
    void *lab = api->create_lab2(NULL);
    void *srgb = api->create_srgb();
    void *transform = NULL;
    if (lab && srgb)
        transform = api->create_transform(lab, LAB_TYPE_LABA_8, srgb, LAB_TYPE_RGBA_8, LAB_INTENT_PERCEPTUAL, 0);
    if (lab) api->close_profile(lab);
    if (srgb) api->close_profile(srgb);
    return transform;
}

void cic_lab_delete_transform(const cic_lab_api *api, void *transform) {
    if (transform) api->delete_transform(transform);
}

void cic_lab_apply(const cic_lab_api *api, void *transform, uint8_t *pixels, size_t count) {
    // In place: input and output pixels are both 4 bytes, and lcms2 reads a pixel before writing it.
    while (count > 0) {
        uint32_t n = count > 0x10000000u ? 0x10000000u : (uint32_t)count;
        api->do_transform(transform, pixels, pixels, n);
        pixels += (size_t)n * 4;
        count -= n;
    }
}
