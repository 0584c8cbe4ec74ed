// The matrix/TRC fast path of colour management (Docs/Decoding.md#colour-management): RGBA8 pixels through
// per-channel tables and one output table, in place. The tables are built in Swift
// (Sources/Decoding/Color/MatrixTRCTransform.swift) from a parsed profile; this file only runs them.
//
// The arithmetic is lcms2's own 8-bit matrix-shaper (cmsopt.c, MatShaperEval16): linear values and the matrix
// in 1.14 fixed point, sums rounded by +0x2000 >> 14, clipped to 0...0x4000 and looked up in a 16385-entry
// table. Here each channel's table holds its value already multiplied by the matrix column (exact products),
// the rounding and a bias that makes every sum non-negative are folded into the first channel's table, and
// the output table covers every index a sum can reach (its ends repeat the clipped values), so a pixel is
// three vector loads, two vector adds, one shift and three byte lookups, with no clipping.
#ifndef CIC_COLOR_H
#define CIC_COLOR_H

#include <stddef.h>
#include <stdint.h>

/// A prepared transform (opaque).
typedef struct cic_matrix_transform cic_matrix_transform;

/// Builds a transform. `tables` holds 3 * 256 * 3 values: for input channel c and byte value v, the three
/// terms (R', G', B') that channel adds, at [(c * 256 + v) * 3 + k]. A pixel's output k is
/// `output[(sum of its three terms) >> 14]`. NULL when some sum could reach 2^32 or index past
/// `output_count` (so a bad table can never read out of bounds), or when out of memory.
cic_matrix_transform *cic_matrix_transform_create(const uint32_t *tables, const uint8_t *output, size_t output_count);
void cic_matrix_transform_destroy(cic_matrix_transform *transform);

/// Converts `count` RGBA8 pixels in place; alpha is kept. Safe to call from several threads at once.
/// Takes the pair path when the transform has one and the call is long enough to repay its tables.
void cic_matrix_transform_apply(const cic_matrix_transform *transform, uint8_t *pixels, size_t count);

/// `apply` for pixels whose alpha is 255 (JPEG rows): the same bytes, and on the pair path a little faster, since
/// the alpha byte is written as 255 instead of carried over. Other alpha values come out as 255.
void cic_matrix_transform_apply_opaque(const cic_matrix_transform *transform, uint8_t *pixels, size_t count);

/// Whether R' and G' depend on R and G only (the profile's blue primary is sRGB's, as in Display P3 and Adobe
/// RGB): then create also built the pair path's tables, which give the same bytes with fewer memory accesses.
int cic_matrix_transform_has_pair_path(const cic_matrix_transform *transform);

/// The term path alone (what `apply` does for short calls and other profiles), so tests can hold the pair
/// path to it.
void cic_matrix_transform_apply_terms(const cic_matrix_transform *transform, uint8_t *pixels, size_t count);

#endif
