// libavif through dlsym: loading (with the version check that picks the structure layout), parsing, and decoding
// frames to RGBA8. The structures are read through the mirrors of cic_avif_abi.h only.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cic_avif_internal.h"
#include "cdl.h"

// A field of an avifDecoder, in the layout of the loaded version (the field has the same type in both mirrors).
#define DECODER_FIELD(api, decoder, field)                                                    \
    (*((api)->layout == CIC_AVIF_LAYOUT_V1 ? &((cic_avif_decoder_v1 *)(decoder))->field \
                                           : &((cic_avif_decoder_v0 *)(decoder))->field))

struct cic_avif_file {
    const cic_avif_api *api;
    void *decoder;  // avifDecoder *
    cic_avif_geometry geometry;  // from the parsed container: what every frame must match
    int frame_count;
    int decoded;  // a frame is in decoder->image
};

// The structure layout of libavif `version`, or -1 for a version the mirrors were not checked against.
static int layout_for_version(const char *version) {
    int major = -1, minor = -1;
    if (!version || sscanf(version, "%d.%d", &major, &minor) != 2) return -1;
    if (major == 0 && minor == 11) return CIC_AVIF_LAYOUT_V0_11;
    if (major == 1 && minor >= 0 && minor <= 4) return CIC_AVIF_LAYOUT_V1;
    return -1;
}

int cic_avif_supports_version(const char *version) { return layout_for_version(version) >= 0; }

// Read first: the version picks the structure layout, or refuses the library.
static const cdl_symbol avif_version_symbol[] = {
    CDL_REQUIRED(cic_avif_api, version_fn, "avifVersion"),
};

// The encoder's entry points are optional: without them cic_avif_encoder_name reports no encoder.
static const cdl_symbol avif_symbols[] = {
    CDL_REQUIRED(cic_avif_api, codec_versions, "avifCodecVersions"),
    CDL_REQUIRED(cic_avif_api, codec_name, "avifCodecName"),
    CDL_REQUIRED(cic_avif_api, result_to_string, "avifResultToString"),
    CDL_REQUIRED(cic_avif_api, decoder_create, "avifDecoderCreate"),
    CDL_REQUIRED(cic_avif_api, decoder_destroy, "avifDecoderDestroy"),
    CDL_REQUIRED(cic_avif_api, decoder_set_io_memory, "avifDecoderSetIOMemory"),
    CDL_REQUIRED(cic_avif_api, decoder_parse, "avifDecoderParse"),
    CDL_REQUIRED(cic_avif_api, decoder_nth_image, "avifDecoderNthImage"),
    CDL_REQUIRED(cic_avif_api, decoder_nth_image_timing, "avifDecoderNthImageTiming"),
    CDL_REQUIRED(cic_avif_api, decoder_is_keyframe, "avifDecoderIsKeyframe"),
    CDL_REQUIRED(cic_avif_api, rgb_set_defaults, "avifRGBImageSetDefaults"),
    CDL_REQUIRED(cic_avif_api, image_yuv_to_rgb, "avifImageYUVToRGB"),
    CDL_OPTIONAL(cic_avif_api, image_create, "avifImageCreate"),
    CDL_OPTIONAL(cic_avif_api, image_destroy, "avifImageDestroy"),
    CDL_OPTIONAL(cic_avif_api, image_rgb_to_yuv, "avifImageRGBToYUV"),
    CDL_OPTIONAL(cic_avif_api, encoder_create, "avifEncoderCreate"),
    CDL_OPTIONAL(cic_avif_api, encoder_destroy, "avifEncoderDestroy"),
    CDL_OPTIONAL(cic_avif_api, encoder_write, "avifEncoderWrite"),
    CDL_OPTIONAL(cic_avif_api, rwdata_free, "avifRWDataFree"),
};

