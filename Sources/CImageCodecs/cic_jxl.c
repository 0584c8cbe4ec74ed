// libjxl through dlsym. The declarations below mirror libjxl's public headers (decode.h, codestream_header.h,
// types.h, color_encoding.h, parallel_runner.h, resizable_parallel_runner.h) of 0.7.0, 0.8.0, 0.9.0, 0.10.0 and
// 0.11.0, compared line by line: the structs used here (JxlBasicInfo, JxlPixelFormat, JxlColorEncoding,
// JxlFrameHeader with JxlLayerInfo and JxlBlendInfo) and the enum values are the same in all five; the one change
// that matters is the ICC functions' `const JxlPixelFormat* unused_format` argument, removed in 0.9. Versions
// outside 0.7-0.11 are refused by cic_jxl_load.
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cic_jxl.h"
#include "cic_dl.h"

typedef struct JxlDecoderStruct JxlDecoder;
typedef int JXL_BOOL;
typedef int JxlDecoderStatus;
typedef int JxlParallelRetCode;
typedef JxlParallelRetCode (*JxlParallelRunInit)(void *jpegxl_opaque, size_t num_threads);
typedef void (*JxlParallelRunFunction)(void *jpegxl_opaque, uint32_t value, size_t thread_id);
typedef JxlParallelRetCode (*JxlParallelRunner)(void *runner_opaque, void *jpegxl_opaque, JxlParallelRunInit init,
                                                JxlParallelRunFunction func, uint32_t start_range, uint32_t end_range);

enum {
    JXL_DEC_SUCCESS = 0, JXL_DEC_ERROR = 1, JXL_DEC_NEED_MORE_INPUT = 2, JXL_DEC_NEED_PREVIEW_OUT_BUFFER = 3,
    JXL_DEC_NEED_IMAGE_OUT_BUFFER = 5, JXL_DEC_JPEG_NEED_MORE_OUTPUT = 6, JXL_DEC_BOX_NEED_MORE_OUTPUT = 7,
    JXL_DEC_BASIC_INFO = 0x40, JXL_DEC_COLOR_ENCODING = 0x100, JXL_DEC_PREVIEW_IMAGE = 0x200, JXL_DEC_FRAME = 0x400,
    JXL_DEC_FULL_IMAGE = 0x1000, JXL_DEC_JPEG_RECONSTRUCTION = 0x2000, JXL_DEC_BOX = 0x4000,
    JXL_DEC_FRAME_PROGRESSION = 0x8000,
};
enum { JXL_TYPE_FLOAT = 0, JXL_TYPE_UINT8 = 2 };
enum { JXL_NATIVE_ENDIAN = 0 };
enum { JXL_COLOR_PROFILE_TARGET_DATA = 1 };
enum { JXL_COLOR_SPACE_RGB = 0, JXL_COLOR_SPACE_GRAY = 1 };
enum { JXL_WHITE_POINT_D65 = 1 };
enum { JXL_PRIMARIES_SRGB = 1 };
enum { JXL_TRANSFER_FUNCTION_LINEAR = 8, JXL_TRANSFER_FUNCTION_SRGB = 13 };
enum { JXL_RENDERING_INTENT_PERCEPTUAL = 0 };

typedef struct {
    uint32_t num_channels;
    int data_type;   // JxlDataType
    int endianness;  // JxlEndianness
    size_t align;
} JxlPixelFormat;

typedef struct {
    int color_space;  // JxlColorSpace
    int white_point;  // JxlWhitePoint
    double white_point_xy[2];
    int primaries;    // JxlPrimaries
    double primaries_red_xy[2];
    double primaries_green_xy[2];
    double primaries_blue_xy[2];
    int transfer_function;  // JxlTransferFunction
    double gamma;
    int rendering_intent;   // JxlRenderingIntent
} JxlColorEncoding;

typedef struct {
    uint32_t tps_numerator;
    uint32_t tps_denominator;
    uint32_t num_loops;
    JXL_BOOL have_timecodes;
} JxlAnimationHeader;

