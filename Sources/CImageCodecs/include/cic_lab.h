// CIELab -> sRGB through Little CMS 2 (liblcms2.so.2, resolved with dlsym at run time), for TIFF's CIELab and
// ICCLab images. Kept apart from cic_lcms.h (ICC profile conversion): its own few entry points, resolved from the
// same dlopen handle.
#ifndef CIC_LAB_H
#define CIC_LAB_H

#include <stddef.h>
#include <stdint.h>

/// Resolved lcms2 entry points for Lab conversion (opaque to Swift).
typedef struct cic_lab_api cic_lab_api;

/// Resolves the entry points from a `dlopen` handle of liblcms2; NULL with the missing symbol named in `missing`.
const cic_lab_api *cic_lab_load(void *dl_handle, char *missing, size_t missing_len);

/// A transform from Lab (D50, lcms2's 8-bit encoding: L 0...255 for 0...100, a and b offset by 128) plus an
/// alpha byte to sRGB RGBA8, perceptual intent: what Pillow's ImageCms does with createProfile("LAB").
/// NULL when lcms2 refuses. Thread-safe to apply from several threads; delete it once.
void *cic_lab_create_transform(const cic_lab_api *api);
void cic_lab_delete_transform(const cic_lab_api *api, void *transform);
/// Converts `count` 4-byte pixels in place; the alpha bytes are left as they are.
void cic_lab_apply(const cic_lab_api *api, void *transform, uint8_t *pixels, size_t count);

#endif
