// Little CMS 2 through dlsym. The declarations below mirror lcms2.h 2.x (only what is used): the structs
// passed by pointer (cmsCIExyY, cmsCIEXYZ) are plain doubles, and the format words are built from lcms2's
// documented bit fields.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cic_lcms.h"
#include "cdl.h"

typedef struct { double x, y, Y; } cmsCIExyY;
typedef struct { cmsCIExyY red, green, blue; } cmsCIExyYTRIPLE;
typedef struct { double X, Y, Z; } cmsCIEXYZ;
typedef void cmsToneCurve;

// lcms2.h pixel format bit fields.
#define CIC_COLORSPACE_SH(s) ((uint32_t)(s) << 16)
#define CIC_FLAVOR_SH(s) ((uint32_t)(s) << 13)
#define CIC_EXTRA_SH(e) ((uint32_t)(e) << 7)
#define CIC_CHANNELS_SH(c) ((uint32_t)(c) << 3)
#define CIC_BYTES_SH(b) ((uint32_t)(b))
enum { PT_GRAY = 3, PT_RGB = 4, PT_CMYK = 6 };
#define CIC_TYPE_RGBA_8 (CIC_COLORSPACE_SH(PT_RGB) | CIC_EXTRA_SH(1) | CIC_CHANNELS_SH(3) | CIC_BYTES_SH(1))
#define CIC_TYPE_GRAY_RGBA_8 (CIC_COLORSPACE_SH(PT_GRAY) | CIC_EXTRA_SH(3) | CIC_CHANNELS_SH(1) | CIC_BYTES_SH(1))
#define CIC_TYPE_CMYK_8 (CIC_COLORSPACE_SH(PT_CMYK) | CIC_CHANNELS_SH(4) | CIC_BYTES_SH(1))
#define CIC_TYPE_CMYK_8_REV (CIC_TYPE_CMYK_8 | CIC_FLAVOR_SH(1))

// Signatures (big-endian four-character codes).
enum {
    SIG_RGB = 0x52474220, SIG_GRAY = 0x47524159, SIG_CMYK = 0x434D594B,
    SIG_INPUT = 0x73636E72, SIG_DISPLAY = 0x6D6E7472, SIG_OUTPUT = 0x70727472, SIG_COLORSPACE = 0x73706163,
    SIG_RXYZ = 0x7258595A, SIG_GXYZ = 0x6758595A, SIG_BXYZ = 0x6258595A,
    SIG_RTRC = 0x72545243, SIG_GTRC = 0x67545243, SIG_BTRC = 0x62545243, SIG_KTRC = 0x6B545243,
    INTENT_PERCEPTUAL = 0, INFO_DESCRIPTION = 0,
};

struct cic_lcms_api {
    int (*get_version)(void);
    void *(*open_mem)(const void *, uint32_t);
    int (*close_profile)(void *);
    void *(*create_srgb)(void);
    void *(*create_rgb)(const cmsCIExyY *, const cmsCIExyYTRIPLE *, cmsToneCurve *const[3]);
    cmsToneCurve *(*build_gamma)(void *context, double);
    cmsToneCurve *(*build_parametric)(void *context, int type, const double params[]);
    void (*free_curve)(cmsToneCurve *);
    float (*eval_curve)(const cmsToneCurve *, float);
    uint32_t (*color_space)(void *);
    uint32_t (*device_class)(void *);
    int (*is_matrix_shaper)(void *);
    void *(*read_tag)(void *, uint32_t);
    uint32_t (*info_ascii)(void *, int, const char lang[3], const char country[3], char *, uint32_t);
    void *(*create_transform)(void *, uint32_t, void *, uint32_t, uint32_t, uint32_t);
    void (*delete_transform)(void *);
    void (*do_transform)(void *, const void *, void *, uint32_t);
    void (*set_log_handler)(void *);
    void *srgb;  // sRGB, opened once: every transform's output profile
};

static void cic_lcms_silent(void *context, uint32_t code, const char *text) {
    (void)context; (void)code; (void)text;  // a library must not print; failures surface as NULL results
}

