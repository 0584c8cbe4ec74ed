// The matrix/TRC fast path's pixel loop (see include/cic_color.h). No lcms2 here: the tables come from Swift.
#include <stdlib.h>
#include <string.h>
#include "cic_color.h"

// Four 32-bit lanes (R', G', B', unused): SSE2 on x86-64, NEON on arm64, through the compiler's vector types.
// Unsigned, so the adds are defined to wrap (they never do: create checks every sum stays under 2^32).
typedef uint32_t cic_v4u __attribute__((vector_size(16)));

struct cic_matrix_transform {
    cic_v4u table[3][256];  // per channel and byte value: the three terms it adds
    size_t output_count;
    uint8_t output[];       // sum >> 14 to the sRGB byte
};

cic_matrix_transform *cic_matrix_transform_create(const uint32_t *tables, const uint8_t *output, size_t output_count) {
    if (!tables || !output || output_count == 0 || output_count > ((size_t)1 << 18)) return NULL;
    uint64_t largest[3] = {0, 0, 0};
    for (int c = 0; c < 3; c++) {
        for (int k = 0; k < 3; k++) {
            uint64_t top = 0;
            for (int v = 0; v < 256; v++) {
                uint32_t term = tables[(c * 256 + v) * 3 + k];
                if (term > top) top = term;
            }
            largest[k] += top;
        }
    }
    for (int k = 0; k < 3; k++)
        if (largest[k] > UINT32_MAX || (largest[k] >> 14) >= output_count) return NULL;
    cic_matrix_transform *t = NULL;
    if (posix_memalign((void **)&t, 64, sizeof *t + output_count) != 0 || !t) return NULL;
    for (int c = 0; c < 3; c++) {
        for (int v = 0; v < 256; v++) {
            const uint32_t *in = tables + (c * 256 + v) * 3;
            cic_v4u entry = {in[0], in[1], in[2], 0};
            t->table[c][v] = entry;
        }
    }
    t->output_count = output_count;
    memcpy(t->output, output, output_count);
    return t;
}

void cic_matrix_transform_destroy(cic_matrix_transform *transform) {
    free(transform);
}

static inline uint32_t cic_matrix_pixel(const cic_matrix_transform *t, uint32_t rgba) {
    // Byte order in memory is R, G, B, A whatever the host's endianness: read it as such.
    const uint8_t *bytes = (const uint8_t *)&rgba;
    cic_v4u s = t->table[0][bytes[0]] + t->table[1][bytes[1]] + t->table[2][bytes[2]];
    s >>= 14;
    uint8_t out[4] = {t->output[s[0]], t->output[s[1]], t->output[s[2]], bytes[3]};
    uint32_t packed;
    memcpy(&packed, out, 4);
    return packed;
}

void cic_matrix_transform_apply(const cic_matrix_transform *t, uint8_t *pixels, size_t count) {
    if (!t || !pixels) return;
    for (size_t i = 0; i < count; i++) {
        uint32_t rgba;
        memcpy(&rgba, pixels + i * 4, 4);
        rgba = cic_matrix_pixel(t, rgba);
        memcpy(pixels + i * 4, &rgba, 4);
    }
}
