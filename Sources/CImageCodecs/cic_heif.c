// libheif through dlsym. The declarations below mirror libheif 1.15's public heif.h (only what is used);
// the structs passed by value or written to must match its layout exactly.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cic_heif.h"
#include "cdl.h"

struct heif_context;
struct heif_image_handle;
struct heif_image;

struct heif_error {
    int code;     // enum heif_error_code
    int subcode;  // enum heif_suberror_code
    const char *message;
};

// struct heif_decoding_options, versions 1-2 (the library allocates it, so later fields may follow).
struct heif_decoding_options_v2 {
    uint8_t version;
    uint8_t ignore_transformations;
    void (*start_progress)(int step, int max_progress, void *user_data);
    void (*on_progress)(int step, int progress, void *user_data);
    void (*end_progress)(int step, void *user_data);
    void *progress_user_data;
    uint8_t convert_hdr_to_8bit;
};

// The leading fields of libheif's struct heif_color_profile_nclx (version 1; the decoded chromaticities that
// follow are not read: the Swift side has the H.273 table).
struct cic_heif_nclx {
    uint8_t version;
    int color_primaries;           // enum heif_color_primaries
    int transfer_characteristics;  // enum heif_transfer_characteristics
    int matrix_coefficients;       // enum heif_matrix_coefficients
    uint8_t full_range_flag;
};

enum { heif_colorspace_RGB = 1, heif_chroma_interleaved_RGBA = 11, heif_channel_interleaved = 10 };

struct cic_heif_api {
    const char *(*get_version)(void);
    struct heif_context *(*context_alloc)(void);
    void (*context_free)(struct heif_context *);
    struct heif_error (*read_from_memory_without_copy)(struct heif_context *, const void *, size_t, const void *);
    struct heif_error (*get_primary_image_handle)(struct heif_context *, struct heif_image_handle **);
    void (*image_handle_release)(const struct heif_image_handle *);
    int (*image_handle_get_width)(const struct heif_image_handle *);
    int (*image_handle_get_height)(const struct heif_image_handle *);
    int (*image_handle_is_premultiplied_alpha)(const struct heif_image_handle *);  // optional
    struct heif_decoding_options_v2 *(*decoding_options_alloc)(void);
    void (*decoding_options_free)(struct heif_decoding_options_v2 *);
    struct heif_error (*decode_image)(const struct heif_image_handle *, struct heif_image **, int colorspace, int chroma,
                                      const struct heif_decoding_options_v2 *);
    int (*image_get_chroma_format)(const struct heif_image *);
    int (*image_get_width)(const struct heif_image *, int channel);
    int (*image_get_height)(const struct heif_image *, int channel);
    int (*image_get_bits_per_pixel)(const struct heif_image *, int channel);
    const uint8_t *(*image_get_plane_readonly)(const struct heif_image *, int channel, int *stride);
    void (*image_release)(const struct heif_image *);
    struct heif_error (*init)(void *params);  // optional
    // Optional (libheif 1.4+): the primary image's ICC profile ('prof' or 'rICC').
    int (*get_color_profile_type)(const struct heif_image_handle *);
    size_t (*get_raw_color_profile_size)(const struct heif_image_handle *);
    struct heif_error (*get_raw_color_profile)(const struct heif_image_handle *, void *);
    // Optional (libheif 1.4+): the primary image's nclx colour description (code points, no profile).
    struct heif_error (*get_nclx_color_profile)(const struct heif_image_handle *, struct cic_heif_nclx **);
    void (*nclx_color_profile_free)(struct cic_heif_nclx *);
};

struct cic_heif_file {
    const cic_heif_api *api;
    struct heif_context *context;
    struct heif_image_handle *handle;
    struct heif_image *image;
    int premultiplied;
};