static const cdl_symbol lcms_symbols[] = {
    CDL_REQUIRED(cic_lcms_api, get_version, "cmsGetEncodedCMMversion"),
    CDL_REQUIRED(cic_lcms_api, open_mem, "cmsOpenProfileFromMem"),
    CDL_REQUIRED(cic_lcms_api, close_profile, "cmsCloseProfile"),
    CDL_REQUIRED(cic_lcms_api, create_srgb, "cmsCreate_sRGBProfile"),
    CDL_REQUIRED(cic_lcms_api, create_rgb, "cmsCreateRGBProfile"),
    CDL_REQUIRED(cic_lcms_api, build_gamma, "cmsBuildGamma"),
    CDL_REQUIRED(cic_lcms_api, build_parametric, "cmsBuildParametricToneCurve"),
    CDL_REQUIRED(cic_lcms_api, free_curve, "cmsFreeToneCurve"),
    CDL_REQUIRED(cic_lcms_api, eval_curve, "cmsEvalToneCurveFloat"),
    CDL_REQUIRED(cic_lcms_api, color_space, "cmsGetColorSpace"),
    CDL_REQUIRED(cic_lcms_api, device_class, "cmsGetDeviceClass"),
    CDL_REQUIRED(cic_lcms_api, is_matrix_shaper, "cmsIsMatrixShaper"),
    CDL_REQUIRED(cic_lcms_api, read_tag, "cmsReadTag"),
    CDL_REQUIRED(cic_lcms_api, info_ascii, "cmsGetProfileInfoASCII"),
    CDL_REQUIRED(cic_lcms_api, create_transform, "cmsCreateTransform"),
    CDL_REQUIRED(cic_lcms_api, delete_transform, "cmsDeleteTransform"),
    CDL_REQUIRED(cic_lcms_api, do_transform, "cmsDoTransform"),
    CDL_REQUIRED(cic_lcms_api, set_log_handler, "cmsSetLogErrorHandler"),
};

const cic_lcms_api *cic_lcms_load(void *dl_handle, char *missing, size_t missing_len) {
    cic_lcms_api *api = cdl_load(dl_handle, lcms_symbols, CDL_COUNT(lcms_symbols), sizeof *api, missing, missing_len);
    if (!api) return NULL;
    api->set_log_handler((void *)cic_lcms_silent);
    api->srgb = api->create_srgb();
    if (!api->srgb) {
        snprintf(missing, missing_len, "cmsCreate_sRGBProfile failed");
        free(api);
        return NULL;
    }
    return api;
}

int cic_lcms_version(const cic_lcms_api *api) { return api->get_version(); }

void *cic_lcms_open_icc(const cic_lcms_api *api, const void *bytes, size_t length) {
    if (!bytes || length < 132 || length > UINT32_MAX) return NULL;  // 128-byte header + tag count at least
    return api->open_mem(bytes, (uint32_t)length);
}

void *cic_lcms_create_rgb(const cic_lcms_api *api, const double xy[8], double gamma) {
    for (int i = 0; i < 8; i++)
        if (!isfinite(xy[i]) || xy[i] <= 0 || xy[i] >= 1) return NULL;
    if (!isfinite(gamma) || gamma > 10) return NULL;
    cmsCIExyY white = {xy[0], xy[1], 1.0};
    cmsCIExyYTRIPLE primaries = {{xy[2], xy[3], 1.0}, {xy[4], xy[5], 1.0}, {xy[6], xy[7], 1.0}};
    // IEC 61966-2-1: Y = ((X + 0.055) / 1.055)^2.4 above 0.04045, X / 12.92 below (lcms2 parametric type 4).
    static const double srgb[5] = {2.4, 1.0 / 1.055, 0.055 / 1.055, 1.0 / 12.92, 0.04045};
    cmsToneCurve *curve = gamma > 0 ? api->build_gamma(NULL, gamma) : api->build_parametric(NULL, 4, srgb);
    if (!curve) return NULL;
    cmsToneCurve *curves[3] = {curve, curve, curve};
    void *profile = api->create_rgb(&white, &primaries, curves);
    api->free_curve(curve);
    return profile;
}

void cic_lcms_close_profile(const cic_lcms_api *api, void *profile) {
    if (profile) api->close_profile(profile);
}