const cic_avif_api *cic_avif_load(void *dl_handle, char *missing, size_t missing_len) {
    cic_avif_api *api = cdl_load(dl_handle, avif_version_symbol, CDL_COUNT(avif_version_symbol), sizeof *api,
                                 missing, missing_len);
    if (!api) return NULL;
    const char *version = api->version_fn();
    int layout = layout_for_version(version);
    if (layout < 0) {
        snprintf(missing, missing_len,
                 "libavif %s is not supported: this build reads libavif's structures as laid out in 0.11.x "
                 "(libavif.so.15) and 1.0-1.4 (libavif.so.16) only",
                 version ? version : "(no version)");
        free(api);
        return NULL;
    }
    api->layout = (cic_avif_layout)layout;
    snprintf(api->version, sizeof api->version, "%s", version);
    if (cdl_resolve(dl_handle, avif_symbols, CDL_COUNT(avif_symbols), api, missing, missing_len) != 0) {
        free(api);
        return NULL;
    }
    return api;
}

const char *cic_avif_version(const cic_avif_api *api) { return api->version; }

void cic_avif_codec_versions(const cic_avif_api *api, char *out, size_t out_len) {
    char buffer[256] = {0};
    api->codec_versions(buffer);
    buffer[sizeof buffer - 1] = 0;
    snprintf(out, out_len, "%s", buffer);
}

static void set_status(cic_avif_status *status, const cic_avif_api *api, int result, const char *diag) {
    status->code = result;
    const char *text = api->result_to_string(result);
    snprintf(status->message, sizeof status->message, "%s%s%s", text ? text : "libavif error",
             diag && diag[0] ? ": " : "", diag ? diag : "");
}

static void set_decoder_status(cic_avif_status *status, const cic_avif_file *file, int result) {
    char diag[257];
    memcpy(diag, DECODER_FIELD(file->api, file->decoder, diag.error), 256);
    diag[256] = 0;
    set_status(status, file->api, result, diag);
}

// Bytes of one coded picture's planes: luma, the chroma planes at their subsampled size, and alpha.
static size_t picture_bytes(const cic_avif_image_fields *image, int has_alpha) {
    size_t pixels = (size_t)image->width * (size_t)image->height;
    size_t halves;  // planes in luma-sized halves, so that 4:2:0's 1.5 stays whole
    switch (image->yuv_format) {
    case CIC_AVIF_PIXEL_FORMAT_YUV444: halves = 6; break;
    case CIC_AVIF_PIXEL_FORMAT_YUV422: halves = 4; break;
    case CIC_AVIF_PIXEL_FORMAT_YUV400: halves = 2; break;
    default: halves = 3; break;
    }
    if (has_alpha) halves += 2;
    return pixels * (image->depth > 8 ? 2 : 1) * halves / 2;
}

