// Internal to the JPEG XL shim (not in include/, so not exported to Swift): libjxl's declarations as cic_jxl.c
// uses them and the table of entry points it resolves. They mirror libjxl's public headers (decode.h,
// codestream_header.h, types.h, color_encoding.h, parallel_runner.h, resizable_parallel_runner.h) of 0.7.0, 0.8.0,
// 0.9.0, 0.10.0 and 0.11.0, compared line by line: the structs used here (JxlBasicInfo, JxlPixelFormat,
// JxlColorEncoding, JxlFrameHeader with JxlLayerInfo and JxlBlendInfo) and the enum values are the same in all
// five; the one change that matters is the ICC functions' `const JxlPixelFormat* unused_format` argument, removed
// in 0.9.
#ifndef CIC_JXL_INTERNAL_H
#define CIC_JXL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "cic_jxl.h"

typedef struct JxlDecoderStruct JxlDecoder;
typedef int JXL_BOOL;
typedef int JxlDecoderStatus;
typedef int JxlParallelRetCode;
typedef JxlParallelRetCode (*JxlParallelRunInit)(void *jpegxl_opaque, size_t num_threads);
typedef void (*JxlParallelRunFunction)(void *jpegxl_opaque, uint32_t value, size_t thread_id);
typedef JxlParallelRetCode (*JxlParallelRunner)(void *runner_opaque, void *jpegxl_opaque, JxlParallelRunInit init,
                                                JxlParallelRunFunction func, uint32_t start_range, uint32_t end_range);

enum {
    JXL_DEC_SUCCESS = 0, JXL_DEC_ERROR = 1, JXL_DEC_NEED_MORE_INPUT = 2, JXL_DEC_NEED_PREVIEW_OUT_BUFFER = 3,
    JXL_DEC_NEED_IMAGE_OUT_BUFFER = 5, JXL_DEC_JPEG_NEED_MORE_OUTPUT = 6, JXL_DEC_BOX_NEED_MORE_OUTPUT = 7,
    JXL_DEC_BASIC_INFO = 0x40, JXL_DEC_COLOR_ENCODING = 0x100, JXL_DEC_PREVIEW_IMAGE = 0x200, JXL_DEC_FRAME = 0x400,
    JXL_DEC_FULL_IMAGE = 0x1000, JXL_DEC_JPEG_RECONSTRUCTION = 0x2000, JXL_DEC_BOX = 0x4000,
    JXL_DEC_FRAME_PROGRESSION = 0x8000,
};
enum { JXL_TYPE_FLOAT = 0, JXL_TYPE_UINT8 = 2 };
enum { JXL_NATIVE_ENDIAN = 0 };
enum { JXL_COLOR_PROFILE_TARGET_DATA = 1 };
enum { JXL_COLOR_SPACE_RGB = 0, JXL_COLOR_SPACE_GRAY = 1 };
enum { JXL_WHITE_POINT_D65 = 1 };
enum { JXL_PRIMARIES_SRGB = 1 };
enum { JXL_TRANSFER_FUNCTION_LINEAR = 8, JXL_TRANSFER_FUNCTION_SRGB = 13 };
enum { JXL_RENDERING_INTENT_PERCEPTUAL = 0 };

typedef struct {
    uint32_t num_channels;
    int data_type;   // JxlDataType
    int endianness;  // JxlEndianness
    size_t align;
} JxlPixelFormat;

typedef struct {
    int color_space;  // JxlColorSpace
    int white_point;  // JxlWhitePoint
    double white_point_xy[2];
    int primaries;    // JxlPrimaries
    double primaries_red_xy[2];
    double primaries_green_xy[2];
    double primaries_blue_xy[2];
    int transfer_function;  // JxlTransferFunction
    double gamma;
    int rendering_intent;   // JxlRenderingIntent
} JxlColorEncoding;

typedef struct {
    uint32_t tps_numerator;
    uint32_t tps_denominator;
    uint32_t num_loops;
    JXL_BOOL have_timecodes;
} JxlAnimationHeader;

