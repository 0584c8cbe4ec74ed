// PNG decoding and encoding over libpng's progressive ("push") reader and its write API.
// One decoder serves both one-shot and incremental decoding: bytes are fed in any pieces and libpng
// produces identical rows either way. Errors are recorded as messages (libpng's longjmp stays in C).
#ifndef CIC_PNG_H
#define CIC_PNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct cic_png_decoder cic_png_decoder;

/// What `cic_png_decoder_feed` reports.
typedef enum {
    CIC_PNG_NEED_MORE = 0,  ///< Everything fed so far was consumed; more bytes may follow.
    CIC_PNG_DONE = 1,       ///< IEND was reached: the image is complete.
    CIC_PNG_FAILED = -1     ///< libpng reported an error; see `cic_png_decoder_message`. The decoder stays failed.
} cic_png_status;

/// Why a decoder failed.
typedef enum {
    CIC_PNG_ERROR_NONE = 0,
    CIC_PNG_ERROR_CORRUPT = 1,     ///< libpng rejected the data.
    CIC_PNG_ERROR_TOO_LARGE = 2,   ///< The header declares more pixels than allowed.
    CIC_PNG_ERROR_MEMORY = 3,      ///< The caller's canvas is missing or has the wrong size, or libpng ran out of memory.
} cic_png_error_kind;

/// A snapshot of how far decoding got.
typedef struct {
    uint32_t width;          ///< From IHDR, once `header_ready`.
    uint32_t height;
    int header_ready;        ///< The info callback ran: transformations are set and rows may follow.
    int interlaced;          ///< Adam7.
    int passes_completed;    ///< Adam7 passes fully combined into the canvas (0...7; 1 for a finished plain image).
    uint32_t rows_done;      ///< Non-interlaced: rows written to the canvas so far (top-down).
    int any_rows;            ///< At least one row of pixels reached the canvas.
    int finished;            ///< IEND was reached.
} cic_png_progress;

/// A decoder producing RGBA8 (8-bit, straight alpha) into a canvas the caller owns.
/// `max_pixels` bounds width*height (checked in the info callback before any row is produced);
/// `trusted_stream` ignores CRC errors (for streams the caller assembled itself, e.g. APNG frames).
/// Returns NULL when out of memory.
cic_png_decoder *cic_png_decoder_create(uint64_t max_pixels, int trusted_stream);
void cic_png_decoder_destroy(cic_png_decoder *decoder);

/// Feeds the next `count` bytes. `canvas` must point to width*height*4 zeroed bytes once the header
/// could be complete within these bytes (the caller parses IHDR itself), NULL before; it is used only
/// during this call. Rows are combined into it as they are decoded (Adam7 passes "blocky", as libpng's
/// progressive display does).
cic_png_status cic_png_decoder_feed(cic_png_decoder *decoder, const uint8_t *bytes, size_t count,
                                    uint8_t *canvas, size_t canvas_size);

void cic_png_decoder_get_progress(const cic_png_decoder *decoder, cic_png_progress *progress);
cic_png_error_kind cic_png_decoder_error_kind(const cic_png_decoder *decoder);
/// The error message, or "" when none.
const char *cic_png_decoder_message(const cic_png_decoder *decoder);

/// Encodes RGBA8 rows (straight alpha, `width*4` bytes each) as a PNG, as RGB when `keep_alpha` is 0.
/// On success returns 0 and a malloc'ed buffer in `*out` (release with `cic_png_free`); on failure
/// returns -1 and copies libpng's message into `message`.
int cic_png_encode_rgba(const uint8_t *rgba, uint32_t width, uint32_t height, int keep_alpha,
                        uint8_t **out, size_t *out_size, char *message, size_t message_capacity);
/// cic_png_encode_rgba with a zlib compression level 0...9 (-1: libpng's default, 6).
int cic_png_encode_rgba_level(const uint8_t *rgba, uint32_t width, uint32_t height, int keep_alpha, int level,
                              uint8_t **out, size_t *out_size, char *message, size_t message_capacity);
void cic_png_free(void *pointer);

#endif