cic_lcms_space cic_lcms_profile_space(const cic_lcms_api *api, void *profile) {
    uint32_t cls = api->device_class(profile);
    if (cls != SIG_INPUT && cls != SIG_DISPLAY && cls != SIG_OUTPUT && cls != SIG_COLORSPACE) return CIC_LCMS_UNSUPPORTED;
    switch (api->color_space(profile)) {
    case SIG_RGB: return CIC_LCMS_RGB;
    case SIG_GRAY: return CIC_LCMS_GRAY;
    case SIG_CMYK: return CIC_LCMS_CMYK;
    default: return CIC_LCMS_UNSUPPORTED;
    }
}

static double srgb_decode(double v) { return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4); }

// A curve close enough to sRGB's that 8-bit values move by less than about 0.5.
static int curve_is_srgb(const cic_lcms_api *api, const cmsToneCurve *curve) {
    if (!curve) return 0;
    for (int i = 0; i <= 32; i++) {
        double v = i / 32.0;
        double got = api->eval_curve(curve, (float)v), want = srgb_decode(v);
        if (!isfinite(got) || fabs(got - want) > 0.002) return 0;
    }
    return 1;
}

int cic_lcms_is_srgb_equivalent(const cic_lcms_api *api, void *profile) {
    cic_lcms_space space = cic_lcms_profile_space(api, profile);
    if (space == CIC_LCMS_GRAY) return curve_is_srgb(api, api->read_tag(profile, SIG_KTRC));
    if (space != CIC_LCMS_RGB || !api->is_matrix_shaper(profile)) return 0;
    static const uint32_t colorants[3] = {SIG_RXYZ, SIG_GXYZ, SIG_BXYZ};
    static const uint32_t curves[3] = {SIG_RTRC, SIG_GTRC, SIG_BTRC};
    for (int c = 0; c < 3; c++) {
        const cmsCIEXYZ *want = api->read_tag(api->srgb, colorants[c]);
        const cmsCIEXYZ *got = api->read_tag(profile, colorants[c]);
        if (!want || !got) return 0;
        if (fabs(got->X - want->X) > 0.002 || fabs(got->Y - want->Y) > 0.002 || fabs(got->Z - want->Z) > 0.002) return 0;
        if (!curve_is_srgb(api, api->read_tag(profile, curves[c]))) return 0;
    }
    return 1;
}

void cic_lcms_description(const cic_lcms_api *api, void *profile, char *out, size_t out_len) {
    if (out_len == 0) return;
    out[0] = 0;
    if (out_len > UINT32_MAX) out_len = UINT32_MAX;
    api->info_ascii(profile, INFO_DESCRIPTION, "en", "US", out, (uint32_t)out_len);
    out[out_len - 1] = 0;
}

void *cic_lcms_create_transform(const cic_lcms_api *api, void *profile, cic_lcms_input input) {
    uint32_t format;
    switch (input) {
    case CIC_LCMS_IN_RGBA: format = CIC_TYPE_RGBA_8; break;
    case CIC_LCMS_IN_GRAY_IN_RGBA: format = CIC_TYPE_GRAY_RGBA_8; break;
    case CIC_LCMS_IN_CMYK: format = CIC_TYPE_CMYK_8; break;
    case CIC_LCMS_IN_CMYK_INVERTED: format = CIC_TYPE_CMYK_8_REV; break;
    default: return NULL;
    }
    // No flags: lcms2's default precalculated (optimised) transform, as Pillow's ImageCms builds it.
    return api->create_transform(profile, format, api->srgb, CIC_TYPE_RGBA_8, INTENT_PERCEPTUAL, 0);
}

void cic_lcms_delete_transform(const cic_lcms_api *api, void *transform) {
    if (transform) api->delete_transform(transform);
}

void cic_lcms_apply(const cic_lcms_api *api, void *transform, uint8_t *pixels, size_t count) {
    // In place: every input pixel has the output's size (4 bytes), and lcms2 reads a pixel before writing it.
    while (count > 0) {
        uint32_t n = count > 0x10000000u ? 0x10000000u : (uint32_t)count;
        api->do_transform(transform, pixels, pixels, n);
        pixels += (size_t)n * 4;
        count -= n;
    }
}
