// zlib inflate for small embedded payloads (PNG iCCP profiles), bounded so a hostile stream cannot expand
// without limit.
#ifndef CIC_ZLIB_H
#define CIC_ZLIB_H

#include <stddef.h>
#include <stdint.h>

/// Inflates the zlib stream `src` into `dst` (capacity `dst_capacity`). Returns the inflated length, -1 for a
/// damaged stream, -2 when the output would exceed the capacity.
long cic_inflate(const uint8_t *src, size_t src_length, uint8_t *dst, size_t dst_capacity);

#endif
