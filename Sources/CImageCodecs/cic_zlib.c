#include <limits.h>
#include <string.h>
#include <zlib.h>
#include "cic_zlib.h"

long cic_inflate(const uint8_t *src, size_t src_length, uint8_t *dst, size_t dst_capacity) {
    if (src_length > UINT_MAX || dst_capacity > UINT_MAX || dst_capacity > LONG_MAX) return -2;
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit(&z) != Z_OK) return -1;
    z.next_in = (Bytef *)src;
    z.avail_in = (uInt)src_length;
    z.next_out = dst;
    z.avail_out = (uInt)dst_capacity;
    int status = inflate(&z, Z_FINISH);
    long produced = (long)z.total_out;
    inflateEnd(&z);
    if (status == Z_STREAM_END) return produced;
    if (status == Z_BUF_ERROR && z.avail_out == 0) return -2;
    return -1;
}
