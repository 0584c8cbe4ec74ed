// TIFF samples read through libtiff's strip/tile interface and converted to 8-bit RGBA by the shim itself, for
// the layouts libtiff's RGBA interface refuses or converts differently from Pillow and browsers
// (Docs/Decoding.md, TIFF): integer samples of every depth but 1/2/4/8 bits (3 to 32 bits, and 64), signed
// integers, 16/32/64-bit floats, CMYK at any depth, and CIELab/ICCLab (handed to lcms2 by the caller).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cic_tiff_internal.h"

enum { MAX_SAMPLES = 16 };

typedef struct {
    uint16_t bits, format, photometric, samples, planes;
    uint16_t colors;   // colour samples: 1 gray, 3 RGB or Lab, 4 CMYK
    uint16_t kept;     // samples kept per pixel: the colours, plus alpha when there is one
    int alpha;         // 0 none (an unspecified extra sample is opaque), 1 straight, 2 premultiplied
    uint16_t alpha_sample;  // which sample of a pixel is the alpha: the first extra sample marked as alpha
    int lab;           // CIELab (signed a/b) = 1, ICCLab (a/b offset by 128) = 2
    int raw_cmyk;      // CMYK kept as inks (C, M, Y, K bytes; alpha apart) for the caller's ICC transform
    int tiled;
    uint32_t block_width, block_rows;  // one strip (image width x rows per strip) or one tile
} sample_layout;

