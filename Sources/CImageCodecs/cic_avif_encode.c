// AVIF output through libavif's encoder (aom, rav1e or SVT-AV1, whichever libavif was built with): a still
// image, 8-bit 4:2:0, full range, tagged sRGB (nclx 1/13/6, avifenc's choice for an sRGB PNG), no metadata.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cic_avif_internal.h"

const char *cic_avif_encoder_name(const cic_avif_api *api) {
    if (!api->image_create || !api->image_destroy || !api->image_rgb_to_yuv || !api->encoder_create ||
        !api->encoder_destroy || !api->encoder_write || !api->rwdata_free)
        return NULL;
    return api->codec_name(CIC_AVIF_CODEC_CHOICE_AUTO, CIC_AVIF_CODEC_FLAG_CAN_ENCODE);
}

static void fail(cic_avif_status *status, const cic_avif_api *api, int result, const char *what) {
    status->code = result;
    const char *text = api->result_to_string(result);
    snprintf(status->message, sizeof status->message, "%s: %s", what, text ? text : "libavif error");
}

// libavif 1.x's own mapping of quality 0...100 to the AV1 quantizer 63...0, for 0.11, which takes quantizers.
static int quantizer_for(int quality) { return ((100 - quality) * 63 + 50) / 100; }

int cic_avif_encode(const cic_avif_api *api, const uint8_t *rgba, int width, int height, int has_alpha, int quality,
                    int speed, uint8_t **out, size_t *out_size, cic_avif_status *status) {
    memset(status, 0, sizeof *status);
    *out = NULL;
    *out_size = 0;
    if (!cic_avif_encoder_name(api)) {
        fail(status, api, CIC_AVIF_NO_CODEC_AVAILABLE, "libavif has no AV1 encoder");
        return -1;
    }
    if (width <= 0 || height <= 0 || quality < 0 || quality > 100) {
        fail(status, api, CIC_AVIF_NOT_IMPLEMENTED, "invalid size or quality");
        return -1;
    }
    void *image = api->image_create((uint32_t)width, (uint32_t)height, 8, CIC_AVIF_PIXEL_FORMAT_YUV420);
    if (!image) {
        fail(status, api, CIC_AVIF_OUT_OF_MEMORY, "avifImageCreate");
        return -1;
    }
    union {
        cic_avif_rgb_v0 v0;
        cic_avif_rgb_v1 v1;
    } rgb;
    memset(&rgb, 0, sizeof rgb);
    if (api->layout == CIC_AVIF_LAYOUT_V1) {
        cic_avif_image_v1 *img = image;
        img->colorPrimaries = CIC_AVIF_COLOR_PRIMARIES_BT709;
        img->transferCharacteristics = CIC_AVIF_TRANSFER_CHARACTERISTICS_SRGB;
        img->matrixCoefficients = CIC_AVIF_MATRIX_COEFFICIENTS_BT601;
        img->yuvRange = CIC_AVIF_RANGE_FULL;
        api->rgb_set_defaults(&rgb, image);
        rgb.v1.depth = 8;
        rgb.v1.format = CIC_AVIF_RGB_FORMAT_RGBA;
        rgb.v1.ignoreAlpha = !has_alpha;
        rgb.v1.pixels = (uint8_t *)rgba;  // read only: avifImageRGBToYUV takes a const avifRGBImage
        rgb.v1.rowBytes = (uint32_t)width * 4;
    } else {
        cic_avif_image_v0 *img = image;
        img->colorPrimaries = CIC_AVIF_COLOR_PRIMARIES_BT709;
        img->transferCharacteristics = CIC_AVIF_TRANSFER_CHARACTERISTICS_SRGB;
        img->matrixCoefficients = CIC_AVIF_MATRIX_COEFFICIENTS_BT601;
        img->yuvRange = CIC_AVIF_RANGE_FULL;
        api->rgb_set_defaults(&rgb, image);
        rgb.v0.depth = 8;
        rgb.v0.format = CIC_AVIF_RGB_FORMAT_RGBA;
        rgb.v0.ignoreAlpha = !has_alpha;
        rgb.v0.pixels = (uint8_t *)rgba;
        rgb.v0.rowBytes = (uint32_t)width * 4;
    }
    int result = api->image_rgb_to_yuv(image, &rgb);
    if (result != CIC_AVIF_OK) {
        fail(status, api, result, "RGB to YUV conversion failed");
        api->image_destroy(image);
        return -1;
    }
    void *encoder = api->encoder_create();
    if (!encoder) {
        fail(status, api, CIC_AVIF_OUT_OF_MEMORY, "avifEncoderCreate");
        api->image_destroy(image);
        return -1;
    }
    int quantizer = quantizer_for(quality);
    if (api->layout == CIC_AVIF_LAYOUT_V1) {
        cic_avif_encoder_v1 *e = encoder;
        e->maxThreads = 1;
        e->speed = speed;
        e->quality = quality;
        e->qualityAlpha = quality;
    } else {
        cic_avif_encoder_v0 *e = encoder;
        e->maxThreads = 1;
        e->speed = speed;
        e->minQuantizer = e->maxQuantizer = quantizer;
        e->minQuantizerAlpha = e->maxQuantizerAlpha = quantizer;
    }
    cic_avif_rwdata output = {NULL, 0};
    result = api->encoder_write(encoder, image, &output);
    if (result == CIC_AVIF_OK && output.data && output.size > 0) {
        *out = malloc(output.size);
        if (*out) {
            memcpy(*out, output.data, output.size);
            *out_size = output.size;
        } else {
            result = CIC_AVIF_OUT_OF_MEMORY;
        }
    } else if (result == CIC_AVIF_OK) {
        result = CIC_AVIF_NO_CONTENT;
    }
    if (result != CIC_AVIF_OK) fail(status, api, result, "avifEncoderWrite");
    api->rwdata_free(&output);
    api->encoder_destroy(encoder);
    api->image_destroy(image);
    return result == CIC_AVIF_OK ? 0 : -1;
}

void cic_avif_free(uint8_t *bytes) { free(bytes); }
