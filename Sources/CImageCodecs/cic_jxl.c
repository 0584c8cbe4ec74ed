// libjxl through dlsym: the loader, which refuses any version outside 0.7-0.11, and one decode's steps. libjxl's
// declarations, as checked against its headers of each of those versions, are in cic_jxl_internal.h.
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cic_jxl.h"
#include "cic_jxl_internal.h"
#include "cdl.h"

// Versions whose headers the declarations of cic_jxl_internal.h were checked against (major.minor).
static int verified_version(uint32_t version) {
    uint32_t major = version / 1000000, minor = version / 1000 % 1000;
    return major == 0 && minor >= 7 && minor <= 11;
}

// Read first: only the versions verified_version accepts are resolved further.
static const cdl_symbol jxl_version_symbol[] = {
    CDL_REQUIRED(cic_jxl_api, decoder_version, "JxlDecoderVersion"),
};

static const cdl_symbol jxl_symbols[] = {
    CDL_REQUIRED(cic_jxl_api, create, "JxlDecoderCreate"),
    CDL_REQUIRED(cic_jxl_api, destroy, "JxlDecoderDestroy"),
    CDL_REQUIRED(cic_jxl_api, subscribe_events, "JxlDecoderSubscribeEvents"),
    CDL_REQUIRED(cic_jxl_api, set_coalescing, "JxlDecoderSetCoalescing"),
    CDL_REQUIRED(cic_jxl_api, set_unpremultiply_alpha, "JxlDecoderSetUnpremultiplyAlpha"),
    CDL_REQUIRED(cic_jxl_api, set_parallel_runner, "JxlDecoderSetParallelRunner"),
    CDL_REQUIRED(cic_jxl_api, set_input, "JxlDecoderSetInput"),
    CDL_REQUIRED(cic_jxl_api, release_input, "JxlDecoderReleaseInput"),
    CDL_REQUIRED(cic_jxl_api, process_input, "JxlDecoderProcessInput"),
    CDL_REQUIRED(cic_jxl_api, get_basic_info, "JxlDecoderGetBasicInfo"),
    CDL_REQUIRED(cic_jxl_api, get_frame_header, "JxlDecoderGetFrameHeader"),
    CDL_REQUIRED(cic_jxl_api, set_preferred_color_profile, "JxlDecoderSetPreferredColorProfile"),
    CDL_REQUIRED(cic_jxl_api, image_out_buffer_size, "JxlDecoderImageOutBufferSize"),
    CDL_REQUIRED(cic_jxl_api, set_image_out_buffer, "JxlDecoderSetImageOutBuffer"),
    CDL_REQUIRED(cic_jxl_api, flush_image, "JxlDecoderFlushImage"),
    CDL_REQUIRED(cic_jxl_api, skip_frames, "JxlDecoderSkipFrames"),
};

// The colour queries changed signature in 0.9: the same symbols, typed by the version.
static const cdl_symbol jxl_color_symbols_v9[] = {
    CDL_REQUIRED(cic_jxl_api, get_encoded_profile_v9, "JxlDecoderGetColorAsEncodedProfile"),
    CDL_REQUIRED(cic_jxl_api, get_icc_size_v9, "JxlDecoderGetICCProfileSize"),
    CDL_REQUIRED(cic_jxl_api, get_icc_v9, "JxlDecoderGetColorAsICCProfile"),
};
static const cdl_symbol jxl_color_symbols_v7[] = {
    CDL_REQUIRED(cic_jxl_api, get_encoded_profile_v7, "JxlDecoderGetColorAsEncodedProfile"),
    CDL_REQUIRED(cic_jxl_api, get_icc_size_v7, "JxlDecoderGetICCProfileSize"),
    CDL_REQUIRED(cic_jxl_api, get_icc_v7, "JxlDecoderGetColorAsICCProfile"),
};

// From libjxl_threads, all or nothing: without the four, decoders run on the calling thread.
static const cdl_symbol jxl_runner_symbols[] = {
    CDL_REQUIRED(cic_jxl_api, resizable_runner, "JxlResizableParallelRunner"),
    CDL_REQUIRED(cic_jxl_api, runner_create, "JxlResizableParallelRunnerCreate"),
    CDL_REQUIRED(cic_jxl_api, runner_set_threads, "JxlResizableParallelRunnerSetThreads"),
    CDL_REQUIRED(cic_jxl_api, runner_destroy, "JxlResizableParallelRunnerDestroy"),
};

const cic_jxl_api *cic_jxl_load(void *dl_handle, void *threads_handle, char *missing, size_t missing_len) {
    cic_jxl_api *api = cdl_load(dl_handle, jxl_version_symbol, CDL_COUNT(jxl_version_symbol), sizeof *api,
                                missing, missing_len);
    if (!api) return NULL;
    api->version = api->decoder_version();
    if (!verified_version(api->version)) {
        snprintf(missing, missing_len, "libjxl %u.%u.%u is not a version this package was checked against (0.7 to 0.11)",
                 api->version / 1000000, api->version / 1000 % 1000, api->version % 1000);
        free(api);
        return NULL;
    }
    // Both colour tables have the same three entries.
    const cdl_symbol *color = api->version / 1000 % 1000 >= 9 ? jxl_color_symbols_v9 : jxl_color_symbols_v7;
    if (cdl_resolve(dl_handle, jxl_symbols, CDL_COUNT(jxl_symbols), api, missing, missing_len) != 0
        || cdl_resolve(dl_handle, color, CDL_COUNT(jxl_color_symbols_v7), api, missing, missing_len) != 0) {
        free(api);
        return NULL;
    }
    char ignored[96];
    if (threads_handle && cdl_resolve(threads_handle, jxl_runner_symbols, CDL_COUNT(jxl_runner_symbols), api,
                                      ignored, sizeof ignored) != 0) {
        api->resizable_runner = NULL;
    }
    return api;
}

uint32_t cic_jxl_version(const cic_jxl_api *api) { return api->version; }

int cic_jxl_has_threads(const cic_jxl_api *api) { return api->resizable_runner != NULL; }

// One decode: libjxl's decoder, what it reported so far and the output it writes to.
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

// The sRGB curve at 4096 points over 0...1, rounded to bytes: linear float samples go through it. Filled once
// (pthread_once) for every decoder of the process, on whichever thread first needs it.
static uint8_t srgb_curve[4097];
static pthread_once_t srgb_curve_once = PTHREAD_ONCE_INIT;

static void fill_srgb_curve(void) {
    for (int i = 0; i <= 4096; i++) {
        double v = i / 4096.0;
        double s = v <= 0.0031308 ? 12.92 * v : 1.055 * pow(v, 1 / 2.4) - 0.055;
        srgb_curve[i] = (uint8_t)lround(s * 255);
    }
}

static const uint8_t *srgb_table(void) {
    pthread_once(&srgb_curve_once, fill_srgb_curve);
    return srgb_curve;
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