// Which samples the direct reader takes. `want_lab`: the caller converts Lab itself (lcms2 is there).
static int layout_of(cic_tiff_file *f, uint32_t width, uint32_t height, int want_lab, sample_layout *l) {
    const cic_tiff_api *api = f->api;
    uint16_t planar = PLANARCONFIG_CONTIG, count = 0, inkset = INKSET_CMYK, compression = 1;
    uint16_t *extra = NULL;
    memset(l, 0, sizeof *l);
    l->format = SAMPLEFORMAT_UINT;
    if (!api->get_field_defaulted(f->tif, TAG_BITSPERSAMPLE, &l->bits)) return 0;
    if (!api->get_field(f->tif, TAG_PHOTOMETRIC, &l->photometric)) return 0;
    api->get_field_defaulted(f->tif, TAG_SAMPLESPERPIXEL, &l->samples);
    api->get_field_defaulted(f->tif, TAG_PLANARCONFIG, &planar);
    api->get_field_defaulted(f->tif, TAG_SAMPLEFORMAT, &l->format);
    api->get_field_defaulted(f->tif, TAG_COMPRESSION, &compression);
    // Old-style JPEG is YCbCr in disguise: libtiff's RGBA interface. New-style JPEG hands over decoded samples
    // (YCbCr photometric, which needs libtiff's colour conversion, is not read here at all).
    if (compression == COMPRESSION_OJPEG) return 0;
    int packed = l->bits == 1 || l->bits == 2 || l->bits == 4 || l->bits == 8;
    switch (l->format) {
    case SAMPLEFORMAT_UINT: if (l->bits < 1 || (l->bits > 32 && l->bits != 64)) return 0; break;
    case SAMPLEFORMAT_INT: if (l->bits < 2 || (l->bits > 32 && l->bits != 64)) return 0; packed = 0; break;
    case SAMPLEFORMAT_IEEEFP: if (l->bits != 16 && l->bits != 32 && l->bits != 64) return 0; packed = 0; break;
    default: return 0;
    }
    switch (l->photometric) {
    case PHOTOMETRIC_MINISBLACK:
    case PHOTOMETRIC_MINISWHITE:
        l->colors = 1;
        break;
    case PHOTOMETRIC_RGB:
        l->colors = 3;
        break;
    case PHOTOMETRIC_SEPARATED:
        api->get_field_defaulted(f->tif, TAG_INKSET, &inkset);
        if (inkset != INKSET_CMYK) return 0;
        l->colors = 4;
        packed = 0;  // every CMYK depth: Pillow's conversion, not libtiff's
        break;
    case PHOTOMETRIC_CIELAB:
    case PHOTOMETRIC_ICCLAB:
        if (!want_lab || (l->bits != 8 && l->bits != 16) || l->format != SAMPLEFORMAT_UINT) return 0;
        l->colors = 3;
        l->lab = l->photometric == PHOTOMETRIC_CIELAB ? 1 : 2;
        packed = 0;
        break;
    default:
        return 0;  // palette, YCbCr, LogLuv...: libtiff's RGBA interface
    }
    if (l->samples < l->colors || l->samples > MAX_SAMPLES) return 0;
    // The alpha is the first extra sample marked as alpha, wherever it is among them (the TIFF rule); libtiff's RGBA
    // interface looks at the first extra sample only, so a later alpha is read here whatever the depth.
    int alpha_index = -1;
    if (l->samples > l->colors && api->get_field(f->tif, TAG_EXTRASAMPLES, &count, &extra) && count >= 1 && extra) {
        for (uint16_t i = 0; i < count && l->colors + i < l->samples; i++) {
            if (extra[i] == EXTRASAMPLE_ASSOCALPHA || extra[i] == EXTRASAMPLE_UNASSALPHA) {
                alpha_index = i;
                break;
            }
        }
    }
    if (packed && alpha_index <= 0) return 0;  // 1/2/4/8-bit unsigned gray and RGB: libtiff's RGBA interface matches
    l->planes = planar == PLANARCONFIG_SEPARATE ? l->samples : 1;
    l->kept = l->colors;
    if (alpha_index >= 0) {
        // An unassociated first extra sample was relabelled associated for libtiff (cic_tiff.c): straight_alpha says so.
        int straight = alpha_index == 0 ? f->straight_alpha : extra[alpha_index] == EXTRASAMPLE_UNASSALPHA;
        l->alpha = straight ? 1 : 2;
        l->alpha_sample = (uint16_t)(l->colors + alpha_index);
        l->kept = l->colors + 1;
    }
    l->tiled = api->is_tiled(f->tif);
    uint32_t rows = height;
    if (l->tiled) {
        uint32_t tile_length = 0;
        if (!api->get_field(f->tif, TAG_TILEWIDTH, &l->block_width) || !api->get_field(f->tif, TAG_TILELENGTH, &tile_length))
            return 0;
        if (l->block_width == 0 || tile_length == 0 || l->block_width > 65536 || tile_length > 65536) return 0;
        rows = tile_length;
    } else {
        l->block_width = width;
        api->get_field_defaulted(f->tif, TAG_ROWSPERSTRIP, &rows);
        if (rows == 0 || rows > height) rows = height;
    }
    l->block_rows = rows;
    return 1;
}

// MARK: - One sample to 8 bits

static float half_to_float(uint16_t h) {
    int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    float magnitude = exponent == 0 ? ldexpf((float)mantissa, -24)
                    : exponent == 31 ? (mantissa ? NAN : INFINITY)
                    : ldexpf((float)(mantissa | 0x400), exponent - 25);
    return (h & 0x8000) ? -magnitude : magnitude;
}

// The raw bits of sample `index` of a row: libtiff hands 16/24/32/64-bit samples over in host byte order and
// every other depth as an MSB-first bit stream.
static uint64_t raw_sample(const uint8_t *row, size_t index, uint16_t bits) {
    switch (bits) {
    case 8: return row[index];
    case 16: { uint16_t v; memcpy(&v, row + index * 2, 2); return v; }
    case 32: { uint32_t v; memcpy(&v, row + index * 4, 4); return v; }
    case 64: { uint64_t v; memcpy(&v, row + index * 8, 8); return v; }
    case 24: {
        const uint8_t *p = row + index * 3;
        return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16;
    }
    default: {
        uint64_t bit = (uint64_t)index * bits, v = 0;
        for (uint16_t i = 0; i < bits; i++, bit++) v = (v << 1) | ((row[bit >> 3] >> (7 - (bit & 7))) & 1);
        return v;
    }
    }
}