typedef struct {
    JXL_BOOL have_container;
    uint32_t xsize;
    uint32_t ysize;
    uint32_t bits_per_sample;
    uint32_t exponent_bits_per_sample;
    float intensity_target;
    float min_nits;
    JXL_BOOL relative_to_max_display;
    float linear_below;
    JXL_BOOL uses_original_profile;
    JXL_BOOL have_preview;
    JXL_BOOL have_animation;
    int orientation;  // JxlOrientation
    uint32_t num_color_channels;
    uint32_t num_extra_channels;
    uint32_t alpha_bits;
    uint32_t alpha_exponent_bits;
    JXL_BOOL alpha_premultiplied;
    struct { uint32_t xsize, ysize; } preview;  // JxlPreviewHeader
    JxlAnimationHeader animation;
    uint32_t intrinsic_xsize;
    uint32_t intrinsic_ysize;
    uint8_t padding[100];
} JxlBasicInfo;

typedef struct {
    int blendmode;  // JxlBlendMode
    uint32_t source;
    uint32_t alpha;
    JXL_BOOL clamp;
} JxlBlendInfo;

typedef struct {
    JXL_BOOL have_crop;
    int32_t crop_x0;
    int32_t crop_y0;
    uint32_t xsize;
    uint32_t ysize;
    JxlBlendInfo blend_info;
    uint32_t save_as_reference;
} JxlLayerInfo;

typedef struct {
    uint32_t duration;
    uint32_t timecode;
    uint32_t name_length;
    JXL_BOOL is_last;
    JxlLayerInfo layer_info;
} JxlFrameHeader;

struct cic_jxl_api {
    uint32_t version;
    uint32_t (*decoder_version)(void);
    JxlDecoder *(*create)(const void *memory_manager);
    void (*destroy)(JxlDecoder *);
    JxlDecoderStatus (*subscribe_events)(JxlDecoder *, int events_wanted);
    JxlDecoderStatus (*set_coalescing)(JxlDecoder *, JXL_BOOL);
    JxlDecoderStatus (*set_unpremultiply_alpha)(JxlDecoder *, JXL_BOOL);
    JxlDecoderStatus (*set_parallel_runner)(JxlDecoder *, JxlParallelRunner, void *);
    JxlDecoderStatus (*set_input)(JxlDecoder *, const uint8_t *, size_t);
    size_t (*release_input)(JxlDecoder *);
    JxlDecoderStatus (*process_input)(JxlDecoder *);
    JxlDecoderStatus (*get_basic_info)(const JxlDecoder *, JxlBasicInfo *);
    JxlDecoderStatus (*get_frame_header)(const JxlDecoder *, JxlFrameHeader *);
    JxlDecoderStatus (*set_preferred_color_profile)(JxlDecoder *, const JxlColorEncoding *);
    // Before 0.9 these take a `const JxlPixelFormat* unused_format` after the decoder (pass NULL).
    JxlDecoderStatus (*get_encoded_profile_v7)(const JxlDecoder *, const JxlPixelFormat *, int, JxlColorEncoding *);
    JxlDecoderStatus (*get_icc_size_v7)(const JxlDecoder *, const JxlPixelFormat *, int, size_t *);
    JxlDecoderStatus (*get_icc_v7)(const JxlDecoder *, const JxlPixelFormat *, int, uint8_t *, size_t);
    JxlDecoderStatus (*get_encoded_profile_v9)(const JxlDecoder *, int, JxlColorEncoding *);
    JxlDecoderStatus (*get_icc_size_v9)(const JxlDecoder *, int, size_t *);
    JxlDecoderStatus (*get_icc_v9)(const JxlDecoder *, int, uint8_t *, size_t);
    JxlDecoderStatus (*image_out_buffer_size)(const JxlDecoder *, const JxlPixelFormat *, size_t *);
    JxlDecoderStatus (*set_image_out_buffer)(JxlDecoder *, const JxlPixelFormat *, void *, size_t);
    JxlDecoderStatus (*flush_image)(JxlDecoder *);
    void (*skip_frames)(JxlDecoder *, size_t);
    // libjxl_threads (optional).
    JxlParallelRunner resizable_runner;
    void *(*runner_create)(const void *memory_manager);
    void (*runner_set_threads)(void *runner, size_t threads);
    void (*runner_destroy)(void *runner);
};

// Versions whose headers the declarations above were checked against (major.minor).
static int verified_version(uint32_t version) {
    uint32_t major = version / 1000000, minor = version / 1000 % 1000;
    return major == 0 && minor >= 7 && minor <= 11;
}