// Required entries first; the optional ones (newer libheif) are NULL when absent and checked before use.
static const cdl_symbol heif_symbols[] = {
    CDL_REQUIRED(cic_heif_api, get_version, "heif_get_version"),
    CDL_REQUIRED(cic_heif_api, context_alloc, "heif_context_alloc"),
    CDL_REQUIRED(cic_heif_api, context_free, "heif_context_free"),
    CDL_REQUIRED(cic_heif_api, read_from_memory_without_copy, "heif_context_read_from_memory_without_copy"),
    CDL_REQUIRED(cic_heif_api, get_primary_image_handle, "heif_context_get_primary_image_handle"),
    CDL_REQUIRED(cic_heif_api, image_handle_release, "heif_image_handle_release"),
    CDL_REQUIRED(cic_heif_api, image_handle_get_width, "heif_image_handle_get_width"),
    CDL_REQUIRED(cic_heif_api, image_handle_get_height, "heif_image_handle_get_height"),
    CDL_REQUIRED(cic_heif_api, decoding_options_alloc, "heif_decoding_options_alloc"),
    CDL_REQUIRED(cic_heif_api, decoding_options_free, "heif_decoding_options_free"),
    CDL_REQUIRED(cic_heif_api, decode_image, "heif_decode_image"),
    CDL_REQUIRED(cic_heif_api, image_get_chroma_format, "heif_image_get_chroma_format"),
    CDL_REQUIRED(cic_heif_api, image_get_width, "heif_image_get_width"),
    CDL_REQUIRED(cic_heif_api, image_get_height, "heif_image_get_height"),
    CDL_REQUIRED(cic_heif_api, image_get_bits_per_pixel, "heif_image_get_bits_per_pixel"),
    CDL_REQUIRED(cic_heif_api, image_get_plane_readonly, "heif_image_get_plane_readonly"),
    CDL_REQUIRED(cic_heif_api, image_release, "heif_image_release"),
    // libheif 1.13+; older versions initialise implicitly.
    CDL_OPTIONAL(cic_heif_api, init, "heif_init"),
    // libheif 1.4+: the primary image's ICC profile ('prof' or 'rICC') and nclx colour description.
    CDL_OPTIONAL(cic_heif_api, get_color_profile_type, "heif_image_handle_get_color_profile_type"),
    CDL_OPTIONAL(cic_heif_api, get_raw_color_profile_size, "heif_image_handle_get_raw_color_profile_size"),
    CDL_OPTIONAL(cic_heif_api, get_raw_color_profile, "heif_image_handle_get_raw_color_profile"),
    CDL_OPTIONAL(cic_heif_api, get_nclx_color_profile, "heif_image_handle_get_nclx_color_profile"),
    CDL_OPTIONAL(cic_heif_api, nclx_color_profile_free, "heif_nclx_color_profile_free"),
    // libheif 1.12+; older versions never report premultiplied alpha.
    CDL_OPTIONAL(cic_heif_api, image_handle_is_premultiplied_alpha, "heif_image_handle_is_premultiplied_alpha"),
};

const cic_heif_api *cic_heif_load(void *dl_handle, char *missing, size_t missing_len) {
    cic_heif_api *api = cdl_load(dl_handle, heif_symbols, CDL_COUNT(heif_symbols), sizeof *api, missing, missing_len);
    if (!api) return NULL;
    // heif_init loads the decoder plugins; calling it once here, under the Swift side's load lock, keeps that
    // out of concurrent first decodes.
    if (api->init) {
        struct heif_error err = api->init(NULL);
        if (err.code != 0) {
            snprintf(missing, missing_len, "heif_init failed: %s", err.message ? err.message : "unknown error");
            free(api);
            return NULL;
        }
    }
    return api;
}

const char *cic_heif_version(const cic_heif_api *api) {
    const char *v = api->get_version();
    return v ? v : "unknown";
}

static void set_status(cic_heif_status *status, struct heif_error err) {
    status->code = err.code;
    status->subcode = err.subcode;
    snprintf(status->message, sizeof status->message, "%s", err.message ? err.message : "");
}

static void set_failure(cic_heif_status *status, const char *message) {
    status->code = 2;  // heif_error_Invalid_input
    status->subcode = 0;
    snprintf(status->message, sizeof status->message, "%s", message);
}

cic_heif_file *cic_heif_open(const cic_heif_api *api, const void *data, size_t size,
                             int *width, int *height, cic_heif_status *status) {
    memset(status, 0, sizeof *status);
    cic_heif_file *file = calloc(1, sizeof *file);
    if (!file) {
        set_failure(status, "out of memory");
        return NULL;
    }
    file->api = api;
    file->context = api->context_alloc();
    if (!file->context) {
        set_failure(status, "heif_context_alloc failed");
        cic_heif_close(file);
        return NULL;
    }
    struct heif_error err = api->read_from_memory_without_copy(file->context, data, size, NULL);
    if (err.code == 0) err = api->get_primary_image_handle(file->context, &file->handle);
    if (err.code != 0 || !file->handle) {
        if (err.code != 0) set_status(status, err); else set_failure(status, "no primary image");
        cic_heif_close(file);
        return NULL;
    }
    *width = api->image_handle_get_width(file->handle);
    *height = api->image_handle_get_height(file->handle);
    file->premultiplied = api->image_handle_is_premultiplied_alpha
        ? api->image_handle_is_premultiplied_alpha(file->handle) : 0;
    return file;
}

