// AVIF through libavif (libavif.so.16 or .15), resolved with dlsym at run time: the package has no build-time
// dependency on libavif. libavif's structures are read and written here, through the mirrors of the layouts this
// shim was checked against (cic_avif_abi.h): libavif 0.11.x (soname 15) and 1.0-1.4 (soname 16). Any other version
// is refused at load time, naming it.
#ifndef CIC_AVIF_H
#define CIC_AVIF_H

#include <stddef.h>
#include <stdint.h>

/// Resolved libavif entry points and the structure layout of the loaded version (opaque to Swift).
typedef struct cic_avif_api cic_avif_api;

/// Resolves the entry points from a `dlopen` handle and checks `avifVersion()`. Returns NULL with the reason in
/// `missing` (a missing symbol, or a version whose structures this shim was not written against).
const cic_avif_api *cic_avif_load(void *dl_handle, char *missing, size_t missing_len);

/// Whether the shim reads the structures of libavif `version` (an avifVersion() string such as "0.11.1"): 0.11.x
/// and 1.0.x-1.4.x.
int cic_avif_supports_version(const char *version);

/// libavif's version string, e.g. "0.11.1".
const char *cic_avif_version(const cic_avif_api *api);

/// The AV1 codecs libavif was built with, e.g. "dav1d [dec]:1.0.0, aom [enc/dec]:v3.6.0".
void cic_avif_codec_versions(const cic_avif_api *api, char *out, size_t out_len);

/// The name of the AV1 encoder libavif would use ("aom", "rav1e", "svt"), or NULL when it has none.
const char *cic_avif_encoder_name(const cic_avif_api *api);

/// A libavif failure: `code` is libavif's avifResult (see the CIC_AVIF_RESULT_ values the Swift side maps),
/// `message` avifResultToString and the decoder's diagnostics.
typedef struct {
    int code;
    char message[320];
} cic_avif_status;

/// avifResult values the Swift side distinguishes (libavif's numbers, identical in every accepted version).
enum {
    CIC_AVIF_OK = 0,
    CIC_AVIF_INVALID_FTYP = 2,
    CIC_AVIF_NO_CONTENT = 3,
    CIC_AVIF_BMFF_PARSE_FAILED = 9,
    CIC_AVIF_MISSING_IMAGE_ITEM = 10,
    CIC_AVIF_DECODE_COLOR_FAILED = 11,
    CIC_AVIF_DECODE_ALPHA_FAILED = 12,
    CIC_AVIF_NO_CODEC_AVAILABLE = 15,
    CIC_AVIF_NO_IMAGES_REMAINING = 16,
    CIC_AVIF_TRUNCATED_DATA = 20,
    CIC_AVIF_NOT_IMPLEMENTED = 25,
    CIC_AVIF_OUT_OF_MEMORY = 26,
    /// Not libavif's: a frame whose size differs from the one the container declared (the shim refuses it).
    CIC_AVIF_FRAME_SIZE_CHANGED = 1000,
};

/// What parsing (no AV1 decoding) tells about a file: everything the Swift side checks before any pixel memory.
typedef struct {
    /// The image as displayed: after the clean aperture (clap) crop and the rotation (irot).
    int width, height;
    /// The coded image libavif decodes (before clap/irot/imir).
    int coded_width, coded_height;
    /// Bits per sample (8, 10, 12), avifPixelFormat (1 = 4:4:4, 2 = 4:2:2, 3 = 4:2:0, 4 = 4:0:0).
    int depth, yuv_format;
    /// Bytes of one decoded picture as libavif holds it: the Y, U, V (and alpha) planes of the coded size.
    size_t picture_bytes;
    int has_alpha, alpha_premultiplied;
    /// Frames: 1 for a still image, the track's samples for a sequence.
    int frame_count;
    /// H.273 code points of the colr nclx box (2 = unspecified when the file has none).
    int color_primaries, transfer_characteristics, matrix_coefficients;
    /// Bytes of the colr ICC profile, 0 without one.
    size_t icc_size;
    /// The EXIF orientation (1-8) equivalent to irot then imir, and the crop in coded pixels (the whole image
    /// without a valid clap). Applied to the pixels by cic_avif_copy_rgba.
    int orientation;
    int crop_x, crop_y, crop_width, crop_height;
    /// Timing of the sequence, in seconds (0 for a still image).
    double duration;
} cic_avif_info;

/// One file being decoded: a libavif decoder over the caller's bytes.
typedef struct cic_avif_file cic_avif_file;

/// Parses `data` (NOT copied: it must stay valid until cic_avif_close). `max_frames` becomes libavif's
/// imageCountLimit; validation is lenient (strict flags off, as browsers). NULL on failure, `status` filled.
cic_avif_file *cic_avif_open(const cic_avif_api *api, const void *data, size_t size, uint32_t max_frames,
                             cic_avif_info *info, cic_avif_status *status);

/// libavif's pixel limit for the AV1 decoder (dav1d's frame size limit) and the images it assembles, from now on:
/// set after the caller has checked the parsed size, before the first frame is decoded.
void cic_avif_set_pixel_limit(cic_avif_file *file, uint32_t max_pixels);

/// Seconds frame `index` is shown (the track's timing), or -1 for an index libavif does not know.
double cic_avif_frame_duration(const cic_avif_file *file, int index);

/// Whether frame `index` is an AV1 key frame (random access point): always 1 for a still image.
int cic_avif_is_keyframe(const cic_avif_file *file, int index);

/// Decodes frame `index` (libavif seeks from the nearest key frame when it is not the next one). 0, or -1 with
/// `status` filled.
int cic_avif_decode_frame(cic_avif_file *file, int index, cic_avif_status *status);

/// Converts the decoded frame to interleaved 8-bit RGBA (straight alpha, 255 without an alpha plane; 10- and 12-bit
/// samples rounded to 8 by libavif) with the file's clap crop, rotation and mirroring applied, into `out`
/// (`width`*`height`*4 bytes of the parsed info). 0, or -1 with `status` filled.
int cic_avif_copy_rgba(cic_avif_file *file, uint8_t *out, size_t out_size, cic_avif_status *status);

/// Copies the colr ICC profile into `out` (exactly info.icc_size bytes). 0, or -1.
int cic_avif_copy_icc(const cic_avif_file *file, uint8_t *out, size_t out_size);

/// Releases the decoder. NULL is allowed.
void cic_avif_close(cic_avif_file *file);

/// Encodes RGBA8 rows (straight alpha; `has_alpha` 0 writes no alpha plane) as a still AVIF at `quality` 1...100,
/// 4:2:0 8-bit, sRGB (nclx 1/13/6). Returns the file in `*out` (free it with cic_avif_free), or -1 with `status`.
int cic_avif_encode(const cic_avif_api *api, const uint8_t *rgba, int width, int height, int has_alpha, int quality,
                    int speed, uint8_t **out, size_t *out_size, cic_avif_status *status);

/// Frees what cic_avif_encode returned.
void cic_avif_free(uint8_t *bytes);

#endif
