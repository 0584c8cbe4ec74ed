// Shared by cic_avif.c, cic_avif_geometry.c and cic_avif_encode.c (internal: not in include/). The entry points
// mirror libavif's public avif.h of 0.11 and 1.x (their signatures did not change between them); the structures
// they take are the mirrors of cic_avif_abi.h, chosen by `layout`.
#ifndef CIC_AVIF_INTERNAL_H
#define CIC_AVIF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "cic_avif.h"
#include "cic_avif_abi.h"

/// Which mirrors of cic_avif_abi.h describe the loaded library.
typedef enum { CIC_AVIF_LAYOUT_V0_11 = 0, CIC_AVIF_LAYOUT_V1 = 1 } cic_avif_layout;

struct cic_avif_api {
    cic_avif_layout layout;
    char version[32];
    const char *(*version_fn)(void);
    void (*codec_versions)(char out[256]);
    const char *(*codec_name)(int choice, uint32_t flags);
    const char *(*result_to_string)(int result);
    void *(*decoder_create)(void);
    void (*decoder_destroy)(void *decoder);
    int (*decoder_set_io_memory)(void *decoder, const uint8_t *data, size_t size);
    int (*decoder_parse)(void *decoder);
    int (*decoder_nth_image)(void *decoder, uint32_t index);
    int (*decoder_nth_image_timing)(const void *decoder, uint32_t index, cic_avif_timing *timing);
    int (*decoder_is_keyframe)(const void *decoder, uint32_t index);
    void (*rgb_set_defaults)(void *rgb, const void *image);
    int (*image_yuv_to_rgb)(const void *image, void *rgb);
    // Encoding (optional: a decoder-only build still decodes).
    void *(*image_create)(uint32_t width, uint32_t height, uint32_t depth, int yuv_format);
    void (*image_destroy)(void *image);
    int (*image_rgb_to_yuv)(void *image, const void *rgb);
    void *(*encoder_create)(void);
    void (*encoder_destroy)(void *encoder);
    int (*encoder_write)(void *encoder, const void *image, cic_avif_rwdata *output);
    void (*rwdata_free)(cic_avif_rwdata *data);
};

/// The avifImage fields the shim reads, whatever the layout.
typedef struct {
    uint32_t width, height, depth;
    int yuv_format;
    int has_alpha, alpha_premultiplied;
    const cic_avif_rwdata *icc;
    int color_primaries, transfer_characteristics, matrix_coefficients;
    uint32_t transform_flags;
    cic_avif_clap clap;
    int irot_angle, imir_mode;
} cic_avif_image_fields;

void cic_avif_read_image(cic_avif_layout layout, const void *image, cic_avif_image_fields *out);

/// The displayed geometry of a coded `width`x`height` image: crop (clap when valid, else the whole image), the
/// EXIF orientation of irot then imir, and the size after both.
typedef struct {
    int crop_x, crop_y, crop_width, crop_height;
    int orientation;
    int width, height;
} cic_avif_geometry;

void cic_avif_geometry_of(const cic_avif_image_fields *image, cic_avif_geometry *out);

/// Copies the `geometry` crop of `src` (coded RGBA rows of `src_width` pixels) into `dst`, turned by its
/// orientation (`geometry.width` x `geometry.height` pixels).
void cic_avif_apply_geometry(const uint8_t *src, int src_width, const cic_avif_geometry *geometry, uint8_t *dst);

#endif
