// Colour management through Little CMS 2 (liblcms2.so.2), resolved with dlsym at run time: the package has no
// build-time dependency on lcms2. Only what the decoders use is declared: open an embedded ICC profile or build
// one from PNG gAMA/cHRM values, decide whether it is sRGB already, and transform RGBA8 or CMYK8
// pixels in place to sRGB (perceptual intent, as Pillow's ImageCms and browsers by default).
#ifndef CIC_LCMS_H
#define CIC_LCMS_H

#include <stddef.h>
#include <stdint.h>

/// Resolved lcms2 entry points (opaque to Swift).
typedef struct cic_lcms_api cic_lcms_api;

/// Resolves the entry points from a `dlopen` handle; NULL with the missing symbol named in `missing`.
const cic_lcms_api *cic_lcms_load(void *dl_handle, char *missing, size_t missing_len);
/// lcms2's version number, e.g. 2140.
int cic_lcms_version(const cic_lcms_api *api);

/// What a profile describes, as far as the decoders are concerned.
typedef enum {
    CIC_LCMS_UNSUPPORTED = 0,  ///< not an input or display profile of a colour space handled here
    CIC_LCMS_RGB = 1,
    CIC_LCMS_GRAY = 2,
    CIC_LCMS_CMYK = 3,
} cic_lcms_space;

/// The pixel layouts a transform reads; it always writes RGBA8 in place (alpha bytes are left as they are).
typedef enum {
    CIC_LCMS_IN_RGBA = 0,           ///< R, G, B, A
    CIC_LCMS_IN_GRAY_IN_RGBA = 1,   ///< R, G, B, A with R = G = B: read R as gray
    CIC_LCMS_IN_CMYK = 2,           ///< C, M, Y, K (0 = no ink)
    CIC_LCMS_IN_CMYK_INVERTED = 3,  ///< Adobe's inverted CMYK (255 = no ink), as libjpeg delivers it
} cic_lcms_input;

/// Opens an ICC profile from memory (copied by lcms2). NULL when lcms2 cannot parse it.
void *cic_lcms_open_icc(const cic_lcms_api *api, const void *bytes, size_t length);
/// An RGB profile from chromaticities (white, red, green, blue as CIE xy) and a transfer curve: `gamma` > 0 is a
/// pure power law (decoding exponent), `gamma` <= 0 the sRGB curve. NULL on failure.
void *cic_lcms_create_rgb(const cic_lcms_api *api, const double xy[8], double gamma);
void cic_lcms_close_profile(const cic_lcms_api *api, void *profile);

/// The colour space the profile describes (its device class must be input, display, output or colour space).
cic_lcms_space cic_lcms_profile_space(const cic_lcms_api *api, void *profile);
/// 1 when converting from `profile` to sRGB would change no pixel by more than about half a level: a matrix/TRC
/// RGB profile with sRGB's colorants and curves (or a gray one with sRGB's curve).
int cic_lcms_is_srgb_equivalent(const cic_lcms_api *api, void *profile);
/// The profile's description (its 'desc' tag), or "" when it has none.
void cic_lcms_description(const cic_lcms_api *api, void *profile, char *out, size_t out_len);

/// A transform from `profile` (read as `input`) to sRGB RGBA8, perceptual intent. NULL when lcms2 refuses.
void *cic_lcms_create_transform(const cic_lcms_api *api, void *profile, cic_lcms_input input);
void cic_lcms_delete_transform(const cic_lcms_api *api, void *transform);
/// Transforms `count` pixels of 4 bytes in place. Thread-safe for one transform used from several threads.
void cic_lcms_apply(const cic_lcms_api *api, void *transform, uint8_t *pixels, size_t count);

#endif