const cic_jxl_api *cic_jxl_load(void *dl_handle, void *threads_handle, char *missing, size_t missing_len) {
    cic_jxl_api *api = cic_dl_alloc_api(sizeof *api, missing, missing_len);
    if (!api) return NULL;
    CIC_RESOLVE(decoder_version, "JxlDecoderVersion");
    api->version = api->decoder_version();
    if (!verified_version(api->version)) {
        snprintf(missing, missing_len, "libjxl %u.%u.%u is not a version this package was checked against (0.7 to 0.11)",
                 api->version / 1000000, api->version / 1000 % 1000, api->version % 1000);
        free(api);
        return NULL;
    }
    CIC_RESOLVE(create, "JxlDecoderCreate");
    CIC_RESOLVE(destroy, "JxlDecoderDestroy");
    CIC_RESOLVE(subscribe_events, "JxlDecoderSubscribeEvents");
    CIC_RESOLVE(set_coalescing, "JxlDecoderSetCoalescing");
    CIC_RESOLVE(set_unpremultiply_alpha, "JxlDecoderSetUnpremultiplyAlpha");
    CIC_RESOLVE(set_parallel_runner, "JxlDecoderSetParallelRunner");
    CIC_RESOLVE(set_input, "JxlDecoderSetInput");
    CIC_RESOLVE(release_input, "JxlDecoderReleaseInput");
    CIC_RESOLVE(process_input, "JxlDecoderProcessInput");
    CIC_RESOLVE(get_basic_info, "JxlDecoderGetBasicInfo");
    CIC_RESOLVE(get_frame_header, "JxlDecoderGetFrameHeader");
    CIC_RESOLVE(set_preferred_color_profile, "JxlDecoderSetPreferredColorProfile");
    if (api->version / 1000 % 1000 >= 9) {
        CIC_RESOLVE(get_encoded_profile_v9, "JxlDecoderGetColorAsEncodedProfile");
        CIC_RESOLVE(get_icc_size_v9, "JxlDecoderGetICCProfileSize");
        CIC_RESOLVE(get_icc_v9, "JxlDecoderGetColorAsICCProfile");
    } else {
        CIC_RESOLVE(get_encoded_profile_v7, "JxlDecoderGetColorAsEncodedProfile");
        CIC_RESOLVE(get_icc_size_v7, "JxlDecoderGetICCProfileSize");
        CIC_RESOLVE(get_icc_v7, "JxlDecoderGetColorAsICCProfile");
    }
    CIC_RESOLVE(image_out_buffer_size, "JxlDecoderImageOutBufferSize");
    CIC_RESOLVE(set_image_out_buffer, "JxlDecoderSetImageOutBuffer");
    CIC_RESOLVE(flush_image, "JxlDecoderFlushImage");
    CIC_RESOLVE(skip_frames, "JxlDecoderSkipFrames");
    if (threads_handle) {
        // All or nothing: without the four, decoders run on the calling thread.
        *(void **)(&api->resizable_runner) = dlsym(threads_handle, "JxlResizableParallelRunner");
        *(void **)(&api->runner_create) = dlsym(threads_handle, "JxlResizableParallelRunnerCreate");
        *(void **)(&api->runner_set_threads) = dlsym(threads_handle, "JxlResizableParallelRunnerSetThreads");
        *(void **)(&api->runner_destroy) = dlsym(threads_handle, "JxlResizableParallelRunnerDestroy");
        if (!api->resizable_runner || !api->runner_create || !api->runner_set_threads || !api->runner_destroy) {
            api->resizable_runner = NULL;
        }
    }
    return api;
}

uint32_t cic_jxl_version(const cic_jxl_api *api) { return api->version; }

int cic_jxl_has_threads(const cic_jxl_api *api) { return api->resizable_runner != NULL; }

struct cic_jxl_decoder {
    const cic_jxl_api *api;
    JxlDecoder *dec;
    void *runner;
    int mode;
    int input_set;
    JxlBasicInfo info;
    int have_info;
    cic_jxl_color color;
    uint8_t *icc;
    JxlFrameHeader frame;
    uint8_t *rgba;       // the caller's buffer for the current frame
    size_t rgba_size;
    float *linear;       // float samples of a linear image, written to `rgba` with the sRGB curve
    size_t linear_size;
    char message[160];
};

