// The display geometry of an AVIF image: libavif reports the clean aperture (clap), rotation (irot) and mirror
// (imir) properties but leaves them to the application. HEIF/MIAF apply them in that order: crop, rotate
// anticlockwise by irot × 90°, then mirror. Here the rotation and mirror become one EXIF orientation, applied by
// one copy loop, as DecodedImage.remapped does in Swift.
#include <stdint.h>
#include <string.h>
#include "cic_avif_internal.h"

void cic_avif_read_image(cic_avif_layout layout, const void *image, cic_avif_image_fields *out) {
    memset(out, 0, sizeof *out);
    if (layout == CIC_AVIF_LAYOUT_V1) {
        const cic_avif_image_v1 *img = image;
        *out = (cic_avif_image_fields){
            .width = img->width, .height = img->height, .depth = img->depth, .yuv_format = img->yuvFormat,
            .has_alpha = img->alphaPlane != NULL, .alpha_premultiplied = img->alphaPremultiplied != 0, .icc = &img->icc,
            .color_primaries = img->colorPrimaries, .transfer_characteristics = img->transferCharacteristics,
            .matrix_coefficients = img->matrixCoefficients, .transform_flags = img->transformFlags, .clap = img->clap,
            .irot_angle = img->irot.angle, .imir_mode = img->imir.axis};
    } else {
        const cic_avif_image_v0 *img = image;
        *out = (cic_avif_image_fields){
            .width = img->width, .height = img->height, .depth = img->depth, .yuv_format = img->yuvFormat,
            .has_alpha = img->alphaPlane != NULL, .alpha_premultiplied = img->alphaPremultiplied != 0, .icc = &img->icc,
            .color_primaries = img->colorPrimaries, .transfer_characteristics = img->transferCharacteristics,
            .matrix_coefficients = img->matrixCoefficients, .transform_flags = img->transformFlags, .clap = img->clap,
            .irot_angle = img->irot.angle, .imir_mode = img->imir.mode};
    }
}

// One clap offset: dim/2 + off - size/2 (ISO/IEC 14496-12 12.1.4, as libavif computes it), when it is a whole
// number. Every term fits in 64 bits: dim < 2^32, denominators and numerators below 2^31.
static int crop_origin(int64_t dim, int64_t off_n, int64_t off_d, int64_t size, int64_t *origin) {
    if (off_d <= 0) return 0;
    int64_t numerator = dim * off_d + 2 * off_n - size * off_d;
    int64_t denominator = 2 * off_d;
    if (numerator % denominator != 0) return 0;
    *origin = numerator / denominator;
    return 1;
}

// The clap rectangle in coded pixels, or 0 when the box is malformed or reaches outside the image: it is then
// ignored, as browsers do, rather than refusing the picture. Unlike libavif's strict check, an odd offset in a
// subsampled image is accepted: the crop is taken from RGB pixels.
static int clap_rect(const cic_avif_image_fields *image, cic_avif_geometry *out) {
    const cic_avif_clap *c = &image->clap;
    int64_t wn = (int32_t)c->widthN, wd = (int32_t)c->widthD, hn = (int32_t)c->heightN, hd = (int32_t)c->heightD;
    if (wd <= 0 || hd <= 0 || wn <= 0 || hn <= 0 || wn % wd != 0 || hn % hd != 0) return 0;
    int64_t w = wn / wd, h = hn / hd, x = 0, y = 0;
    if (!crop_origin(image->width, (int32_t)c->horizOffN, (int32_t)c->horizOffD, w, &x)) return 0;
    if (!crop_origin(image->height, (int32_t)c->vertOffN, (int32_t)c->vertOffD, h, &y)) return 0;
    if (x < 0 || y < 0 || x + w > (int64_t)image->width || y + h > (int64_t)image->height) return 0;
    out->crop_x = (int)x;
    out->crop_y = (int)y;
    out->crop_width = (int)w;
    out->crop_height = (int)h;
    return 1;
}

void cic_avif_geometry_of(const cic_avif_image_fields *image, cic_avif_geometry *out) {
    memset(out, 0, sizeof *out);
    out->crop_width = (int)image->width;
    out->crop_height = (int)image->height;
    if (image->transform_flags & CIC_AVIF_TRANSFORM_CLAP) {
        cic_avif_geometry cropped = *out;
        if (clap_rect(image, &cropped)) *out = cropped;
    }
    int angle = (image->transform_flags & CIC_AVIF_TRANSFORM_IROT) ? (image->irot_angle & 3) : 0;
    int mirror = (image->transform_flags & CIC_AVIF_TRANSFORM_IMIR) ? (image->imir_mode & 1) : -1;
    // [angle][no mirror, top-bottom exchanged, left-right exchanged] -> EXIF orientation of the whole transform.
    static const int orientations[4][3] = {{1, 4, 2}, {8, 5, 7}, {3, 2, 4}, {6, 7, 5}};
    out->orientation = orientations[angle][mirror + 1];
    int swaps = out->orientation >= 5;
    out->width = swaps ? out->crop_height : out->crop_width;
    out->height = swaps ? out->crop_width : out->crop_height;
}

void cic_avif_apply_geometry(const uint8_t *src, int src_width, const cic_avif_geometry *g, uint8_t *dst) {
    const ptrdiff_t s = src_width, w = g->crop_width, h = g->crop_height;
    const ptrdiff_t base = (ptrdiff_t)g->crop_y * s + g->crop_x;
    // Output pixel (x, y) reads crop pixel origin + x·dx + y·dy (source pixel indices).
    ptrdiff_t origin = base, dx = 1, dy = s;
    switch (g->orientation) {
    case 2: origin = base + w - 1; dx = -1; dy = s; break;
    case 3: origin = base + (h - 1) * s + w - 1; dx = -1; dy = -s; break;
    case 4: origin = base + (h - 1) * s; dx = 1; dy = -s; break;
    case 5: origin = base; dx = s; dy = 1; break;
    case 6: origin = base + (h - 1) * s; dx = -s; dy = 1; break;
    case 7: origin = base + (h - 1) * s + w - 1; dx = -s; dy = -1; break;
    case 8: origin = base + w - 1; dx = s; dy = -1; break;
    default: break;
    }
    uint8_t *out = dst;
    for (int y = 0; y < g->height; y++) {
        ptrdiff_t i = origin + y * dy;
        if (dx == 1) {
            memcpy(out, src + i * 4, (size_t)g->width * 4);
            out += (size_t)g->width * 4;
            continue;
        }
        for (int x = 0; x < g->width; x++, i += dx, out += 4) memcpy(out, src + i * 4, 4);
    }
}
