// TIFF through libtiff (libtiff.so.6), resolved with dlsym at run time: the package has no build-time
// dependency on libtiff. libtiff reads through client callbacks over the caller's memory, and its error and
// warning messages are captured per file instead of going to stderr.
#ifndef CIC_TIFF_H
#define CIC_TIFF_H

#include <stddef.h>
#include <stdint.h>

/// Resolved libtiff entry points (opaque to Swift).
typedef struct cic_tiff_api cic_tiff_api;

/// Resolves the entry points from a `dlopen` handle (libtiff 4.5 or later: per-file error handlers).
/// Returns NULL and names the missing symbol in `missing` when the library is unusable.
const cic_tiff_api *cic_tiff_load(void *dl_handle, char *missing, size_t missing_len);

/// libtiff's version banner, e.g. "LIBTIFF, Version 4.5.0 ...".
const char *cic_tiff_version(const cic_tiff_api *api);

/// One TIFF being read (first directory only).
typedef struct cic_tiff_file cic_tiff_file;

/// Opens `data` (not copied: it must stay valid until cic_tiff_close) and reads the first directory's
/// size and Orientation tag (274; 1 when absent). `max_single_alloc` caps any one libtiff allocation.
/// NULL on failure, with libtiff's first error message in `message`.
cic_tiff_file *cic_tiff_open(const cic_tiff_api *api, const void *data, size_t size, size_t max_single_alloc,
                             uint32_t *width, uint32_t *height, int *orientation, char *message, size_t message_len);

/// Decodes into `raster` (width*height uint32) as R,G,B,A bytes, straight alpha, rows in stored order (the
/// Orientation tag is not applied): samples libtiff's RGBA interface handles like Pillow go through
/// TIFFReadRGBAImageOriented (its premultiplied alpha undone); the others (12/16/32-bit, signed, float, CMYK) are
/// read as samples and converted by the shim (Docs/Decoding.md). Returns 0 when clean, 1 when libtiff
/// reported errors while reading strips or tiles (the raster holds what could be read), -1 when nothing
/// could be decoded; `message` gets libtiff's first error.
int cic_tiff_read_rgba(cic_tiff_file *file, uint32_t *raster, uint32_t width, uint32_t height,
                       char *message, size_t message_len);

/// 1 when the image is CIELab or ICCLab (photometric 8 or 9): read it with cic_tiff_read_lab and convert it.
int cic_tiff_is_lab(cic_tiff_file *file);

/// Reads an 8- or 16-bit CIELab/ICCLab image as L, a, b, alpha bytes per pixel in lcms2's 8-bit Lab encoding
/// (L 0...255 for 0...100, a and b offset by 128; the top byte of 16-bit samples), for a Lab -> sRGB transform.
/// Returns as cic_tiff_read_rgba, or -2 for a Lab layout it does not read (other depths, float samples).
int cic_tiff_read_lab(cic_tiff_file *file, uint8_t *out, uint32_t width, uint32_t height,
                      char *message, size_t message_len);

/// 1 when the image is CMYK (photometric 5, InkSet CMYK, at least four samples).
int cic_tiff_is_cmyk(cic_tiff_file *file);

/// Reads a CMYK image (photometric 5, four inks, any depth) as C, M, Y, K bytes per pixel (0 = no ink, samples
/// reduced to 8 bits by the sample rules), for an ICC transform; `alpha` (width*height bytes) gets the alpha
/// sample, or 255 without one. Returns as cic_tiff_read_rgba, or -2 for a layout the sample reader does not take.
int cic_tiff_read_cmyk(cic_tiff_file *file, uint8_t *cmyk, uint8_t *alpha, uint32_t width, uint32_t height,
                       char *message, size_t message_len);

/// The ICC profile tag (34675) of the first directory, or NULL. Valid until cic_tiff_close.
const void *cic_tiff_icc(cic_tiff_file *file, size_t *length);

/// Closes the file. NULL is allowed.
void cic_tiff_close(cic_tiff_file *file);

#endif