cic_jxl_decoder *cic_jxl_decoder_create(const cic_jxl_api *api, int mode, int threads) {
    cic_jxl_decoder *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->api = api;
    d->mode = mode;
    d->dec = api->create(NULL);
    if (!d->dec) {
        free(d);
        return NULL;
    }
    int events = JXL_DEC_BASIC_INFO | JXL_DEC_FRAME;
    if (mode == CIC_JXL_MODE_PIXELS) {
        events |= JXL_DEC_COLOR_ENCODING | JXL_DEC_FULL_IMAGE;
    }
    int failed = api->subscribe_events(d->dec, events) != JXL_DEC_SUCCESS;
    // The index reads every layer as coded (its own size); pixels come composited on the canvas.
    failed |= api->set_coalescing(d->dec, mode == CIC_JXL_MODE_PIXELS) != JXL_DEC_SUCCESS;
    // The package's images have straight alpha.
    failed |= api->set_unpremultiply_alpha(d->dec, 1) != JXL_DEC_SUCCESS;
    if (!failed && threads > 1 && api->resizable_runner && mode == CIC_JXL_MODE_PIXELS) {
        d->runner = api->runner_create(NULL);
        if (d->runner) {
            api->runner_set_threads(d->runner, (size_t)threads);
            failed |= api->set_parallel_runner(d->dec, api->resizable_runner, d->runner) != JXL_DEC_SUCCESS;
        }
    }
    if (failed) {
        cic_jxl_decoder_destroy(d);
        return NULL;
    }
    return d;
}

void cic_jxl_decoder_destroy(cic_jxl_decoder *d) {
    if (!d) return;
    if (d->dec) d->api->destroy(d->dec);
    if (d->runner) d->api->runner_destroy(d->runner);
    free(d->icc);
    free(d->linear);
    free(d);
}

int cic_jxl_set_input(cic_jxl_decoder *d, const uint8_t *data, size_t size, int is_last) {
    (void)is_last;  // libjxl is never told the input closed: running out of it then means "truncated"
    if (d->input_set || d->api->set_input(d->dec, data, size) != JXL_DEC_SUCCESS) return -1;
    d->input_set = 1;
    return 0;
}

size_t cic_jxl_release_input(cic_jxl_decoder *d) {
    if (!d->input_set) return 0;
    d->input_set = 0;
    return d->api->release_input(d->dec);
}

static int fail(cic_jxl_decoder *d, const char *message) {
    snprintf(d->message, sizeof d->message, "%s", message);
    return CIC_JXL_EVENT_ERROR;
}

// `fail` for the functions that return 0 or -1.
static int refuse(cic_jxl_decoder *d, const char *message) {
    fail(d, message);
    return -1;
}

static JxlDecoderStatus get_encoded_profile(const cic_jxl_decoder *d, JxlColorEncoding *out) {
    const cic_jxl_api *api = d->api;
    return api->get_encoded_profile_v9 ? api->get_encoded_profile_v9(d->dec, JXL_COLOR_PROFILE_TARGET_DATA, out)
                                       : api->get_encoded_profile_v7(d->dec, NULL, JXL_COLOR_PROFILE_TARGET_DATA, out);
}

static JxlDecoderStatus get_icc_size(const cic_jxl_decoder *d, size_t *size) {
    const cic_jxl_api *api = d->api;
    return api->get_icc_size_v9 ? api->get_icc_size_v9(d->dec, JXL_COLOR_PROFILE_TARGET_DATA, size)
                                : api->get_icc_size_v7(d->dec, NULL, JXL_COLOR_PROFILE_TARGET_DATA, size);
}

static JxlDecoderStatus get_icc(const cic_jxl_decoder *d, uint8_t *out, size_t size) {
    const cic_jxl_api *api = d->api;
    return api->get_icc_v9 ? api->get_icc_v9(d->dec, JXL_COLOR_PROFILE_TARGET_DATA, out, size)
                           : api->get_icc_v7(d->dec, NULL, JXL_COLOR_PROFILE_TARGET_DATA, out, size);
}

static int is_srgb_encoding(const JxlColorEncoding *e) {
    if (e->transfer_function != JXL_TRANSFER_FUNCTION_SRGB || e->white_point != JXL_WHITE_POINT_D65) return 0;
    return e->color_space == JXL_COLOR_SPACE_GRAY || (e->color_space == JXL_COLOR_SPACE_RGB && e->primaries == JXL_PRIMARIES_SRGB);
}

