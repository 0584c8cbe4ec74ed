// libtiff through dlsym: the loader, the in-memory client, opening and the RGBA read. The declarations
// mirroring libtiff 4.5's tiffio.h are in cic_tiff_internal.h; the layouts libtiff's RGBA interface refuses
// (12-, 16-, 32-bit, float, CMYK, Lab) are read as samples in cic_tiff_samples.c.
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cic_tiff.h"
#include "cic_tiff_internal.h"
#include "cdl.h"

static const cdl_symbol tiff_symbols[] = {
    CDL_REQUIRED(cic_tiff_api, get_version, "TIFFGetVersion"),
    CDL_REQUIRED(cic_tiff_api, options_alloc, "TIFFOpenOptionsAlloc"),
    CDL_REQUIRED(cic_tiff_api, options_free, "TIFFOpenOptionsFree"),
    CDL_REQUIRED(cic_tiff_api, options_set_max_single_alloc, "TIFFOpenOptionsSetMaxSingleMemAlloc"),
    CDL_REQUIRED(cic_tiff_api, options_set_error_handler, "TIFFOpenOptionsSetErrorHandlerExtR"),
    CDL_REQUIRED(cic_tiff_api, options_set_warning_handler, "TIFFOpenOptionsSetWarningHandlerExtR"),
    CDL_REQUIRED(cic_tiff_api, client_open_ext, "TIFFClientOpenExt"),
    CDL_REQUIRED(cic_tiff_api, get_field, "TIFFGetField"),
    CDL_REQUIRED(cic_tiff_api, get_field_defaulted, "TIFFGetFieldDefaulted"),
    CDL_REQUIRED(cic_tiff_api, set_field, "TIFFSetField"),
    CDL_REQUIRED(cic_tiff_api, is_tiled, "TIFFIsTiled"),
    CDL_REQUIRED(cic_tiff_api, strip_size, "TIFFStripSize"),
    CDL_REQUIRED(cic_tiff_api, tile_size, "TIFFTileSize"),
    CDL_REQUIRED(cic_tiff_api, compute_strip, "TIFFComputeStrip"),
    CDL_REQUIRED(cic_tiff_api, compute_tile, "TIFFComputeTile"),
    CDL_REQUIRED(cic_tiff_api, read_encoded_strip, "TIFFReadEncodedStrip"),
    CDL_REQUIRED(cic_tiff_api, read_encoded_tile, "TIFFReadEncodedTile"),
    CDL_REQUIRED(cic_tiff_api, rgba_image_ok, "TIFFRGBAImageOK"),
    CDL_REQUIRED(cic_tiff_api, read_rgba_image_oriented, "TIFFReadRGBAImageOriented"),
    CDL_REQUIRED(cic_tiff_api, close, "TIFFClose"),
    CDL_REQUIRED(cic_tiff_api, set_error_handler, "TIFFSetErrorHandler"),
    CDL_REQUIRED(cic_tiff_api, set_warning_handler, "TIFFSetWarningHandler"),
};

const cic_tiff_api *cic_tiff_load(void *dl_handle, char *missing, size_t missing_len) {
    cic_tiff_api *api = cdl_load(dl_handle, tiff_symbols, CDL_COUNT(tiff_symbols), sizeof *api, missing, missing_len);
    if (!api) return NULL;
    // Messages from code paths without a TIFF* still go to the global handlers: silence them (stderr).
    api->set_error_handler(NULL);
    api->set_warning_handler(NULL);
    return api;
}

const char *cic_tiff_version(const cic_tiff_api *api) {
    const char *v = api->get_version();
    return v ? v : "unknown";
}

// MARK: - Memory client callbacks

static tmsize_t mem_read(thandle_t h, void *buf, tmsize_t n) {
    cic_tiff_file *f = h;
    if (n <= 0 || f->position >= f->size) return 0;
    uint64_t available = f->size - f->position;
    uint64_t count = (uint64_t)n < available ? (uint64_t)n : available;
    memcpy(buf, f->data + f->position, (size_t)count);
    f->position += count;
    return (tmsize_t)count;
}

static tmsize_t mem_write(thandle_t h, void *buf, tmsize_t n) {
    (void)h; (void)buf; (void)n;
    return -1;  // read-only
}

