// Umbrella header of the C shim over libjpeg-turbo and libpng. Each codec's API lives in its own header
// beside this one (cic_jpeg.h, cic_png.h, ...). setjmp/longjmp stays inside those C files: Swift never
// sees a longjmp cross its frames.
#ifndef CIMAGECODECS_H
#define CIMAGECODECS_H

/// Version strings of the linked system libraries, for diagnostics ("libjpeg-turbo 2.1.5", "libpng 1.6.39").
const char *cic_libjpeg_version(void);
const char *cic_libpng_version(void);

#include "cic_jpeg.h"
#include "cic_png.h"
#include "cic_heif.h"
#include "cic_avif.h"
#include "cic_tiff.h"
#include "cic_lcms.h"
#include "cic_color.h"
#include "cic_lab.h"
#include "cic_zlib.h"

#endif
