// JPEG decoding and encoding over libjpeg-turbo. Every libjpeg call runs under setjmp inside the cic_jpeg_*.c shims;
// failures come back as status codes with a message, never as a longjmp through Swift or exit().
#ifndef CIC_JPEG_H
#define CIC_JPEG_H

#include <stddef.h>
#include <stdint.h>

/// Status of a decoder step.
typedef enum {
    CIC_JPEG_ERROR = -1,      ///< Failed; see cic_jpeg_decoder_error. The decoder stays failed.
    CIC_JPEG_SUSPENDED = 0,   ///< Needs more input (only before cic_jpeg_decoder_set_final).
    CIC_JPEG_OK = 1,          ///< The step finished.
} cic_jpeg_status;

/// What went wrong, for mapping to typed Swift errors.
typedef enum {
    CIC_JPEG_FAIL_NONE = 0,
    CIC_JPEG_FAIL_CORRUPT = 1,     ///< libjpeg rejected the data (message says why).
    CIC_JPEG_FAIL_TRUNCATED = 2,   ///< The data ended before any pixel row could be decoded.
    CIC_JPEG_FAIL_TOO_LARGE = 3,   ///< The frame header declares more pixels than the limit.
    CIC_JPEG_FAIL_ZERO_PIXELS = 4, ///< The frame header declares a zero width or height.
    CIC_JPEG_FAIL_MEMORY = 5,      ///< Out of memory.
    CIC_JPEG_FAIL_UNSUPPORTED_PROCESS = 6, ///< A valid SOF this libjpeg does not decode (cic_jpeg_decoder_unsupported_sof).
} cic_jpeg_failure;

/// The frame header, available after cic_jpeg_decoder_read_header returns CIC_JPEG_OK.
typedef struct {
    int width;
    int height;
    int num_components;
    int is_cmyk;          ///< CMYK or YCCK: converted to RGB by the shim (Adobe inverted CMYK).
    int multi_scan;       ///< Progressive or multi-scan: decoded in buffered-image mode.
    int arithmetic;       ///< Arithmetic-coded: libjpeg cannot suspend, feed the whole file first.
    int progressive;
    int adobe_inverted;   ///< An Adobe APP14 marker: CMYK samples are inverted (255 = no ink).
} cic_jpeg_header;

/// Progress counters, readable at any time.
typedef struct {
    int rows_decoded;       ///< Single-scan: output rows written so far. Multi-scan: rows of the last output pass.
    int completed_scans;    ///< Multi-scan: scans whose data has fully arrived.
    int rendered_scan;      ///< Multi-scan: the scan shown by the last output pass (0: none yet).
    int finished;           ///< Every output row of the final image is written.
    int incomplete;         ///< The data ended early: the final image is partial (gray where data was missing).
    long warnings;          ///< Corrupt-data warnings so far.
} cic_jpeg_progress;

typedef struct cic_jpeg_decoder cic_jpeg_decoder;

/// A decoder that rejects frames of more than `max_pixels` pixels right after the header. NULL when out of memory.
cic_jpeg_decoder *cic_jpeg_decoder_create(uint64_t max_pixels);
void cic_jpeg_decoder_destroy(cic_jpeg_decoder *decoder);

/// Appends the next bytes (copied; bytes libjpeg has consumed are dropped first). Returns 0 when out of memory.
int cic_jpeg_decoder_append(cic_jpeg_decoder *decoder, const uint8_t *bytes, size_t count);
/// One-shot input: `bytes` is used in place (not copied) and must stay valid until the decoder is destroyed.
/// Marks the input final.
void cic_jpeg_decoder_set_borrowed_input(cic_jpeg_decoder *decoder, const uint8_t *bytes, size_t count);
/// No more bytes will come: from now on the end of data is a (fake) EOI, as in a one-shot decode.
void cic_jpeg_decoder_set_final(cic_jpeg_decoder *decoder);