cic_avif_file *cic_avif_open(const cic_avif_api *api, const void *data, size_t size, uint32_t max_frames,
                             cic_avif_info *info, cic_avif_status *status) {
    memset(status, 0, sizeof *status);
    memset(info, 0, sizeof *info);
    cic_avif_file *file = calloc(1, sizeof *file);
    if (!file || !(file->decoder = api->decoder_create())) {
        free(file);
        set_status(status, api, CIC_AVIF_OUT_OF_MEMORY, "");
        return NULL;
    }
    file->api = api;
    void *decoder = file->decoder;
    // One thread per decode, as avifdec's default: callers decode several images at once.
    DECODER_FIELD(api, decoder, maxThreads) = 1;
    DECODER_FIELD(api, decoder, requestedSource) = CIC_AVIF_DECODER_SOURCE_AUTO;
    DECODER_FIELD(api, decoder, allowProgressive) = 0;  // a layered image shows its final (or selected) layer
    DECODER_FIELD(api, decoder, ignoreExif) = 1;  // irot/imir, not EXIF, orient an AVIF
    DECODER_FIELD(api, decoder, ignoreXMP) = 1;
    DECODER_FIELD(api, decoder, strictFlags) = CIC_AVIF_STRICT_DISABLED;
    DECODER_FIELD(api, decoder, imageCountLimit) = max_frames > 0 ? max_frames : 1;
    // No limit on one side's length (panoramas): the pixel count is what costs memory, and the caller checks it
    // against its own limit once parsed (libavif's 16384² still applies until then).
    DECODER_FIELD(api, decoder, imageDimensionLimit) = 0;
    int result = api->decoder_set_io_memory(decoder, data, size);
    if (result == CIC_AVIF_OK) result = api->decoder_parse(decoder);
    if (result != CIC_AVIF_OK) {
        set_decoder_status(status, file, result);
        cic_avif_close(file);
        return NULL;
    }
    const void *image = DECODER_FIELD(api, decoder, image);
    if (!image) {
        set_status(status, api, CIC_AVIF_NO_CONTENT, "parsed without an image");
        cic_avif_close(file);
        return NULL;
    }
    cic_avif_image_fields fields;
    cic_avif_read_image(api->layout, image, &fields);
    cic_avif_geometry_of(&fields, &file->geometry);
    file->frame_count = DECODER_FIELD(api, decoder, imageCount);
    *info = (cic_avif_info){
        .width = file->geometry.width, .height = file->geometry.height,
        .coded_width = (int)fields.width, .coded_height = (int)fields.height,
        .depth = (int)fields.depth, .yuv_format = fields.yuv_format,
        .picture_bytes = picture_bytes(&fields, DECODER_FIELD(api, decoder, alphaPresent) != 0),
        .has_alpha = DECODER_FIELD(api, decoder, alphaPresent) != 0, .alpha_premultiplied = fields.alpha_premultiplied,
        .frame_count = file->frame_count,
        .color_primaries = fields.color_primaries, .transfer_characteristics = fields.transfer_characteristics,
        .matrix_coefficients = fields.matrix_coefficients,
        .icc_size = fields.icc && fields.icc->data ? fields.icc->size : 0,
        .orientation = file->geometry.orientation,
        .crop_x = file->geometry.crop_x, .crop_y = file->geometry.crop_y,
        .crop_width = file->geometry.crop_width, .crop_height = file->geometry.crop_height,
        .duration = DECODER_FIELD(api, decoder, duration)};
    return file;
}

void cic_avif_set_pixel_limit(cic_avif_file *file, uint32_t max_pixels) {
    uint32_t limit = max_pixels == 0 ? 1 : max_pixels;
    if (limit > (uint32_t)CIC_AVIF_DEFAULT_IMAGE_SIZE_LIMIT) limit = (uint32_t)CIC_AVIF_DEFAULT_IMAGE_SIZE_LIMIT;
    DECODER_FIELD(file->api, file->decoder, imageSizeLimit) = limit;
}

double cic_avif_frame_duration(const cic_avif_file *file, int index) {
    if (index < 0 || index >= file->frame_count) return -1;
    cic_avif_timing timing;
    memset(&timing, 0, sizeof timing);
    if (file->api->decoder_nth_image_timing(file->decoder, (uint32_t)index, &timing) != CIC_AVIF_OK) return -1;
    return timing.duration;
}

int cic_avif_is_keyframe(const cic_avif_file *file, int index) {
    if (index < 0 || index >= file->frame_count) return 0;
    return file->api->decoder_is_keyframe(file->decoder, (uint32_t)index) != 0;
}

int cic_avif_decode_frame(cic_avif_file *file, int index, cic_avif_status *status) {
    memset(status, 0, sizeof *status);
    file->decoded = 0;
    if (index < 0 || index >= file->frame_count) {
        set_status(status, file->api, CIC_AVIF_NO_IMAGES_REMAINING, "frame index out of range");
        return -1;
    }
    int result = file->api->decoder_nth_image(file->decoder, (uint32_t)index);
    if (result != CIC_AVIF_OK) {
        set_decoder_status(status, file, result);
        return -1;
    }
    file->decoded = 1;
    return 0;
}