static toff_t mem_seek(thandle_t h, toff_t offset, int whence) {
    cic_tiff_file *f = h;
    uint64_t base;
    switch (whence) {
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = f->position; break;
    case SEEK_END: base = f->size; break;
    default: return (toff_t)-1;
    }
    // toff_t is unsigned; a "negative" offset wraps, which is fine as long as the sum does not.
    uint64_t target = base + offset;
    if ((int64_t)offset >= 0 ? target < base : target > base) return (toff_t)-1;
    f->position = target;  // past the end is allowed; reads there return 0 bytes
    return target;
}

static int mem_close(thandle_t h) { (void)h; return 0; }
static toff_t mem_size(thandle_t h) { return ((cic_tiff_file *)h)->size; }
// The caller's buffer is the "mapping": libtiff then reads strips and tiles in place, exactly as it does for
// a memory-mapped file (its default, and what tiff2rgba uses). Its unmapped path rejects valid uncompressed
// tiles smaller than its rounded-up read buffer ("Invalid tile byte count"). Opened "r", libtiff never
// writes through the mapping.
static int mem_map(thandle_t h, void **base, toff_t *size) {
    cic_tiff_file *f = h;
    *base = (void *)f->data;
    *size = f->size;
    return 1;
}
static void mem_unmap(thandle_t h, void *base, toff_t size) { (void)h; (void)base; (void)size; }

static int on_error(TIFF *tif, void *user_data, const char *module, const char *fmt, va_list ap) {
    (void)tif;
    cic_tiff_file *f = user_data;
    if (f->errors++ == 0) {
        char text[200];
        vsnprintf(text, sizeof text, fmt, ap);
        snprintf(f->first_error, sizeof f->first_error, "%s%s%s", module ? module : "", module ? ": " : "", text);
    }
    return 1;  // handled: nothing reaches stderr
}

static int on_warning(TIFF *tif, void *user_data, const char *module, const char *fmt, va_list ap) {
    (void)tif; (void)user_data; (void)module; (void)fmt; (void)ap;
    return 1;
}

// Extra samples as Pillow and browsers read them. libtiff's RGBA interface takes an unspecified first extra
// sample of an RGB image as associated alpha (tif_getimage.c), where the others show the image opaque (RGBX);
// and it premultiplies unassociated alpha, which the straight-alpha output would have to undo with rounding
// loss (a value at alpha 167 came back one off). Relabelling unassociated alpha as associated in the
// in-memory directory makes libtiff copy the samples unchanged.
static void classify_extra_samples(cic_tiff_file *f) {
    const cic_tiff_api *api = f->api;
    uint16_t photometric = 0, samples = 1, count = 0;
    uint16_t *extra = NULL;
    if (!api->get_field(f->tif, TAG_EXTRASAMPLES, &count, &extra) || count < 1 || !extra || count > 64) return;
    api->get_field_defaulted(f->tif, TAG_SAMPLESPERPIXEL, &samples);
    if (extra[0] == EXTRASAMPLE_UNSPECIFIED) {
        if (api->get_field(f->tif, TAG_PHOTOMETRIC, &photometric) && photometric == PHOTOMETRIC_RGB && samples > 3)
            f->opaque_extra = 1;
    } else if (extra[0] == EXTRASAMPLE_UNASSALPHA) {
        uint16_t relabelled[64];
        memcpy(relabelled, extra, (size_t)count * sizeof *relabelled);
        relabelled[0] = EXTRASAMPLE_ASSOCALPHA;
        if (api->set_field(f->tif, TAG_EXTRASAMPLES, (uint32_t)count, relabelled)) f->straight_alpha = 1;
    }
}