// At the colour event: an XYB image (libjxl converts XYB to any space itself) is asked for sRGB; then the space
// the pixels will really be in is read, as an enumerated encoding when it is one and as ICC bytes always.
static int resolve_color(cic_jxl_decoder *d) {
    memset(&d->color, 0, sizeof d->color);
    if (!d->info.uses_original_profile) {
        JxlColorEncoding srgb;
        memset(&srgb, 0, sizeof srgb);
        srgb.color_space = d->info.num_color_channels == 1 ? JXL_COLOR_SPACE_GRAY : JXL_COLOR_SPACE_RGB;
        srgb.white_point = JXL_WHITE_POINT_D65;
        srgb.primaries = JXL_PRIMARIES_SRGB;
        srgb.transfer_function = JXL_TRANSFER_FUNCTION_SRGB;
        srgb.rendering_intent = JXL_RENDERING_INTENT_PERCEPTUAL;
        d->api->set_preferred_color_profile(d->dec, &srgb);  // refused only where libjxl cannot: then read below
    }
    JxlColorEncoding e;
    memset(&e, 0, sizeof e);
    if (get_encoded_profile(d, &e) == JXL_DEC_SUCCESS) {
        d->color.has_encoding = 1;
        d->color.color_space = e.color_space;
        d->color.transfer = e.transfer_function;
        d->color.gamma = e.gamma;
        memcpy(d->color.white_xy, e.white_point_xy, sizeof d->color.white_xy);
        memcpy(d->color.red_xy, e.primaries_red_xy, sizeof d->color.red_xy);
        memcpy(d->color.green_xy, e.primaries_green_xy, sizeof d->color.green_xy);
        memcpy(d->color.blue_xy, e.primaries_blue_xy, sizeof d->color.blue_xy);
        d->color.is_srgb = is_srgb_encoding(&e);
        d->color.linear_output = e.transfer_function == JXL_TRANSFER_FUNCTION_LINEAR;
    }
    size_t size = 0;
    if (get_icc_size(d, &size) == JXL_DEC_SUCCESS && size > 0 && size <= (16u << 20)) {
        d->icc = malloc(size);
        if (d->icc && get_icc(d, d->icc, size) == JXL_DEC_SUCCESS) {
            d->color.icc_size = size;
        } else {
            free(d->icc);
            d->icc = NULL;
        }
    }
    return CIC_JXL_EVENT_COLOR;
}

static size_t canvas_pixels(const cic_jxl_decoder *d) {
    return (size_t)d->info.xsize * (size_t)d->info.ysize;
}

// The sRGB curve at 4096 points over 0...1, rounded to bytes: linear float samples go through it.
static const uint8_t *srgb_table(void) {
    static uint8_t table[4097];
    static int ready = 0;  // written identically by any thread that races here
    if (!ready) {
        for (int i = 0; i <= 4096; i++) {
            double v = i / 4096.0;
            double s = v <= 0.0031308 ? 12.92 * v : 1.055 * pow(v, 1 / 2.4) - 0.055;
            table[i] = (uint8_t)lround(s * 255);
        }
        __atomic_store_n(&ready, 1, __ATOMIC_RELEASE);
    }
    return table;
}

// Linear float RGBA to RGBA8: colour through the sRGB curve, alpha scaled; NaN and below 0 is 0, above 1 is 1.
static void write_linear(cic_jxl_decoder *d) {
    if (!d->linear || !d->rgba) return;
    const uint8_t *curve = srgb_table();
    size_t count = canvas_pixels(d) * 4;
    for (size_t i = 0; i < count; i++) {
        float v = d->linear[i];
        v = v > 0 ? (v < 1 ? v : 1) : 0;  // NaN fails `v > 0`
        d->rgba[i] = (i & 3) == 3 ? (uint8_t)lrintf(v * 255) : curve[(size_t)lrintf(v * 4096)];
    }
}

int cic_jxl_process(cic_jxl_decoder *d) {
    const cic_jxl_api *api = d->api;
    for (;;) {  // each libjxl event is either returned or handled and passed; libjxl ends with input or an error
        JxlDecoderStatus status = api->process_input(d->dec);
        switch (status) {
        case JXL_DEC_ERROR:
            return fail(d, "libjxl rejected the codestream");
        case JXL_DEC_NEED_MORE_INPUT:
            return CIC_JXL_EVENT_NEED_MORE_INPUT;
        case JXL_DEC_SUCCESS:
            return CIC_JXL_EVENT_SUCCESS;
        case JXL_DEC_BASIC_INFO:
            if (api->get_basic_info(d->dec, &d->info) != JXL_DEC_SUCCESS) return fail(d, "libjxl gave no basic info");
            d->have_info = 1;
            return CIC_JXL_EVENT_BASIC_INFO;
        case JXL_DEC_COLOR_ENCODING:
            return resolve_color(d);
        case JXL_DEC_FRAME:
            if (api->get_frame_header(d->dec, &d->frame) != JXL_DEC_SUCCESS) return fail(d, "libjxl gave no frame header");
            return CIC_JXL_EVENT_FRAME;
        case JXL_DEC_NEED_IMAGE_OUT_BUFFER:
            return CIC_JXL_EVENT_NEED_OUTPUT;
        case JXL_DEC_FULL_IMAGE:
            if (d->color.linear_output) write_linear(d);
            d->rgba = NULL;  // libjxl is done with it; the next frame gets its own
            return CIC_JXL_EVENT_FULL_IMAGE;
        default:
            // Previews, progression steps, boxes and JPEG reconstruction are not subscribed: nothing else comes.
            return fail(d, "libjxl returned an unexpected event");
        }
    }
}