// The display rule (Docs/Decoding.md): integer depths below 8 bits scaled to 0...255, 8 bits and more keep their
// top 8 bits (as 16-bit PNG and Pillow), signed ones read as unsigned; floats clamp to 0...1 and round (Pillow's
// F -> L rounding).
static uint8_t to8(uint64_t raw, uint16_t bits, uint16_t format) {
    if (format == SAMPLEFORMAT_IEEEFP) {
        double v;
        if (bits == 16) v = half_to_float((uint16_t)raw);
        else if (bits == 32) { float x; uint32_t r = (uint32_t)raw; memcpy(&x, &r, 4); v = x; }
        else memcpy(&v, &raw, 8);
        if (!(v > 0)) return 0;  // NaN too
        return v >= 1 ? 255 : (uint8_t)(v * 255 + 0.5);
    }
    // Signed samples: their bits read as unsigned, as libtiff's RGBA interface and Pillow show them (0 black, the
    // positive range up to the middle grey, negative values above it).
    if (bits < 8) {
        uint32_t top = (1u << bits) - 1;
        return (uint8_t)(((uint32_t)raw * 255 + top / 2) / top);
    }
    return (uint8_t)(raw >> (bits - 8));
}

// Lab keeps the top byte of each sample as stored, in lcms2's 8-bit Lab encoding (a and b offset by 128).
static uint8_t lab8(uint64_t raw, uint16_t bits, uint16_t sample, int lab) {
    uint8_t v = (uint8_t)(raw >> (bits - 8));
    return sample > 0 && sample < 3 && lab == 1 ? v ^ 0x80 : v;
}

// MARK: - Reading

// The sample of a pixel that goes to kept slot `slot`: the colours in order, then the alpha (wherever it is).
static uint16_t source_sample(const sample_layout *l, uint16_t slot) {
    return slot < l->colors ? slot : l->alpha_sample;
}

// Copies one decoded segment (a strip or tile of one plane) into the interleaved 8-bit samples. 8-, 16- and
// 32-bit float samples (the common layouts) take loops of their own; every other layout reads sample by sample.
static void place(const sample_layout *l, const uint8_t *seg, size_t seg_bytes, uint8_t *block, uint32_t width,
                  uint32_t rows, uint32_t x0, uint16_t plane) {
    uint16_t per_pixel = l->planes == 1 ? l->samples : 1;
    // Contiguous: every kept slot from its sample of the pixel. Planar: this plane's sample goes to one slot, or
    // to none (an extra sample that is not the alpha).
    uint16_t first_slot = 0, count = l->kept;
    if (l->planes > 1) {
        if (plane < l->colors) first_slot = plane;
        else if (l->alpha && plane == l->alpha_sample) first_slot = l->colors;
        else return;
        count = 1;
    }
    uint16_t from[MAX_SAMPLES];  // for each slot written, its sample's offset within the pixel (or plane)
    for (uint16_t s = 0; s < count; s++) from[s] = l->planes > 1 ? 0 : source_sample(l, s);
    size_t row_bytes = ((size_t)l->block_width * per_pixel * l->bits + 7) / 8;
    uint32_t columns = width - x0 < l->block_width ? width - x0 : l->block_width;
    int plain = !l->lab && (l->format == SAMPLEFORMAT_UINT || (l->format == SAMPLEFORMAT_IEEEFP && l->bits == 32));
    for (uint32_t y = 0; y < rows; y++) {
        if ((y + 1) * row_bytes > seg_bytes) return;  // a short last segment: the rest stays blank
        const uint8_t *row = seg + y * row_bytes;
        uint8_t *to = block + ((size_t)y * width + x0) * l->kept + first_slot;
        if (plain && l->bits == 8) {
            for (uint32_t x = 0; x < columns; x++, row += per_pixel, to += l->kept)
                for (uint16_t s = 0; s < count; s++) to[s] = row[from[s]];
        } else if (plain && l->bits == 16) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            const uint8_t *high = row;      // host order: the high byte first
#else
            const uint8_t *high = row + 1;  // host order: the high byte second
#endif
            for (uint32_t x = 0; x < columns; x++, high += 2 * per_pixel, to += l->kept)
                for (uint16_t s = 0; s < count; s++) to[s] = high[2 * from[s]];
        } else if (plain && l->bits == 32 && l->format == SAMPLEFORMAT_IEEEFP) {
            for (uint32_t x = 0; x < columns; x++, row += 4 * per_pixel, to += l->kept) {
                for (uint16_t s = 0; s < count; s++) {
                    float v;
                    memcpy(&v, row + 4 * from[s], 4);
                    to[s] = !(v > 0) ? 0 : v >= 1 ? 255 : (uint8_t)((double)v * 255 + 0.5);  // as to8
                }
            }
        } else {
            for (uint32_t x = 0; x < columns; x++, to += l->kept) {
                for (uint16_t s = 0; s < count; s++) {
                    uint64_t raw = raw_sample(row, (size_t)x * per_pixel + from[s], l->bits);
                    uint16_t sample = l->planes > 1 ? plane : from[s];
                    to[s] = l->lab && sample < 3 ? lab8(raw, l->bits, sample, l->lab) : to8(raw, l->bits, l->format);
                }
            }
        }
    }
}