/// Reads the headers up to the first scan. OK fills `header`; SUSPENDED needs more data.
cic_jpeg_status cic_jpeg_decoder_read_header(cic_jpeg_decoder *decoder, cic_jpeg_header *header);
/// Chooses the DCT scale (1, 2, 4 or 8: output is 1/scale_denom of the image) and reports the output size.
cic_jpeg_status cic_jpeg_decoder_configure(cic_jpeg_decoder *decoder, int scale_denom, int *out_width, int *out_height);
/// Starts decompression (allocates libjpeg's buffers). Call once after configure.
cic_jpeg_status cic_jpeg_decoder_start(cic_jpeg_decoder *decoder);
/// Decodes as far as the input allows, writing RGBA8 rows to `pixels` (out_width * out_height * 4 bytes;
/// the pointer may differ between calls, the contents must be kept). Single-scan images write rows as they
/// arrive; multi-scan images absorb scans and write only the final output pass, once all data is in.
/// OK when the image is finished, SUSPENDED when more input is needed.
cic_jpeg_status cic_jpeg_decoder_decode(cic_jpeg_decoder *decoder, uint8_t *pixels);
/// Multi-scan only: writes an output pass of the newest completed scan to `pixels`, if one completed since
/// the last pass. OK when a pass was written, SUSPENDED when there was nothing new to show.
cic_jpeg_status cic_jpeg_decoder_render_preview(cic_jpeg_decoder *decoder, uint8_t *pixels);

/// Hints the kernel to back a large, not yet written output buffer with huge pages (fewer page faults).
void cic_jpeg_advise_output(uint8_t *pixels, size_t length);

cic_jpeg_progress cic_jpeg_decoder_progress(const cic_jpeg_decoder *decoder);
cic_jpeg_failure cic_jpeg_decoder_failure(const cic_jpeg_decoder *decoder);
/// After CIC_JPEG_FAIL_UNSUPPORTED_PROCESS: the SOF marker libjpeg refused (0xC3 lossless, 0xC5-0xC7 hierarchical,
/// 0xCB-0xCF lossless/hierarchical arithmetic); 0 otherwise.
int cic_jpeg_decoder_unsupported_sof(const cic_jpeg_decoder *decoder);
/// libjpeg's message for the failure (or ""). Valid until the decoder is destroyed.
const char *cic_jpeg_decoder_error(const cic_jpeg_decoder *decoder);
/// The embedded ICC profile joined from its APP2 chunks (after read_header), or NULL. Valid until destroyed.
const uint8_t *cic_jpeg_decoder_icc(const cic_jpeg_decoder *decoder, size_t *length);
/// CMYK/YCCK images: convert rows through this lcms2 transform (cic_lcms.h; from the CMYK profile to sRGB,
/// reading samples as libjpeg delivers them) instead of the naive formula. Set before decoding; NULL api clears.
struct cic_lcms_api;
void cic_jpeg_decoder_set_cmyk_transform(cic_jpeg_decoder *decoder, const struct cic_lcms_api *api, void *transform);
/// The first APP1 "Exif\0\0" payload (after read_header), or NULL.
const uint8_t *cic_jpeg_decoder_exif(const cic_jpeg_decoder *decoder, size_t *length);

/// Encodes RGBA8 rows (alpha ignored) as a baseline JPEG, quality 1...100, 4:2:0. Optional EXIF APP1 payload
/// (starting with "Exif\0\0") is written after the JFIF marker. On success returns 1 and a malloc'ed buffer in
/// *out (release with cic_jpeg_free); on failure returns 0 and copies libjpeg's message to `message`.
int cic_jpeg_encode_rgba(const uint8_t *pixels, int width, int height, int quality,
                         const uint8_t *exif, size_t exif_length,
                         uint8_t **out, size_t *out_length, char *message, size_t message_capacity);
/// Chroma subsampling of an encoded JPEG.
typedef enum {
    CIC_JPEG_SUBSAMPLING_420 = 0,   ///< 2x2 luma per chroma sample (libjpeg's default).
    CIC_JPEG_SUBSAMPLING_422 = 1,   ///< 2x1.
    CIC_JPEG_SUBSAMPLING_444 = 2,   ///< No subsampling.
} cic_jpeg_subsampling;

/// What cic_jpeg_encode_rgba_settings writes.
typedef struct {
    int quality;          ///< 1...100.
    int progressive;      ///< Non-zero: libjpeg's standard progressive scan script (Huffman tables optimised).
    int subsampling;      ///< A cic_jpeg_subsampling value.
    int optimize_coding;  ///< Non-zero: optimised Huffman tables for a baseline file (smaller, a little slower).
} cic_jpeg_encode_settings;

/// cic_jpeg_encode_rgba with every setting: progressive, chroma subsampling, optimised Huffman tables.
int cic_jpeg_encode_rgba_settings(const uint8_t *pixels, int width, int height,
                                  const cic_jpeg_encode_settings *settings, const uint8_t *exif, size_t exif_length,
                                  uint8_t **out, size_t *out_length, char *message, size_t message_capacity);
void cic_jpeg_free(void *buffer);

#endif