cic_tiff_file *cic_tiff_open(const cic_tiff_api *api, const void *data, size_t size, size_t max_single_alloc,
                             uint32_t *width, uint32_t *height, int *orientation, char *message, size_t message_len) {
    snprintf(message, message_len, "%s", "");
    cic_tiff_file *f = calloc(1, sizeof *f);
    TIFFOpenOptions *options = api->options_alloc();
    if (!f || !options) {
        snprintf(message, message_len, "out of memory");
        free(f);
        if (options) api->options_free(options);
        return NULL;
    }
    f->api = api;
    f->data = data;
    f->size = size;
    api->options_set_max_single_alloc(options, (tmsize_t)max_single_alloc);
    api->options_set_error_handler(options, on_error, f);
    api->options_set_warning_handler(options, on_warning, f);
    // "r" with mem_map: strips and tiles are read in place from the caller's (read-only) buffer.
    f->tif = api->client_open_ext("memory", "r", f, mem_read, mem_write, mem_seek, mem_close, mem_size,
                                  mem_map, mem_unmap, options);
    api->options_free(options);
    if (!f->tif) {
        snprintf(message, message_len, "%s", f->errors ? f->first_error : "not a readable TIFF");
        free(f);
        return NULL;
    }
    uint32_t w = 0, h = 0;
    uint16_t o = ORIENTATION_TOPLEFT;
    if (!api->get_field(f->tif, TAG_IMAGEWIDTH, &w) || !api->get_field(f->tif, TAG_IMAGELENGTH, &h)) {
        snprintf(message, message_len, "%s", f->errors ? f->first_error : "missing ImageWidth/ImageLength");
        cic_tiff_close(f);
        return NULL;
    }
    if (!api->get_field(f->tif, TAG_ORIENTATION, &o) || o < 1 || o > 8) o = ORIENTATION_TOPLEFT;
    f->orientation = o;
    classify_extra_samples(f);
    *width = w;
    *height = h;
    *orientation = o;
    return f;
}

int cic_tiff_read_rgba(cic_tiff_file *f, uint32_t *raster, uint32_t width, uint32_t height,
                       char *message, size_t message_len) {
    snprintf(message, message_len, "%s", "");
    int direct = cic_tiff_read_samples(f, (uint8_t *)raster, width, height, message, message_len);
    if (direct != -2) return direct;
    char why[1024] = {0};
    if (!f->api->rgba_image_ok(f->tif, why)) {
        snprintf(message, message_len, "%s", why[0] ? why : "unsupported TIFF layout");
        return -1;
    }
    int errors_before = f->errors;
    // Requesting the file's own orientation makes libtiff copy rows in stored order (top-down, no flip):
    // asking for TOPLEFT would flip files tagged 2-8 (libtiff folds 5-8 onto 1-4, mirroring without
    // rotating), and the package reports orientation instead of applying it.
    // stop_on_error = 0: a damaged or missing strip leaves its rows blank and reading goes on, so a
    // truncated file still yields the rows that arrived.
    int ok = f->api->read_rgba_image_oriented(f->tif, width, height, raster, f->orientation, 0);
    if (!ok) {
        snprintf(message, message_len, "%s", f->errors ? f->first_error : "TIFFReadRGBAImageOriented failed");
        return -1;
    }
    size_t count = (size_t)width * (size_t)height;
    uint8_t *bytes = (uint8_t *)raster;
    for (size_t i = 0; i < count; i++) {
        uint32_t abgr = raster[i];  // TIFFGetR/G/B/A: R in the low byte
        bytes[i * 4 + 0] = (uint8_t)(abgr & 0xff);
        bytes[i * 4 + 1] = (uint8_t)((abgr >> 8) & 0xff);
        bytes[i * 4 + 2] = (uint8_t)((abgr >> 16) & 0xff);
        uint8_t a = f->opaque_extra ? 255 : (uint8_t)(abgr >> 24);
        bytes[i * 4 + 3] = a;
        // libtiff's RGBA interface premultiplies alpha; the package's contract is straight alpha.
        if (!f->straight_alpha) cic_tiff_unpremultiply(bytes + i * 4);
    }
    if (f->errors > errors_before) {
        snprintf(message, message_len, "%s", f->first_error);
        return 1;
    }
    return 0;
}

const void *cic_tiff_icc(cic_tiff_file *f, size_t *length) {
    uint32_t count = 0;
    void *data = NULL;
    *length = 0;
    if (!f->api->get_field(f->tif, TAG_ICCPROFILE, &count, &data) || !data || count == 0) return NULL;
    *length = count;
    return data;
}

void cic_tiff_close(cic_tiff_file *f) {
    if (!f) return;
    if (f->tif) f->api->close(f->tif);
    free(f);
}
