#include <stdio.h>
#include <jpeglib.h>
#include <png.h>
#include "CImageCodecs.h"

#define CIC_STR2(x) #x
#define CIC_STR(x) CIC_STR2(x)

const char *cic_libjpeg_version(void) {
#ifdef LIBJPEG_TURBO_VERSION
    return "libjpeg-turbo " CIC_STR(LIBJPEG_TURBO_VERSION);
#else
    return "libjpeg " CIC_STR(JPEG_LIB_VERSION);
#endif
}

const char *cic_libpng_version(void) {
    return "libpng " PNG_LIBPNG_VER_STRING;
}
