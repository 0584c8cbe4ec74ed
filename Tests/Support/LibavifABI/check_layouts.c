// Compile-time check of Sources/CImageCodecs/cic_avif_abi.h against one version of libavif's own avif.h: every
// mirrored field at the same offset, avifRGBImage (which the shim allocates) of the same size, and every constant
// the shim uses equal. Built by check_layouts.sh once per libavif tag; a mismatch is a compile error naming it.
#include <stddef.h>
#include <avif/avif.h>
#include "cic_avif_abi.h"

#if AVIF_VERSION_MAJOR == 0
#if AVIF_VERSION_MINOR != 11
#error "the 0.x mirror is written for libavif 0.11"
#endif
typedef cic_avif_image_v0 mirror_image;
typedef cic_avif_rgb_v0 mirror_rgb;
typedef cic_avif_decoder_v0 mirror_decoder;
typedef cic_avif_encoder_v0 mirror_encoder;
#define IMIR_FIELD mode
#else
typedef cic_avif_image_v1 mirror_image;
typedef cic_avif_rgb_v1 mirror_rgb;
typedef cic_avif_decoder_v1 mirror_decoder;
typedef cic_avif_encoder_v1 mirror_encoder;
#define IMIR_FIELD axis
#endif

#define SAME_OFFSET(real, mirror, field) \
    _Static_assert(offsetof(real, field) == offsetof(mirror, field), #real "." #field " moved")
#define SAME_OFFSET2(real, mirror, realField, mirrorField) \
    _Static_assert(offsetof(real, realField) == offsetof(mirror, mirrorField), #real "." #realField " moved")
#define SAME_VALUE(real, mirror) _Static_assert((long long)(real) == (long long)(mirror), #real " changed")

SAME_OFFSET(avifImage, mirror_image, width);
SAME_OFFSET(avifImage, mirror_image, height);
SAME_OFFSET(avifImage, mirror_image, depth);
SAME_OFFSET(avifImage, mirror_image, yuvFormat);
SAME_OFFSET(avifImage, mirror_image, yuvRange);
SAME_OFFSET(avifImage, mirror_image, yuvPlanes);
SAME_OFFSET(avifImage, mirror_image, yuvRowBytes);
SAME_OFFSET(avifImage, mirror_image, alphaPlane);
SAME_OFFSET(avifImage, mirror_image, alphaRowBytes);
SAME_OFFSET(avifImage, mirror_image, alphaPremultiplied);
SAME_OFFSET(avifImage, mirror_image, icc);
SAME_OFFSET(avifImage, mirror_image, colorPrimaries);
SAME_OFFSET(avifImage, mirror_image, transferCharacteristics);
SAME_OFFSET(avifImage, mirror_image, matrixCoefficients);
SAME_OFFSET(avifImage, mirror_image, transformFlags);
SAME_OFFSET(avifImage, mirror_image, clap);
SAME_OFFSET(avifImage, mirror_image, irot);
SAME_OFFSET(avifImage, mirror_image, imir);
SAME_OFFSET2(avifImage, mirror_image, imir.IMIR_FIELD, imir.IMIR_FIELD);
SAME_OFFSET2(avifImage, mirror_image, clap.vertOffD, clap.vertOffD);
SAME_OFFSET2(avifImage, mirror_image, icc.size, icc.size);
_Static_assert(sizeof(((avifImage *)0)->colorPrimaries) == 2, "avifColorPrimaries size");
_Static_assert(sizeof(((avifImage *)0)->yuvFormat) == sizeof(int), "enum size");

SAME_OFFSET(avifRGBImage, mirror_rgb, depth);
SAME_OFFSET(avifRGBImage, mirror_rgb, format);
SAME_OFFSET(avifRGBImage, mirror_rgb, chromaUpsampling);
SAME_OFFSET(avifRGBImage, mirror_rgb, alphaPremultiplied);
SAME_OFFSET(avifRGBImage, mirror_rgb, isFloat);
SAME_OFFSET(avifRGBImage, mirror_rgb, pixels);
SAME_OFFSET(avifRGBImage, mirror_rgb, rowBytes);
_Static_assert(sizeof(avifRGBImage) == sizeof(mirror_rgb), "avifRGBImage size changed");

SAME_OFFSET(avifDecoder, mirror_decoder, codecChoice);
SAME_OFFSET(avifDecoder, mirror_decoder, maxThreads);
SAME_OFFSET(avifDecoder, mirror_decoder, requestedSource);
SAME_OFFSET(avifDecoder, mirror_decoder, allowProgressive);
SAME_OFFSET(avifDecoder, mirror_decoder, ignoreExif);
SAME_OFFSET(avifDecoder, mirror_decoder, ignoreXMP);
SAME_OFFSET(avifDecoder, mirror_decoder, imageSizeLimit);
SAME_OFFSET(avifDecoder, mirror_decoder, imageDimensionLimit);
SAME_OFFSET(avifDecoder, mirror_decoder, imageCountLimit);
SAME_OFFSET(avifDecoder, mirror_decoder, strictFlags);
SAME_OFFSET(avifDecoder, mirror_decoder, image);
SAME_OFFSET(avifDecoder, mirror_decoder, imageIndex);
SAME_OFFSET(avifDecoder, mirror_decoder, imageCount);
SAME_OFFSET(avifDecoder, mirror_decoder, progressiveState);
SAME_OFFSET(avifDecoder, mirror_decoder, imageTiming);
SAME_OFFSET(avifDecoder, mirror_decoder, timescale);
SAME_OFFSET(avifDecoder, mirror_decoder, alphaPresent);
SAME_OFFSET(avifDecoder, mirror_decoder, diag);
SAME_OFFSET2(avifDecoder, mirror_decoder, imageTiming.duration, imageTiming.duration);
SAME_OFFSET2(avifDecoder, mirror_decoder, imageTiming.durationInTimescales, imageTiming.durationInTimescales);
_Static_assert(sizeof(((avifDecoder *)0)->diag.error) == 256, "diagnostics buffer size");
_Static_assert(sizeof(avifImageTiming) == sizeof(cic_avif_timing), "avifImageTiming size changed");

SAME_OFFSET(avifEncoder, mirror_encoder, codecChoice);
SAME_OFFSET(avifEncoder, mirror_encoder, maxThreads);
SAME_OFFSET(avifEncoder, mirror_encoder, speed);
SAME_OFFSET(avifEncoder, mirror_encoder, minQuantizer);
SAME_OFFSET(avifEncoder, mirror_encoder, maxQuantizer);
SAME_OFFSET(avifEncoder, mirror_encoder, minQuantizerAlpha);
SAME_OFFSET(avifEncoder, mirror_encoder, maxQuantizerAlpha);
SAME_OFFSET(avifEncoder, mirror_encoder, diag);
#if AVIF_VERSION_MAJOR >= 1
SAME_OFFSET(avifEncoder, mirror_encoder, quality);
SAME_OFFSET(avifEncoder, mirror_encoder, qualityAlpha);
SAME_OFFSET(avifDecoder, mirror_decoder, repetitionCount);
#endif

SAME_VALUE(AVIF_RESULT_OK, CIC_AVIF_RESULT_OK);
SAME_VALUE(AVIF_RESULT_UNKNOWN_ERROR, CIC_AVIF_RESULT_UNKNOWN_ERROR);
SAME_VALUE(AVIF_RESULT_INVALID_FTYP, CIC_AVIF_RESULT_INVALID_FTYP);
SAME_VALUE(AVIF_RESULT_NO_CONTENT, CIC_AVIF_RESULT_NO_CONTENT);
SAME_VALUE(AVIF_RESULT_UNSUPPORTED_DEPTH, CIC_AVIF_RESULT_UNSUPPORTED_DEPTH);
SAME_VALUE(AVIF_RESULT_BMFF_PARSE_FAILED, CIC_AVIF_RESULT_BMFF_PARSE_FAILED);
SAME_VALUE(AVIF_RESULT_NO_AV1_ITEMS_FOUND, CIC_AVIF_RESULT_MISSING_IMAGE_ITEM);
SAME_VALUE(AVIF_RESULT_DECODE_COLOR_FAILED, CIC_AVIF_RESULT_DECODE_COLOR_FAILED);
SAME_VALUE(AVIF_RESULT_DECODE_ALPHA_FAILED, CIC_AVIF_RESULT_DECODE_ALPHA_FAILED);
SAME_VALUE(AVIF_RESULT_COLOR_ALPHA_SIZE_MISMATCH, CIC_AVIF_RESULT_COLOR_ALPHA_SIZE_MISMATCH);
SAME_VALUE(AVIF_RESULT_ISPE_SIZE_MISMATCH, CIC_AVIF_RESULT_ISPE_SIZE_MISMATCH);
SAME_VALUE(AVIF_RESULT_NO_CODEC_AVAILABLE, CIC_AVIF_RESULT_NO_CODEC_AVAILABLE);
SAME_VALUE(AVIF_RESULT_NO_IMAGES_REMAINING, CIC_AVIF_RESULT_NO_IMAGES_REMAINING);
SAME_VALUE(AVIF_RESULT_INVALID_IMAGE_GRID, CIC_AVIF_RESULT_INVALID_IMAGE_GRID);
SAME_VALUE(AVIF_RESULT_TRUNCATED_DATA, CIC_AVIF_RESULT_TRUNCATED_DATA);
SAME_VALUE(AVIF_RESULT_NOT_IMPLEMENTED, CIC_AVIF_RESULT_NOT_IMPLEMENTED);
SAME_VALUE(AVIF_RESULT_OUT_OF_MEMORY, CIC_AVIF_RESULT_OUT_OF_MEMORY);
SAME_VALUE(AVIF_PIXEL_FORMAT_YUV444, CIC_AVIF_PIXEL_FORMAT_YUV444);
SAME_VALUE(AVIF_PIXEL_FORMAT_YUV422, CIC_AVIF_PIXEL_FORMAT_YUV422);
SAME_VALUE(AVIF_PIXEL_FORMAT_YUV420, CIC_AVIF_PIXEL_FORMAT_YUV420);
SAME_VALUE(AVIF_PIXEL_FORMAT_YUV400, CIC_AVIF_PIXEL_FORMAT_YUV400);
SAME_VALUE(AVIF_RANGE_FULL, CIC_AVIF_RANGE_FULL);
SAME_VALUE(AVIF_RGB_FORMAT_RGBA, CIC_AVIF_RGB_FORMAT_RGBA);
SAME_VALUE(AVIF_CHROMA_UPSAMPLING_AUTOMATIC, CIC_AVIF_CHROMA_UPSAMPLING_AUTOMATIC);
SAME_VALUE(AVIF_TRANSFORM_CLAP, CIC_AVIF_TRANSFORM_CLAP);
SAME_VALUE(AVIF_TRANSFORM_IROT, CIC_AVIF_TRANSFORM_IROT);
SAME_VALUE(AVIF_TRANSFORM_IMIR, CIC_AVIF_TRANSFORM_IMIR);
SAME_VALUE(AVIF_STRICT_DISABLED, CIC_AVIF_STRICT_DISABLED);
SAME_VALUE(AVIF_CODEC_CHOICE_AUTO, CIC_AVIF_CODEC_CHOICE_AUTO);
SAME_VALUE(AVIF_CODEC_FLAG_CAN_ENCODE, CIC_AVIF_CODEC_FLAG_CAN_ENCODE);
SAME_VALUE(AVIF_DECODER_SOURCE_AUTO, CIC_AVIF_DECODER_SOURCE_AUTO);
SAME_VALUE(AVIF_DEFAULT_IMAGE_SIZE_LIMIT, CIC_AVIF_DEFAULT_IMAGE_SIZE_LIMIT);
SAME_VALUE(AVIF_COLOR_PRIMARIES_BT709, CIC_AVIF_COLOR_PRIMARIES_BT709);
SAME_VALUE(AVIF_TRANSFER_CHARACTERISTICS_SRGB, CIC_AVIF_TRANSFER_CHARACTERISTICS_SRGB);
SAME_VALUE(AVIF_MATRIX_COEFFICIENTS_BT601, CIC_AVIF_MATRIX_COEFFICIENTS_BT601);

int main(void) { return 0; }