static uint8_t muldiv255(unsigned a, unsigned b) {
    unsigned t = a * b + 128;
    return (uint8_t)(((t >> 8) + t) >> 8);
}

// Interleaved 8-bit samples to RGBA (Lab stays Lab, for the caller's lcms2 transform).
static void to_rgba(const sample_layout *l, const uint8_t *in, uint8_t *out, size_t pixels) {
    const uint16_t kept = l->kept;
    const uint8_t *end = in + pixels * kept;
    switch (l->photometric) {
    case PHOTOMETRIC_MINISWHITE:
        for (; in < end; in += kept, out += 4) out[0] = out[1] = out[2] = (uint8_t)(255 - in[0]);
        break;
    case PHOTOMETRIC_MINISBLACK:
        for (; in < end; in += kept, out += 4) out[0] = out[1] = out[2] = in[0];
        break;
    case PHOTOMETRIC_SEPARATED:
        if (l->raw_cmyk) {
            for (; in < end; in += kept, out += 4) { out[0] = in[0]; out[1] = in[1]; out[2] = in[2]; out[3] = in[3]; }
            return;  // alpha goes to the caller's own buffer (read_layout)
        }
        // Pillow's CMYK -> RGB (rounded), the rule the package uses without a CMYK profile.
        for (; in < end; in += kept, out += 4) {
            unsigned nk = 255u - in[3];
            for (int c = 0; c < 3; c++) out[c] = (uint8_t)(nk - muldiv255(in[c], nk));
        }
        break;
    default:
        for (; in < end; in += kept, out += 4) { out[0] = in[0]; out[1] = in[1]; out[2] = in[2]; }
        break;
    }
    out -= pixels * 4;
    in = end - pixels * kept;
    for (size_t i = 0; i < pixels; i++, in += kept, out += 4) {
        out[3] = l->alpha ? in[l->colors] : 255;
        if (l->alpha == 2 && !l->lab) cic_tiff_unpremultiply(out);
    }
}