typedef struct {
    JXL_BOOL have_container;
    uint32_t xsize;
    uint32_t ysize;
    uint32_t bits_per_sample;
    uint32_t exponent_bits_per_sample;
    float intensity_target;
    float min_nits;
    JXL_BOOL relative_to_max_display;
    float linear_below;
    JXL_BOOL uses_original_profile;
    JXL_BOOL have_preview;
    JXL_BOOL have_animation;
    int orientation;  // JxlOrientation
    uint32_t num_color_channels;
    uint32_t num_extra_channels;
    uint32_t alpha_bits;
    uint32_t alpha_exponent_bits;
    JXL_BOOL alpha_premultiplied;
    struct { uint32_t xsize, ysize; } preview;  // JxlPreviewHeader
    JxlAnimationHeader animation;
    uint32_t intrinsic_xsize;
    uint32_t intrinsic_ysize;
    uint8_t padding[100];
} JxlBasicInfo;

typedef struct {
    int blendmode;  // JxlBlendMode
    uint32_t source;
    uint32_t alpha;
    JXL_BOOL clamp;
} JxlBlendInfo;

typedef struct {
    JXL_BOOL have_crop;
    int32_t crop_x0;
    int32_t crop_y0;
    uint32_t xsize;
    uint32_t ysize;
    JxlBlendInfo blend_info;
    uint32_t save_as_reference;
} JxlLayerInfo;

typedef struct {
    uint32_t duration;
    uint32_t timecode;
    uint32_t name_length;
    JXL_BOOL is_last;
    JxlLayerInfo layer_info;
} JxlFrameHeader;

struct cic_jxl_api {
    uint32_t version;
    uint32_t (*decoder_version)(void);
    JxlDecoder *(*create)(const void *memory_manager);
    void (*destroy)(JxlDecoder *);
    JxlDecoderStatus (*subscribe_events)(JxlDecoder *, int events_wanted);
    JxlDecoderStatus (*set_coalescing)(JxlDecoder *, JXL_BOOL);
    JxlDecoderStatus (*set_unpremultiply_alpha)(JxlDecoder *, JXL_BOOL);
    JxlDecoderStatus (*set_parallel_runner)(JxlDecoder *, JxlParallelRunner, void *);
    JxlDecoderStatus (*set_input)(JxlDecoder *, const uint8_t *, size_t);
    size_t (*release_input)(JxlDecoder *);
    JxlDecoderStatus (*process_input)(JxlDecoder *);
    JxlDecoderStatus (*get_basic_info)(const JxlDecoder *, JxlBasicInfo *);
    JxlDecoderStatus (*get_frame_header)(const JxlDecoder *, JxlFrameHeader *);
    JxlDecoderStatus (*set_preferred_color_profile)(JxlDecoder *, const JxlColorEncoding *);
    // Before 0.9 these take a `const JxlPixelFormat* unused_format` after the decoder (pass NULL).
    JxlDecoderStatus (*get_encoded_profile_v7)(const JxlDecoder *, const JxlPixelFormat *, int, JxlColorEncoding *);
    JxlDecoderStatus (*get_icc_size_v7)(const JxlDecoder *, const JxlPixelFormat *, int, size_t *);
    JxlDecoderStatus (*get_icc_v7)(const JxlDecoder *, const JxlPixelFormat *, int, uint8_t *, size_t);
    JxlDecoderStatus (*get_encoded_profile_v9)(const JxlDecoder *, int, JxlColorEncoding *);
    JxlDecoderStatus (*get_icc_size_v9)(const JxlDecoder *, int, size_t *);
    JxlDecoderStatus (*get_icc_v9)(const JxlDecoder *, int, uint8_t *, size_t);
    JxlDecoderStatus (*image_out_buffer_size)(const JxlDecoder *, const JxlPixelFormat *, size_t *);
    JxlDecoderStatus (*set_image_out_buffer)(JxlDecoder *, const JxlPixelFormat *, void *, size_t);
    JxlDecoderStatus (*flush_image)(JxlDecoder *);
    void (*skip_frames)(JxlDecoder *, size_t);
    // libjxl_threads (optional).
    JxlParallelRunner resizable_runner;
    void *(*runner_create)(const void *memory_manager);
    void (*runner_set_threads)(void *runner, size_t threads);
    void (*runner_destroy)(void *runner);
};

#endif