int cic_avif_copy_rgba(cic_avif_file *file, uint8_t *out, size_t out_size, cic_avif_status *status) {
    memset(status, 0, sizeof *status);
    const cic_avif_api *api = file->api;
    const void *image = DECODER_FIELD(api, file->decoder, image);
    if (!file->decoded || !image) {
        set_status(status, api, CIC_AVIF_NO_CONTENT, "no decoded frame");
        return -1;
    }
    cic_avif_image_fields fields;
    cic_avif_read_image(api->layout, image, &fields);
    cic_avif_geometry geometry;
    cic_avif_geometry_of(&fields, &geometry);
    // Every frame must have the size the container declared (and the caller checked and allocated).
    if (geometry.width != file->geometry.width || geometry.height != file->geometry.height ||
        (size_t)geometry.width * (size_t)geometry.height * 4 != out_size) {
        snprintf(status->message, sizeof status->message, "decoded frame is %ux%u, the container declares %dx%d",
                 fields.width, fields.height, file->geometry.width, file->geometry.height);
        status->code = CIC_AVIF_FRAME_SIZE_CHANGED;
        return -1;
    }
    int identity = geometry.orientation == 1 && geometry.crop_x == 0 && geometry.crop_y == 0 &&
                   geometry.crop_width == (int)fields.width && geometry.crop_height == (int)fields.height;
    uint8_t *scratch = NULL;
    uint8_t *target = out;
    if (!identity) {
        size_t bytes = (size_t)fields.width * (size_t)fields.height * 4;
        scratch = malloc(bytes);
        if (!scratch) {
            set_status(status, api, CIC_AVIF_OUT_OF_MEMORY, "");
            return -1;
        }
        target = scratch;
    }
    // avifRGBImage in the loaded layout, filled by avifRGBImageSetDefaults (sized exactly: cic_avif_abi.h).
    union {
        cic_avif_rgb_v0 v0;
        cic_avif_rgb_v1 v1;
    } rgb;
    memset(&rgb, 0, sizeof rgb);
    api->rgb_set_defaults(&rgb, image);
    // libyuv's 12-bit 4:2:0 to RGBA conversion (I012ToARGBMatrix, Debian 12's libyuv) is wrong by up to 214
    // levels against the source; libavif's own conversion, which avifdec takes for RGB output, is right.
    cic_avif_bool avoid_libyuv = fields.depth > 10;
    if (api->layout == CIC_AVIF_LAYOUT_V1) {
        rgb.v1.avoidLibYUV = avoid_libyuv;
        rgb.v1.depth = 8;
        rgb.v1.format = CIC_AVIF_RGB_FORMAT_RGBA;
        rgb.v1.alphaPremultiplied = 0;  // libavif un-premultiplies a premultiplied image
        rgb.v1.maxThreads = 1;
        rgb.v1.pixels = target;
        rgb.v1.rowBytes = fields.width * 4;
    } else {
        rgb.v0.avoidLibYUV = avoid_libyuv;
        rgb.v0.depth = 8;
        rgb.v0.format = CIC_AVIF_RGB_FORMAT_RGBA;
        rgb.v0.alphaPremultiplied = 0;
        rgb.v0.pixels = target;
        rgb.v0.rowBytes = fields.width * 4;
    }
    int result = api->image_yuv_to_rgb(image, &rgb);
    if (result != CIC_AVIF_OK) {
        set_status(status, api, result, "YUV to RGB conversion failed");
        free(scratch);
        return -1;
    }
    if (scratch) {
        cic_avif_apply_geometry(scratch, (int)fields.width, &geometry, out);
        free(scratch);
    }
    return 0;
}

int cic_avif_copy_icc(const cic_avif_file *file, uint8_t *out, size_t out_size) {
    const void *image = DECODER_FIELD(file->api, file->decoder, image);
    if (!image) return -1;
    cic_avif_image_fields fields;
    cic_avif_read_image(file->api->layout, image, &fields);
    if (!fields.icc || !fields.icc->data || fields.icc->size != out_size || out_size == 0) return -1;
    memcpy(out, fields.icc->data, out_size);
    return 0;
}

void cic_avif_close(cic_avif_file *file) {
    if (!file) return;
    if (file->decoder) file->api->decoder_destroy(file->decoder);
    free(file);
}
