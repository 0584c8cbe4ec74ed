// JPEG XL through libjxl (libjxl.so.0.7 to 0.11), resolved with dlsym at run time: no build-time dependency on
// libjxl. libjxl's API is opaque decoder objects and flat structs whose layouts the shim declares itself
// (cic_jxl_internal.h, checked against the headers of 0.7.0, 0.8.0, 0.9.0, 0.10.0 and 0.11.0); the ICC functions
// lost their pixel-format argument in 0.9, so the shim calls whichever form the loaded version has. Any other
// version is refused at load time with a message naming it.
#ifndef CIC_JXL_H
#define CIC_JXL_H

#include <stddef.h>
#include <stdint.h>

/// Resolved libjxl entry points (opaque to Swift: only passed back to the functions below).
typedef struct cic_jxl_api cic_jxl_api;

/// Resolves the entry points from a `dlopen` handle of libjxl and, when not NULL, of the matching
/// libjxl_threads (its parallel runner). Returns NULL with the reason in `missing` when the library is
/// unusable: a symbol missing, or a version the shim was not written against. Lives for the process.
const cic_jxl_api *cic_jxl_load(void *dl_handle, void *threads_handle, char *missing, size_t missing_len);

/// JxlDecoderVersion(): major * 1000000 + minor * 1000 + patch.
uint32_t cic_jxl_version(const cic_jxl_api *api);

/// Whether the loaded libjxl_threads gives decoders a parallel runner.
int cic_jxl_has_threads(const cic_jxl_api *api);

/// What the codestream header says (JxlBasicInfo, reduced to what the package uses).
typedef struct {
    uint32_t width, height;            // as displayed: orientation 5-8 swap the coded width and height
    uint32_t bits_per_sample;
    uint32_t exponent_bits_per_sample; // > 0: floating-point samples
    uint32_t alpha_bits;
    int alpha_premultiplied;
    int have_animation;
    uint32_t tps_numerator, tps_denominator;  // animation ticks per second, as a fraction
    uint32_t num_loops;                       // 0: forever
    uint32_t orientation;                     // 1-8, applied by libjxl
    int uses_original_profile;                // 0: XYB-encoded (lossy), libjxl may output any RGB space
    uint32_t num_color_channels;              // 1 (gray) or 3
} cic_jxl_info;

/// The colour space the decoded pixels are in (JXL_COLOR_PROFILE_TARGET_DATA).
typedef struct {
    int has_encoding;        // 1: `encoding` fields are valid (an enumerated space); 0: only an ICC profile
    int color_space;         // JxlColorSpace: 0 RGB, 1 gray, 2 XYB, 3 unknown
    int transfer;            // JxlTransferFunction: 1 BT.709, 8 linear, 13 sRGB, 16 PQ, 17 DCI, 18 HLG, 65535 gamma
    double gamma;            // the encoding exponent (e.g. 0.45455) when transfer is 65535
    double white_xy[2], red_xy[2], green_xy[2], blue_xy[2];
    int is_srgb;             // an sRGB (or sRGB-gray) space: nothing to convert
    int linear_output;       // the samples were linear: decoded as float and written with the sRGB curve
    size_t icc_size;         // the data profile as ICC bytes (libjxl writes one for enumerated spaces too)
} cic_jxl_color;

/// One displayed frame's header.
typedef struct {
    uint32_t duration;       // ticks (see cic_jxl_info.tps_*)
    int is_last;
    uint32_t layer_width;    // the frame's own size: the canvas when coalescing, its layer otherwise
    uint32_t layer_height;
} cic_jxl_frame;

/// What cic_jxl_process stopped at.
enum {
    CIC_JXL_EVENT_ERROR = -1,          // invalid or unsupported data; cic_jxl_message says what
    CIC_JXL_EVENT_NEED_MORE_INPUT = 0, // every byte given so far is used
    CIC_JXL_EVENT_BASIC_INFO = 1,      // cic_jxl_basic_info is available
    CIC_JXL_EVENT_COLOR = 2,           // cic_jxl_color_info is available
    CIC_JXL_EVENT_FRAME = 3,           // cic_jxl_frame_header is available
    CIC_JXL_EVENT_NEED_OUTPUT = 4,     // the frame's pixels need a buffer: cic_jxl_set_output
    CIC_JXL_EVENT_FULL_IMAGE = 6,      // the frame is in the output buffer
    CIC_JXL_EVENT_SUCCESS = 7,         // the codestream is complete
};

/// Decoder modes: `index` reads headers only (frame layers as coded, no pixels); `pixels` decodes frames,
/// composited on the canvas.
enum { CIC_JXL_MODE_INDEX = 0, CIC_JXL_MODE_PIXELS = 1 };

/// One decode: a JxlDecoder with the shim's settings and its output state.
typedef struct cic_jxl_decoder cic_jxl_decoder;

/// A decoder in `mode`; `threads` > 1 uses the parallel runner with that many threads (when libjxl_threads is
/// loaded). NULL when out of memory.
cic_jxl_decoder *cic_jxl_decoder_create(const cic_jxl_api *api, int mode, int threads);
void cic_jxl_decoder_destroy(cic_jxl_decoder *dec);

/// Hands libjxl the next input: `data` must stay valid until cic_jxl_release_input. `is_last` says no more
/// input follows. Returns 0, or -1 (input already set, or closed).
int cic_jxl_set_input(cic_jxl_decoder *dec, const uint8_t *data, size_t size, int is_last);
/// Takes the input back; returns how many of its last bytes libjxl did not use (to be given again).
size_t cic_jxl_release_input(cic_jxl_decoder *dec);

/// Runs libjxl until the next event the shim reports. Colour preferences and the pixel format are set here
/// (an XYB image is asked for sRGB; linear samples come as float and are written with the sRGB curve).
int cic_jxl_process(cic_jxl_decoder *dec);

/// After CIC_JXL_EVENT_BASIC_INFO (and from then on).
void cic_jxl_basic_info(const cic_jxl_decoder *dec, cic_jxl_info *info);
/// After CIC_JXL_EVENT_COLOR (and from then on).
void cic_jxl_color_info(const cic_jxl_decoder *dec, cic_jxl_color *color);
/// Copies the data profile (exactly `color.icc_size` bytes). Returns 0, or -1.
int cic_jxl_copy_icc(const cic_jxl_decoder *dec, uint8_t *out, size_t size);
/// After CIC_JXL_EVENT_FRAME.
void cic_jxl_frame_header(const cic_jxl_decoder *dec, cic_jxl_frame *frame);

/// Sets the RGBA8 buffer (width * height * 4 bytes, top-down rows) libjxl writes the current frame into; it must
/// stay valid until CIC_JXL_EVENT_FULL_IMAGE or the decoder is destroyed. Returns 0, or -1 (wrong size).
int cic_jxl_set_output(cic_jxl_decoder *dec, uint8_t *rgba, size_t size);
/// Renders what has been decoded of the current frame into the output buffer (a progressive preview: the
/// groups and passes that arrived, the rest from the 1:8 DC image where it arrived).
/// Returns 0 when the buffer was written, -1 when nothing can be shown yet.
int cic_jxl_flush(cic_jxl_decoder *dec);

/// Skips the next `count` displayed frames (libjxl still decodes the ones later frames refer to).
void cic_jxl_skip_frames(cic_jxl_decoder *dec, size_t count);

/// The last error, e.g. "libjxl: frame is too large" (empty when none).
const char *cic_jxl_message(const cic_jxl_decoder *dec);

#endif
