// HEIF / HEIC / AVIF through libheif (libheif.so.1), resolved with dlsym at run time: the package has no
// build-time dependency on libheif. libheif returns `struct heif_error` by value, which Swift cannot
// call through a dlsym'd pointer portably, so the calls live here.
#ifndef CIC_HEIF_H
#define CIC_HEIF_H

#include <stddef.h>
#include <stdint.h>

/// Resolved libheif entry points (opaque to Swift: only passed back to the functions below).
typedef struct cic_heif_api cic_heif_api;

/// Resolves the entry points from a `dlopen` handle. Returns NULL and names the missing symbol in
/// `missing` when the library is unusable. The result lives for the process (the library stays open).
const cic_heif_api *cic_heif_load(void *dl_handle, char *missing, size_t missing_len);

/// libheif's version string, e.g. "1.15.1".
const char *cic_heif_version(const cic_heif_api *api);

/// A libheif failure: `code` and `subcode` are libheif's heif_error_code / heif_suberror_code values.
typedef struct {
    int code;
    int subcode;
    char message[256];
} cic_heif_status;

/// heif_error_code values the Swift side maps to decoding errors.
enum {
    CIC_HEIF_OK = 0,
    CIC_HEIF_INVALID_INPUT = 2,
    CIC_HEIF_UNSUPPORTED_FILETYPE = 3,
    CIC_HEIF_UNSUPPORTED_FEATURE = 4,
    CIC_HEIF_MEMORY_ALLOCATION = 6,
    CIC_HEIF_SUB_END_OF_DATA = 100,
    CIC_HEIF_SUB_UNSUPPORTED_CODEC = 3000,
};

/// One file being decoded: context, primary image handle and (after decoding) the RGBA image.
typedef struct cic_heif_file cic_heif_file;

/// Parses `data` (NOT copied: it must stay valid until cic_heif_close) and opens the primary image.
/// Reports its size after libheif's transformations (rotation, mirroring, crop). NULL on failure.
cic_heif_file *cic_heif_open(const cic_heif_api *api, const void *data, size_t size,
                             int *width, int *height, cic_heif_status *status);

/// Decodes the primary image to interleaved 8-bit RGBA (straight alpha; 255 without an alpha plane).
/// Returns 0 and the decoded size, or -1 with `status` filled.
int cic_heif_decode(cic_heif_file *file, int *width, int *height, cic_heif_status *status);

/// Copies the decoded RGBA rows into `out` (width*4 bytes per row, `out_size` bytes). Returns 0, or -1
/// when the buffer does not match the decoded size.
int cic_heif_copy_rgba(const cic_heif_file *file, uint8_t *out, size_t out_size);

/// The size of the primary image's ICC profile (colr 'prof' or 'rICC'), 0 when it has none (or nclx).
size_t cic_heif_icc_size(const cic_heif_file *file);
/// Copies that profile into `out` (exactly cic_heif_icc_size bytes). Returns 0, or -1.
int cic_heif_copy_icc(const cic_heif_file *file, uint8_t *out, size_t out_size);

/// The primary image's nclx colour description (ISO/IEC 23091-2 / ITU-T H.273 code points): its colour
/// primaries and transfer characteristics. Returns 0, or -1 when the image has none (no colr box, or an ICC
/// profile instead) or libheif cannot say.
int cic_heif_nclx(const cic_heif_file *file, int *primaries, int *transfer);

/// Releases everything cic_heif_open and cic_heif_decode allocated. NULL is allowed.
void cic_heif_close(cic_heif_file *file);

#endif
