// libavif's public structures as the shim reads them (internal: not in include/, so not exported to Swift).
//
// libavif changed its structures between soname 15 (0.11.x, Debian 12) and soname 16 (1.0 and later): fields were
// inserted in the middle of avifImage, avifRGBImage, avifDecoder and avifEncoder. The shim reads exactly the
// layouts below, chosen by avifVersion() at load time (cic_avif.c), and refuses any other version.
//
// Each mirror runs from the start of the real structure to the last field the shim touches. The layouts were
// checked against libavif's own headers of v0.11.1 and of v1.0.0, v1.0.4, v1.1.0, v1.1.1, v1.2.0, v1.2.1, v1.3.0,
// v1.4.0, v1.4.2 (offsets of every mirrored field, the size of avifRGBImage, which the shim allocates, and every
// constant below) by Tests/Support/LibavifABI/check_layouts.sh; rerun it before widening the accepted versions.
#ifndef CIC_AVIF_ABI_H
#define CIC_AVIF_ABI_H

#include <stddef.h>
#include <stdint.h>

typedef int cic_avif_bool;  // avifBool

// avifResult values (identical in 0.11 and 1.x up to 28; 1.x adds more after them).
enum {
    CIC_AVIF_RESULT_OK = 0,
    CIC_AVIF_RESULT_UNKNOWN_ERROR = 1,
    CIC_AVIF_RESULT_INVALID_FTYP = 2,
    CIC_AVIF_RESULT_NO_CONTENT = 3,
    CIC_AVIF_RESULT_UNSUPPORTED_DEPTH = 6,
    CIC_AVIF_RESULT_BMFF_PARSE_FAILED = 9,
    CIC_AVIF_RESULT_MISSING_IMAGE_ITEM = 10,  // AVIF_RESULT_NO_AV1_ITEMS_FOUND in 0.11
    CIC_AVIF_RESULT_DECODE_COLOR_FAILED = 11,
    CIC_AVIF_RESULT_DECODE_ALPHA_FAILED = 12,
    CIC_AVIF_RESULT_COLOR_ALPHA_SIZE_MISMATCH = 13,
    CIC_AVIF_RESULT_ISPE_SIZE_MISMATCH = 14,
    CIC_AVIF_RESULT_NO_CODEC_AVAILABLE = 15,
    CIC_AVIF_RESULT_NO_IMAGES_REMAINING = 16,
    CIC_AVIF_RESULT_INVALID_IMAGE_GRID = 18,
    CIC_AVIF_RESULT_TRUNCATED_DATA = 20,
    CIC_AVIF_RESULT_NOT_IMPLEMENTED = 25,
    CIC_AVIF_RESULT_OUT_OF_MEMORY = 26,
};

enum {
    CIC_AVIF_PIXEL_FORMAT_YUV444 = 1,
    CIC_AVIF_PIXEL_FORMAT_YUV422 = 2,
    CIC_AVIF_PIXEL_FORMAT_YUV420 = 3,
    CIC_AVIF_PIXEL_FORMAT_YUV400 = 4,
    CIC_AVIF_RANGE_FULL = 1,
    CIC_AVIF_RGB_FORMAT_RGBA = 1,
    CIC_AVIF_CHROMA_UPSAMPLING_AUTOMATIC = 0,
    CIC_AVIF_TRANSFORM_CLAP = 1 << 1,
    CIC_AVIF_TRANSFORM_IROT = 1 << 2,
    CIC_AVIF_TRANSFORM_IMIR = 1 << 3,
    CIC_AVIF_STRICT_DISABLED = 0,
    CIC_AVIF_CODEC_CHOICE_AUTO = 0,
    CIC_AVIF_CODEC_FLAG_CAN_ENCODE = 1 << 1,
    CIC_AVIF_DECODER_SOURCE_AUTO = 0,
    CIC_AVIF_DEFAULT_IMAGE_SIZE_LIMIT = 16384 * 16384,
    CIC_AVIF_COLOR_PRIMARIES_BT709 = 1,
    CIC_AVIF_TRANSFER_CHARACTERISTICS_SRGB = 13,
    CIC_AVIF_MATRIX_COEFFICIENTS_BT601 = 6,
};

typedef struct {
    uint8_t *data;
    size_t size;
} cic_avif_rwdata;  // avifRWData

typedef struct {
    uint64_t timescale;
    double pts;
    uint64_t ptsInTimescales;
    double duration;
    uint64_t durationInTimescales;
} cic_avif_timing;  // avifImageTiming

typedef struct {
    uint32_t widthN, widthD, heightN, heightD, horizOffN, horizOffD, vertOffN, vertOffD;
} cic_avif_clap;  // avifCleanApertureBox

// avifImage, 0.11 (soname 15).
typedef struct {
    uint32_t width;
    uint32_t height;
    uint32_t depth;
    int yuvFormat;
    int yuvRange;
    int yuvChromaSamplePosition;
    uint8_t *yuvPlanes[3];
    uint32_t yuvRowBytes[3];
    cic_avif_bool imageOwnsYUVPlanes;
    uint8_t *alphaPlane;
    uint32_t alphaRowBytes;
    cic_avif_bool imageOwnsAlphaPlane;
    cic_avif_bool alphaPremultiplied;
    cic_avif_rwdata icc;
    uint16_t colorPrimaries;
    uint16_t transferCharacteristics;
    uint16_t matrixCoefficients;
    uint32_t transformFlags;
    struct { uint32_t hSpacing, vSpacing; } pasp;
    cic_avif_clap clap;
    struct { uint8_t angle; } irot;
    struct { uint8_t mode; } imir;  // 0: top and bottom exchanged, 1: left and right (renamed `axis` in 1.x)
} cic_avif_image_v0;