int cic_heif_decode(cic_heif_file *file, int *width, int *height, cic_heif_status *status) {
    memset(status, 0, sizeof *status);
    const cic_heif_api *api = file->api;
    struct heif_decoding_options_v2 *options = api->decoding_options_alloc();
    // HDR (10/12-bit) images: ask libheif for 8 bits per channel instead of RRGGBBAA.
    if (options && options->version >= 2) options->convert_hdr_to_8bit = 1;
    struct heif_error err = api->decode_image(file->handle, &file->image, heif_colorspace_RGB,
                                              heif_chroma_interleaved_RGBA, options);
    if (options) api->decoding_options_free(options);
    if (err.code != 0 || !file->image) {
        if (err.code != 0) set_status(status, err); else set_failure(status, "decoder returned no image");
        return -1;
    }
    if (api->image_get_chroma_format(file->image) != heif_chroma_interleaved_RGBA ||
        api->image_get_bits_per_pixel(file->image, heif_channel_interleaved) != 32) {
        status->code = CIC_HEIF_UNSUPPORTED_FEATURE;
        status->subcode = 0;
        snprintf(status->message, sizeof status->message, "libheif did not produce 8-bit RGBA");
        return -1;
    }
    *width = api->image_get_width(file->image, heif_channel_interleaved);
    *height = api->image_get_height(file->image, heif_channel_interleaved);
    return 0;
}

int cic_heif_copy_rgba(const cic_heif_file *file, uint8_t *out, size_t out_size) {
    const cic_heif_api *api = file->api;
    if (!file->image) return -1;
    int width = api->image_get_width(file->image, heif_channel_interleaved);
    int height = api->image_get_height(file->image, heif_channel_interleaved);
    int stride = 0;
    const uint8_t *plane = api->image_get_plane_readonly(file->image, heif_channel_interleaved, &stride);
    if (!plane || width <= 0 || height <= 0 || stride < width * 4) return -1;
    size_t row_bytes = (size_t)width * 4;
    if (out_size != row_bytes * (size_t)height) return -1;
    for (int y = 0; y < height; y++) {
        uint8_t *row = out + (size_t)y * row_bytes;
        memcpy(row, plane + (size_t)y * (size_t)stride, row_bytes);
        if (!file->premultiplied) continue;
        // The package's contract is straight alpha.
        for (size_t x = 0; x < row_bytes; x += 4) {
            unsigned a = row[x + 3];
            if (a == 0 || a == 255) continue;
            for (int c = 0; c < 3; c++) {
                unsigned v = (row[x + c] * 255u + a / 2) / a;
                row[x + c] = (uint8_t)(v > 255 ? 255 : v);
            }
        }
    }
    return 0;
}

size_t cic_heif_icc_size(const cic_heif_file *file) {
    const cic_heif_api *api = file->api;
    if (!file->handle || !api->get_color_profile_type || !api->get_raw_color_profile_size || !api->get_raw_color_profile)
        return 0;
    int type = api->get_color_profile_type(file->handle);
    // heif_color_profile_type_prof / _rICC: fourcc('p','r','o','f') / fourcc('r','I','C','C').
    if (type != 0x70726f66 && type != 0x72494343) return 0;
    return api->get_raw_color_profile_size(file->handle);
}

int cic_heif_copy_icc(const cic_heif_file *file, uint8_t *out, size_t out_size) {
    if (out_size == 0 || cic_heif_icc_size(file) != out_size) return -1;
    struct heif_error err = file->api->get_raw_color_profile(file->handle, out);
    return err.code == 0 ? 0 : -1;
}

int cic_heif_nclx(const cic_heif_file *file, int *primaries, int *transfer) {
    const cic_heif_api *api = file->api;
    if (!file->handle || !api->get_color_profile_type || !api->get_nclx_color_profile || !api->nclx_color_profile_free)
        return -1;
    // heif_color_profile_type_nclx: fourcc('n','c','l','x'). An ICC profile, when present, wins.
    if (api->get_color_profile_type(file->handle) != 0x6e636c78) return -1;
    struct cic_heif_nclx *nclx = NULL;
    struct heif_error err = api->get_nclx_color_profile(file->handle, &nclx);
    if (err.code != 0 || !nclx) {
        // libheif 1.15 hands back the profile even when it refuses its code points (an unknown primaries value).
        if (nclx) api->nclx_color_profile_free(nclx);
        return -1;
    }
    *primaries = nclx->color_primaries;
    *transfer = nclx->transfer_characteristics;
    api->nclx_color_profile_free(nclx);
    return 0;
}

void cic_heif_close(cic_heif_file *file) {
    if (!file) return;
    const cic_heif_api *api = file->api;
    if (file->image) api->image_release(file->image);
    if (file->handle) api->image_handle_release(file->handle);
    if (file->context) api->context_free(file->context);
    free(file);
}
