// libtiff through dlsym. The few declarations below mirror libtiff 4.5's tiffio.h (only what is used).
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cic_tiff.h"

typedef struct tiff TIFF;
typedef struct TIFFOpenOptions TIFFOpenOptions;
typedef int64_t tmsize_t;
typedef uint64_t toff_t;
typedef void *thandle_t;
typedef tmsize_t (*TIFFReadWriteProc)(thandle_t, void *, tmsize_t);
typedef toff_t (*TIFFSeekProc)(thandle_t, toff_t, int);
typedef int (*TIFFCloseProc)(thandle_t);
typedef toff_t (*TIFFSizeProc)(thandle_t);
typedef int (*TIFFMapFileProc)(thandle_t, void **base, toff_t *size);
typedef void (*TIFFUnmapFileProc)(thandle_t, void *base, toff_t size);
typedef void (*TIFFErrorHandler)(const char *module, const char *fmt, va_list ap);
typedef int (*TIFFErrorHandlerExtR)(TIFF *, void *user_data, const char *module, const char *fmt, va_list ap);

enum { TAG_IMAGEWIDTH = 256, TAG_IMAGELENGTH = 257, TAG_ORIENTATION = 274, ORIENTATION_TOPLEFT = 1 };


struct cic_tiff_api {
    const char *(*get_version)(void);
    TIFFOpenOptions *(*options_alloc)(void);
    void (*options_free)(TIFFOpenOptions *);
    void (*options_set_max_single_alloc)(TIFFOpenOptions *, tmsize_t);
    void (*options_set_error_handler)(TIFFOpenOptions *, TIFFErrorHandlerExtR, void *);
    void (*options_set_warning_handler)(TIFFOpenOptions *, TIFFErrorHandlerExtR, void *);
    TIFF *(*client_open_ext)(const char *, const char *, thandle_t, TIFFReadWriteProc, TIFFReadWriteProc,
                             TIFFSeekProc, TIFFCloseProc, TIFFSizeProc, TIFFMapFileProc, TIFFUnmapFileProc,
                             TIFFOpenOptions *);
    int (*get_field)(TIFF *, uint32_t tag, ...);
    int (*rgba_image_ok)(TIFF *, char emsg[1024]);
    int (*read_rgba_image_oriented)(TIFF *, uint32_t, uint32_t, uint32_t *, int, int);
    void (*close)(TIFF *);
    TIFFErrorHandler (*set_error_handler)(TIFFErrorHandler);
    TIFFErrorHandler (*set_warning_handler)(TIFFErrorHandler);
};

struct cic_tiff_file {
    const cic_tiff_api *api;
    TIFF *tif;
    const uint8_t *data;
    uint64_t size;
    uint64_t position;
    int orientation;  // the Orientation tag, 1...8
    int errors;
    char first_error[256];
};

#define CIC_RESOLVE(field, name)                                         \
    do {                                                                 \
        *(void **)(&api->field) = dlsym(dl_handle, name);                \
        if (!api->field) {                                               \
            snprintf(missing, missing_len, "symbol %s not found", name); \
            free(api);                                                   \
            return NULL;                                                 \
        }                                                                \
    } while (0)

const cic_tiff_api *cic_tiff_load(void *dl_handle, char *missing, size_t missing_len) {
    cic_tiff_api *api = calloc(1, sizeof *api);
    if (!api) {
        snprintf(missing, missing_len, "out of memory");
        return NULL;
    }
    CIC_RESOLVE(get_version, "TIFFGetVersion");
    CIC_RESOLVE(options_alloc, "TIFFOpenOptionsAlloc");
    CIC_RESOLVE(options_free, "TIFFOpenOptionsFree");
    CIC_RESOLVE(options_set_max_single_alloc, "TIFFOpenOptionsSetMaxSingleMemAlloc");
    CIC_RESOLVE(options_set_error_handler, "TIFFOpenOptionsSetErrorHandlerExtR");
    CIC_RESOLVE(options_set_warning_handler, "TIFFOpenOptionsSetWarningHandlerExtR");
    CIC_RESOLVE(client_open_ext, "TIFFClientOpenExt");
    CIC_RESOLVE(get_field, "TIFFGetField");
    CIC_RESOLVE(rgba_image_ok, "TIFFRGBAImageOK");
    CIC_RESOLVE(read_rgba_image_oriented, "TIFFReadRGBAImageOriented");
    CIC_RESOLVE(close, "TIFFClose");
    CIC_RESOLVE(set_error_handler, "TIFFSetErrorHandler");
    CIC_RESOLVE(set_warning_handler, "TIFFSetWarningHandler");
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
static int mem_map(thandle_t h, void **base, toff_t *size) { (void)h; (void)base; (void)size; return 0; }
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
    // "m": no memory mapping, so libtiff never touches the caller's buffer except through mem_read.
    f->tif = api->client_open_ext("memory", "rm", f, mem_read, mem_write, mem_seek, mem_close, mem_size,
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
    *width = w;
    *height = h;
    *orientation = o;
    return f;
}

int cic_tiff_read_rgba(cic_tiff_file *f, uint32_t *raster, uint32_t width, uint32_t height,
                       char *message, size_t message_len) {
    snprintf(message, message_len, "%s", "");
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
        uint8_t a = (uint8_t)(abgr >> 24);
        bytes[i * 4 + 3] = a;
        // libtiff's RGBA interface premultiplies alpha; the package's contract is straight alpha.
        if (a != 255 && a != 0) {
            for (int c = 0; c < 3; c++) {
                unsigned v = (bytes[i * 4 + c] * 255u + a / 2u) / a;
                bytes[i * 4 + c] = (uint8_t)(v > 255 ? 255 : v);
            }
        }
    }
    if (f->errors > errors_before) {
        snprintf(message, message_len, "%s", f->first_error);
        return 1;
    }
    return 0;
}

void cic_tiff_close(cic_tiff_file *f) {
    if (!f) return;
    if (f->tif) f->api->close(f->tif);
    free(f);
}
