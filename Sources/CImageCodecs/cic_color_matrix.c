// The matrix/TRC fast path's pixel loops (see include/cic_color.h). No lcms2 here: the tables come from Swift.
#include <stdlib.h>
#include <string.h>
#include "cic_color.h"

// Four 32-bit lanes (R', G', B', unused): SSE2 on x86-64, NEON on arm64, through the compiler's vector types.
// Unsigned, so the adds are defined to wrap (they never do: create checks every sum stays under 2^32).
typedef uint32_t cic_v4u __attribute__((vector_size(16)));

// The pair path's tables, indexed by R | G << 8 (see cic_matrix_transform_create).
typedef struct {
    uint8_t red_green[65536][2];  // R' and G', final bytes
    uint32_t blue_partial[65536]; // R's and G's terms of B', summed
    uint32_t blue_term[256];      // B's term of B'
    uint32_t blue_out[];          // the output table placed as a pixel: B' << 16 | 0xFF << 24 (output_count entries)
} cic_pair_tables;

struct cic_matrix_transform {
    cic_v4u table[3][256];  // per channel and byte value: the three terms it adds
    cic_pair_tables *pairs; // NULL unless R' and G' do not depend on B
    size_t output_count;
    uint8_t output[];       // sum >> 14 to the sRGB byte
};

// Below this many pixels a call may not repay warming the pair tables (384 KB plus 4 bytes per output index,
// about 540 KB for Display P3: up to 8,500 cache lines when cold) and takes the 12 KB term tables instead.
// libjpeg hands over one to four rows at a time, so images from about 512 pixels wide take the pair path.
#define CIC_PAIR_MIN_PIXELS 1024

// Whether input channel 2 (B) adds the same to outputs 0 and 1 (R', G') at every byte value: then those two
// depend on R and G only. True when the profile's blue primary is sRGB's and the white is D65 (Display P3, Adobe
// RGB, DCI-P3 with the D65 white): that column of the matrix rounds to zero in 1.14 fixed point.
static int cic_blue_feeds_only_blue(const uint32_t *tables) {
    for (int k = 0; k < 2; k++) {
        uint32_t first = tables[(2 * 256) * 3 + k];
        for (int v = 1; v < 256; v++)
            if (tables[(2 * 256 + v) * 3 + k] != first) return 0;
    }
    return 1;
}

// The same sums as the term path, precomputed over every (R, G): the outputs are identical by construction
// (integer adds in another order, none reaching 2^32).
static cic_pair_tables *cic_pair_tables_create(const cic_matrix_transform *t) {
    cic_pair_tables *p = NULL;
    if (posix_memalign((void **)&p, 64, sizeof *p + t->output_count * sizeof(uint32_t)) != 0 || !p) return NULL;
    for (int g = 0; g < 256; g++) {
        cic_v4u partial = t->table[1][g] + t->table[2][0];
        for (int r = 0; r < 256; r++) {
            cic_v4u s = t->table[0][r] + partial;
            p->red_green[r | g << 8][0] = t->output[s[0] >> 14];
            p->red_green[r | g << 8][1] = t->output[s[1] >> 14];
            p->blue_partial[r | g << 8] = t->table[0][r][2] + t->table[1][g][2];
        }
    }
    for (int v = 0; v < 256; v++) p->blue_term[v] = t->table[2][v][2];
    for (size_t i = 0; i < t->output_count; i++) p->blue_out[i] = (uint32_t)t->output[i] << 16 | 0xff000000u;
    return p;
}

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
    // Without its tables (out of memory) the transform still converts, through the term path.
    t->pairs = cic_blue_feeds_only_blue(tables) ? cic_pair_tables_create(t) : NULL;
    return t;
}

void cic_matrix_transform_destroy(cic_matrix_transform *transform) {
    if (transform) free(transform->pairs);
    free(transform);
}

int cic_matrix_transform_has_pair_path(const cic_matrix_transform *transform) {
    return transform && transform->pairs;
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

void cic_matrix_transform_apply_terms(const cic_matrix_transform *t, uint8_t *pixels, size_t count) {
    if (!t || !pixels) return;
    for (size_t i = 0; i < count; i++) {
        uint32_t rgba;
        memcpy(&rgba, pixels + i * 4, 4);
        rgba = cic_matrix_pixel(t, rgba);
        memcpy(pixels + i * 4, &rgba, 4);
    }
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
// One pixel of the pair path, read and written as one little-endian word (R in the low byte): R' and G' are one
// 2-byte lookup, B' one partial sum plus B's term, looked up already in place with an opaque alpha. `opaque`
// (a constant at every call) skips putting the pixel's own alpha back: JPEG rows are always opaque.
__attribute__((always_inline))
static inline uint32_t cic_pair_word(const cic_pair_tables *restrict pt, uint32_t px, int opaque) {
    uint32_t rg = px & 0xffff;
    uint32_t blue = pt->blue_partial[rg] + pt->blue_term[(px >> 16) & 0xff];
    uint16_t red_green;
    memcpy(&red_green, pt->red_green[rg], 2);
    uint32_t out = pt->blue_out[blue >> 14] | red_green;
    return opaque ? out : out & (px | 0x00ffffffu);
}

// Eight pixels per round, loaded and stored as words: the table loads of eight pixels are independent (the
// stores go through locals, so no store can alias a table), and the loop is bound by how many instructions a
// pixel takes. Inlined into each caller with `opaque` a constant: two loops, neither testing it per pixel.
__attribute__((always_inline))
static inline void cic_apply_pairs(const cic_matrix_transform *t, uint8_t *restrict p, size_t count, int opaque) {
    const cic_pair_tables *restrict pt = t->pairs;
    size_t i = 0;
    for (; i + 8 <= count; i += 8, p += 32) {
        uint32_t px[8];
        memcpy(px, p, 32);
        for (int j = 0; j < 8; j++) px[j] = cic_pair_word(pt, px[j], opaque);
        memcpy(p, px, 32);
    }
    for (; i < count; i++, p += 4) {
        uint32_t px;
        memcpy(&px, p, 4);
        px = cic_pair_word(pt, px, opaque);
        memcpy(p, &px, 4);
    }
}
#else
// Big-endian hosts: the same lookups byte by byte.
static inline void cic_apply_pairs(const cic_matrix_transform *t, uint8_t *restrict p, size_t count, int opaque) {
    const cic_pair_tables *restrict pt = t->pairs;
    (void)opaque;
    for (size_t i = 0; i < count; i++, p += 4) {
        unsigned rg = (unsigned)p[0] | (unsigned)p[1] << 8;
        uint32_t blue = pt->blue_partial[rg] + pt->blue_term[p[2]];
        p[0] = pt->red_green[rg][0];
        p[1] = pt->red_green[rg][1];
        p[2] = t->output[blue >> 14];
    }
}
#endif

void cic_matrix_transform_apply_opaque(const cic_matrix_transform *t, uint8_t *pixels, size_t count) {
    if (!t || !pixels) return;
    if (t->pairs && count >= CIC_PAIR_MIN_PIXELS) cic_apply_pairs(t, pixels, count, 1);
    else cic_matrix_transform_apply_terms(t, pixels, count);
}

void cic_matrix_transform_apply(const cic_matrix_transform *t, uint8_t *pixels, size_t count) {
    if (!t || !pixels) return;
    if (t->pairs && count >= CIC_PAIR_MIN_PIXELS) cic_apply_pairs(t, pixels, count, 0);
    else cic_matrix_transform_apply_terms(t, pixels, count);
}