void cic_jxl_basic_info(const cic_jxl_decoder *d, cic_jxl_info *info) {
    memset(info, 0, sizeof *info);
    if (!d->have_info) return;
    const JxlBasicInfo *b = &d->info;
    int swaps = b->orientation >= 5 && b->orientation <= 8;
    info->width = swaps ? b->ysize : b->xsize;
    info->height = swaps ? b->xsize : b->ysize;
    info->bits_per_sample = b->bits_per_sample;
    info->exponent_bits_per_sample = b->exponent_bits_per_sample;
    info->alpha_bits = b->alpha_bits;
    info->alpha_premultiplied = b->alpha_premultiplied;
    info->have_animation = b->have_animation;
    info->tps_numerator = b->animation.tps_numerator;
    info->tps_denominator = b->animation.tps_denominator;
    info->num_loops = b->animation.num_loops;
    info->orientation = (uint32_t)b->orientation;
    info->uses_original_profile = b->uses_original_profile;
    info->num_color_channels = b->num_color_channels;
}

void cic_jxl_color_info(const cic_jxl_decoder *d, cic_jxl_color *color) { *color = d->color; }

int cic_jxl_copy_icc(const cic_jxl_decoder *d, uint8_t *out, size_t size) {
    if (!d->icc || size != d->color.icc_size) return -1;
    memcpy(out, d->icc, size);
    return 0;
}

void cic_jxl_frame_header(const cic_jxl_decoder *d, cic_jxl_frame *frame) {
    frame->duration = d->frame.duration;
    frame->is_last = d->frame.is_last;
    frame->layer_width = d->frame.layer_info.xsize;
    frame->layer_height = d->frame.layer_info.ysize;
}

int cic_jxl_set_output(cic_jxl_decoder *d, uint8_t *rgba, size_t size) {
    const cic_jxl_api *api = d->api;
    size_t pixels = canvas_pixels(d);
    if (!d->have_info || pixels == 0 || size / 4 != pixels || size % 4 != 0) return refuse(d, "output buffer of the wrong size");
    JxlPixelFormat format = {4, d->color.linear_output ? JXL_TYPE_FLOAT : JXL_TYPE_UINT8, JXL_NATIVE_ENDIAN, 0};
    size_t needed = 0;
    if (api->image_out_buffer_size(d->dec, &format, &needed) != JXL_DEC_SUCCESS) return refuse(d, "libjxl gave no buffer size");
    void *target = rgba;
    size_t target_size = size;
    if (d->color.linear_output) {
        if (needed / 16 != pixels) return refuse(d, "libjxl asks for an unexpected float buffer size");
        if (!d->linear) {
            d->linear = calloc(pixels, 16);
            if (!d->linear) return refuse(d, "out of memory");
            d->linear_size = pixels * 16;
        }
        target = d->linear;
        target_size = d->linear_size;
    } else if (needed != size) {
        return refuse(d, "libjxl asks for an unexpected buffer size");
    }
    d->rgba = rgba;
    d->rgba_size = size;
    if (api->set_image_out_buffer(d->dec, &format, target, target_size) != JXL_DEC_SUCCESS) {
        return refuse(d, "libjxl refused the output buffer");
    }
    return 0;
}

int cic_jxl_flush(cic_jxl_decoder *d) {
    if (!d->rgba || d->api->flush_image(d->dec) != JXL_DEC_SUCCESS) return -1;
    if (d->color.linear_output) write_linear(d);
    return 0;
}

void cic_jxl_skip_frames(cic_jxl_decoder *d, size_t count) {
    if (count > 0) d->api->skip_frames(d->dec, count);
}

const char *cic_jxl_message(const cic_jxl_decoder *d) { return d->message; }