// avifImage, 1.0-1.4 (soname 16): avifContentLightLevelInformationBox inserted before transformFlags.
typedef struct {
    uint32_t width;
    uint32_t height;
    uint32_t depth;
    int yuvFormat;
    int yuvRange;
    int yuvChromaSamplePosition;
    uint8_t *yuvPlanes[3];
    uint32_t yuvRowBytes[3];
    cic_avif_bool imageOwnsYUVPlanes;
    uint8_t *alphaPlane;
    uint32_t alphaRowBytes;
    cic_avif_bool imageOwnsAlphaPlane;
    cic_avif_bool alphaPremultiplied;
    cic_avif_rwdata icc;
    uint16_t colorPrimaries;
    uint16_t transferCharacteristics;
    uint16_t matrixCoefficients;
    struct { uint16_t maxCLL, maxPALL; } clli;
    uint32_t transformFlags;
    struct { uint32_t hSpacing, vSpacing; } pasp;
    cic_avif_clap clap;
    struct { uint8_t angle; } irot;
    struct { uint8_t axis; } imir;  // same meaning as 0.11's `mode`
} cic_avif_image_v1;

// avifRGBImage, 0.11: allocated by the shim, so mirrored whole.
typedef struct {
    uint32_t width;
    uint32_t height;
    uint32_t depth;
    int format;
    int chromaUpsampling;
    int chromaDownsampling;
    cic_avif_bool avoidLibYUV;
    cic_avif_bool ignoreAlpha;
    cic_avif_bool alphaPremultiplied;
    cic_avif_bool isFloat;
    uint8_t *pixels;
    uint32_t rowBytes;
} cic_avif_rgb_v0;

// avifRGBImage, 1.0-1.4: maxThreads inserted before pixels.
typedef struct {
    uint32_t width;
    uint32_t height;
    uint32_t depth;
    int format;
    int chromaUpsampling;
    int chromaDownsampling;
    cic_avif_bool avoidLibYUV;
    cic_avif_bool ignoreAlpha;
    cic_avif_bool alphaPremultiplied;
    cic_avif_bool isFloat;
    int maxThreads;
    uint8_t *pixels;
    uint32_t rowBytes;
} cic_avif_rgb_v1;

// avifDecoder, 0.11: inputs, then outputs up to the diagnostics.
typedef struct {
    int codecChoice;
    int maxThreads;
    int requestedSource;
    cic_avif_bool allowProgressive;
    cic_avif_bool allowIncremental;
    cic_avif_bool ignoreExif;
    cic_avif_bool ignoreXMP;
    uint32_t imageSizeLimit;
    uint32_t imageDimensionLimit;
    uint32_t imageCountLimit;
    uint32_t strictFlags;
    void *image;  // avifImage *
    int imageIndex;
    int imageCount;
    int progressiveState;
    cic_avif_timing imageTiming;
    uint64_t timescale;
    double duration;
    uint64_t durationInTimescales;
    cic_avif_bool alphaPresent;
    struct { size_t colorOBUSize, alphaOBUSize; } ioStats;
    struct { char error[256]; } diag;
} cic_avif_decoder_v0;

// avifDecoder, 1.0-1.4: repetitionCount inserted before alphaPresent.
typedef struct {
    int codecChoice;
    int maxThreads;
    int requestedSource;
    cic_avif_bool allowProgressive;
    cic_avif_bool allowIncremental;
    cic_avif_bool ignoreExif;
    cic_avif_bool ignoreXMP;
    uint32_t imageSizeLimit;
    uint32_t imageDimensionLimit;
    uint32_t imageCountLimit;
    uint32_t strictFlags;
    void *image;
    int imageIndex;
    int imageCount;
    int progressiveState;
    cic_avif_timing imageTiming;
    uint64_t timescale;
    double duration;
    uint64_t durationInTimescales;
    int repetitionCount;
    cic_avif_bool alphaPresent;
    struct { size_t colorOBUSize, alphaOBUSize; } ioStats;
    struct { char error[256]; } diag;
} cic_avif_decoder_v1;

// avifEncoder, 0.11: settings up to the diagnostics.
typedef struct {
    int codecChoice;
    int maxThreads;
    int speed;
    int keyframeInterval;
    uint64_t timescale;
    int minQuantizer;
    int maxQuantizer;
    int minQuantizerAlpha;
    int maxQuantizerAlpha;
    int tileRowsLog2;
    int tileColsLog2;
    cic_avif_bool autoTiling;
    struct { size_t colorOBUSize, alphaOBUSize; } ioStats;
    struct { char error[256]; } diag;
} cic_avif_encoder_v0;

// avifEncoder, 1.0-1.4: repetitionCount, extraLayerCount, quality and qualityAlpha inserted before the
// quantizers, scalingMode after autoTiling.
typedef struct {
    int codecChoice;
    int maxThreads;
    int speed;
    int keyframeInterval;
    uint64_t timescale;
    int repetitionCount;
    uint32_t extraLayerCount;
    int quality;
    int qualityAlpha;
    int minQuantizer;
    int maxQuantizer;
    int minQuantizerAlpha;
    int maxQuantizerAlpha;
    int tileRowsLog2;
    int tileColsLog2;
    cic_avif_bool autoTiling;
    struct { int32_t horizontalN, horizontalD, verticalN, verticalD; } scalingMode;
    struct { size_t colorOBUSize, alphaOBUSize; } ioStats;
    struct { char error[256]; } diag;
} cic_avif_encoder_v1;

#endif