// `alpha`: for raw CMYK, width * height alpha bytes (255 without an alpha sample), else NULL.
static int read_layout(cic_tiff_file *f, const sample_layout *l, uint8_t *out, uint8_t *alpha, uint32_t width,
                       uint32_t height, char *message, size_t len) {
    const cic_tiff_api *api = f->api;
    tmsize_t seg_bytes = l->tiled ? api->tile_size(f->tif) : api->strip_size(f->tif);
    size_t block_bytes = (size_t)l->block_rows * width * l->kept;
    if (seg_bytes <= 0 || (uint64_t)seg_bytes > ((uint64_t)1 << 31) || block_bytes > ((size_t)1 << 31)) {
        snprintf(message, len, "%s", f->errors ? f->first_error : "strip or tile too large");
        return -1;
    }
    uint8_t *seg = malloc((size_t)seg_bytes);
    uint8_t *block = malloc(block_bytes ? block_bytes : 1);
    if (!seg || !block) {
        free(seg);
        free(block);
        snprintf(message, len, "out of memory");
        return -1;
    }
    int errors_before = f->errors, read_any = 0;
    for (uint32_t row = 0; row < height; row += l->block_rows) {
        uint32_t rows = height - row < l->block_rows ? height - row : l->block_rows;
        memset(block, 0, (size_t)rows * width * l->kept);
        for (uint32_t x0 = 0; x0 < width; x0 += l->block_width) {
            for (uint16_t p = 0; p < l->planes; p++) {
                tmsize_t got = l->tiled
                    ? api->read_encoded_tile(f->tif, api->compute_tile(f->tif, x0, row, 0, p), seg, seg_bytes)
                    : api->read_encoded_strip(f->tif, api->compute_strip(f->tif, row, p), seg, seg_bytes);
                if (got <= 0) continue;  // a damaged or missing segment leaves its pixels blank, as libtiff does
                read_any = 1;
                place(l, seg, (size_t)got, block, width, rows, x0, p);
            }
        }
        to_rgba(l, block, out + (size_t)row * width * 4, (size_t)rows * width);
        if (alpha) {
            uint8_t *a = alpha + (size_t)row * width;
            for (size_t i = 0; i < (size_t)rows * width; i++) a[i] = l->alpha ? block[i * l->kept + l->colors] : 255;
        }
    }
    free(seg);
    free(block);
    if (!read_any) {
        snprintf(message, len, "%s", f->errors ? f->first_error : "no readable strip or tile");
        return -1;
    }
    if (f->errors > errors_before) {
        snprintf(message, len, "%s", f->first_error);
        return 1;
    }
    return 0;
}

int cic_tiff_read_samples(cic_tiff_file *f, uint8_t *out, uint32_t width, uint32_t height, char *message, size_t len) {
    sample_layout l;
    if (!layout_of(f, width, height, 0, &l)) return -2;
    return read_layout(f, &l, out, NULL, width, height, message, len);
}

int cic_tiff_is_lab(cic_tiff_file *f) {
    uint16_t photometric = 0;
    if (!f->api->get_field(f->tif, TAG_PHOTOMETRIC, &photometric)) return 0;
    return photometric == PHOTOMETRIC_CIELAB || photometric == PHOTOMETRIC_ICCLAB;
}

int cic_tiff_read_lab(cic_tiff_file *f, uint8_t *out, uint32_t width, uint32_t height, char *message, size_t len) {
    snprintf(message, len, "%s", "");
    sample_layout l;
    if (!layout_of(f, width, height, 1, &l) || !l.lab) {
        snprintf(message, len, "unsupported CIELab layout");
        return -2;
    }
    return read_layout(f, &l, out, NULL, width, height, message, len);
}

int cic_tiff_is_cmyk(cic_tiff_file *f) {
    const cic_tiff_api *api = f->api;
    uint16_t photometric = 0, inkset = INKSET_CMYK, samples = 1;
    if (!api->get_field(f->tif, TAG_PHOTOMETRIC, &photometric) || photometric != PHOTOMETRIC_SEPARATED) return 0;
    api->get_field_defaulted(f->tif, TAG_INKSET, &inkset);
    api->get_field_defaulted(f->tif, TAG_SAMPLESPERPIXEL, &samples);
    return inkset == INKSET_CMYK && samples >= 4;
}

int cic_tiff_read_cmyk(cic_tiff_file *f, uint8_t *cmyk, uint8_t *alpha, uint32_t width, uint32_t height,
                       char *message, size_t len) {
    snprintf(message, len, "%s", "");
    sample_layout l;
    if (!layout_of(f, width, height, 0, &l) || l.photometric != PHOTOMETRIC_SEPARATED) {
        snprintf(message, len, "not a CMYK layout the sample reader takes");
        return -2;
    }
    l.raw_cmyk = 1;
    return read_layout(f, &l, cmyk, alpha, width, height, message, len);
}
