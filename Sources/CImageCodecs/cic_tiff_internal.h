// Internal to the TIFF shim (not in include/, so not exported to Swift): the state cic_tiff.c and
// cic_tiff_samples.c share.
//
// libtiff through dlsym. The few declarations below mirror libtiff 4.5's tiffio.h (only what is used).
#ifndef CIC_TIFF_INTERNAL_H
#define CIC_TIFF_INTERNAL_H

#include <stdarg.h>
#include <stdint.h>
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

enum {
    TAG_IMAGEWIDTH = 256, TAG_IMAGELENGTH = 257, TAG_BITSPERSAMPLE = 258, TAG_COMPRESSION = 259, TAG_PHOTOMETRIC = 262,
    TAG_ORIENTATION = 274, TAG_SAMPLESPERPIXEL = 277, TAG_ROWSPERSTRIP = 278, TAG_PLANARCONFIG = 284,
    TAG_ICCPROFILE = 34675, TAG_TILEWIDTH = 322, TAG_TILELENGTH = 323, TAG_INKSET = 332, TAG_EXTRASAMPLES = 338,
    TAG_SAMPLEFORMAT = 339,
    COMPRESSION_OJPEG = 6, COMPRESSION_JPEG = 7,
    ORIENTATION_TOPLEFT = 1, PHOTOMETRIC_MINISWHITE = 0, PHOTOMETRIC_MINISBLACK = 1, PHOTOMETRIC_RGB = 2,
    PHOTOMETRIC_SEPARATED = 5, PHOTOMETRIC_CIELAB = 8, PHOTOMETRIC_ICCLAB = 9, INKSET_CMYK = 1,
    PLANARCONFIG_CONTIG = 1, PLANARCONFIG_SEPARATE = 2, SAMPLEFORMAT_UINT = 1, SAMPLEFORMAT_INT = 2, SAMPLEFORMAT_IEEEFP = 3,
    EXTRASAMPLE_UNSPECIFIED = 0, EXTRASAMPLE_ASSOCALPHA = 1, EXTRASAMPLE_UNASSALPHA = 2,
};

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
    int (*get_field_defaulted)(TIFF *, uint32_t tag, ...);
    int (*set_field)(TIFF *, uint32_t tag, ...);
    int (*is_tiled)(TIFF *);
    tmsize_t (*strip_size)(TIFF *);
    tmsize_t (*tile_size)(TIFF *);
    uint32_t (*compute_strip)(TIFF *, uint32_t row, uint16_t sample);
    uint32_t (*compute_tile)(TIFF *, uint32_t x, uint32_t y, uint32_t z, uint16_t sample);
    tmsize_t (*read_encoded_strip)(TIFF *, uint32_t strip, void *buf, tmsize_t size);
    tmsize_t (*read_encoded_tile)(TIFF *, uint32_t tile, void *buf, tmsize_t size);
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
    int opaque_extra;   // RGB with an unspecified first extra sample: libtiff would use it as alpha
    int straight_alpha; // unassociated alpha, relabelled associated so that libtiff copies it unchanged
    int errors;
    char first_error[256];
};

// Straight alpha from associated (premultiplied) samples, as Pillow converts "RGBa": 255 * c / a, truncated,
// clipped to 255; alpha 0 and 255 leave the colour as it is.
static inline void cic_tiff_unpremultiply(uint8_t *rgba) {
    unsigned a = rgba[3];
    if (a == 0 || a == 255) return;
    for (int c = 0; c < 3; c++) {
        unsigned v = rgba[c] * 255u / a;
        rgba[c] = (uint8_t)(v > 255 ? 255 : v);
    }
}

// Reads the layouts libtiff's RGBA interface refuses or converts differently (cic_tiff_samples.c): integer
// samples of any depth but 1/2/4/8 bits, signed and float samples, CMYK. Returns -2 for any other layout (the
// caller falls back to libtiff's RGBA interface), else as cic_tiff_read_rgba.
int cic_tiff_read_samples(cic_tiff_file *f, uint8_t *out, uint32_t width, uint32_t height, char *message, size_t len);

#endif
