// 16-bit TIFF samples converted to 8-bit RGBA by the shim itself rather than libtiff's RGBA interface.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cic_tiff_internal.h"

// MARK: - 16-bit gray and RGB, read directly

// libtiff's RGBA interface rounds 16-bit samples to 8 bits as (v + 128) / 257; Pillow, browsers and the PNG
// decoder keep the high byte. So 16-bit unsigned gray and RGB (contiguous or planar, strips or tiles, any
// compression libtiff decodes) are read as decoded samples and converted here. Returns -2 for any other layout
// (the caller falls back to the RGBA interface), else as cic_tiff_read_rgba.
typedef struct {
    uint16_t samples, colors, planes;
    int alpha;  // 0 none, 1 straight, 2 premultiplied
    uint32_t block_rows;
    int tiled;
    uint32_t tile_width;
} direct_layout;

static int direct_layout_of(cic_tiff_file *f, uint32_t height, direct_layout *l) {
    const cic_tiff_api *api = f->api;
    uint16_t bits = 0, photometric = 0, planar = 1, format = SAMPLEFORMAT_UINT, count = 0;
    uint16_t *extra = NULL;
    memset(l, 0, sizeof *l);
    if (!api->get_field_defaulted(f->tif, TAG_BITSPERSAMPLE, &bits) || bits != 16) return 0;
    if (!api->get_field(f->tif, TAG_PHOTOMETRIC, &photometric)) return 0;
    api->get_field_defaulted(f->tif, TAG_SAMPLESPERPIXEL, &l->samples);
    api->get_field_defaulted(f->tif, TAG_PLANARCONFIG, &planar);
    api->get_field_defaulted(f->tif, TAG_SAMPLEFORMAT, &format);
    if (format != SAMPLEFORMAT_UINT) return 0;
    if (photometric == PHOTOMETRIC_RGB) l->colors = 3;
    else if (photometric == PHOTOMETRIC_MINISBLACK) l->colors = 1;
    else return 0;  // min-is-white, palette, CMYK, YCbCr, Lab...: the RGBA interface handles them
    if (l->samples < l->colors || l->samples > 8) return 0;
    l->planes = planar == PLANARCONFIG_SEPARATE ? l->samples : 1;
    if (l->samples > l->colors && api->get_field(f->tif, TAG_EXTRASAMPLES, &count, &extra) && count >= 1 && extra)
        l->alpha = f->straight_alpha ? 1 : extra[0] == EXTRASAMPLE_ASSOCALPHA ? 2 : 0;
    l->tiled = api->is_tiled(f->tif);
    uint32_t rows = height, tile_length = 0;
    if (l->tiled) {
        if (!api->get_field(f->tif, TAG_TILEWIDTH, &l->tile_width) || !api->get_field(f->tif, TAG_TILELENGTH, &tile_length))
            return 0;
        if (l->tile_width == 0 || tile_length == 0 || l->tile_width > 65536 || tile_length > 65536) return 0;
        rows = tile_length;
    } else {
        api->get_field_defaulted(f->tif, TAG_ROWSPERSTRIP, &rows);
    }
    l->block_rows = rows == 0 || rows > height ? height : rows;
    return 1;
}

// Copies decoded segment `seg` (one plane of a strip or tile) into the block of interleaved samples.
static void direct_place(const direct_layout *l, const uint16_t *seg, size_t seg_samples, uint16_t *block,
                         uint32_t width, uint32_t rows, uint32_t x0, uint32_t seg_width, uint16_t plane) {
    uint16_t per_pixel = l->planes == 1 ? l->samples : 1;
    for (uint32_t y = 0; y < rows; y++) {
        for (uint32_t x = 0; x < seg_width && x0 + x < width; x++) {
            size_t from = ((size_t)y * seg_width + x) * per_pixel;
            if (from + per_pixel > seg_samples) return;
            uint16_t *to = block + ((size_t)y * width + x0 + x) * l->samples;
            if (l->planes == 1) memcpy(to, seg + from, per_pixel * sizeof *to);
            else to[plane] = seg[from];
        }
    }
}

static void direct_convert(const direct_layout *l, const uint16_t *block, uint8_t *out, size_t pixels) {
    for (size_t i = 0; i < pixels; i++, block += l->samples, out += 4) {
        for (int c = 0; c < 3; c++) out[c] = (uint8_t)(block[l->colors == 3 ? c : 0] >> 8);
        unsigned a = l->alpha ? block[l->colors] >> 8 : 255;
        out[3] = (uint8_t)a;
        if (l->alpha == 2 && a != 0 && a != 255) {
            for (int c = 0; c < 3; c++) {
                unsigned v = (out[c] * 255u + a / 2u) / a;
                out[c] = (uint8_t)(v > 255 ? 255 : v);
            }
        }
    }
}

int cic_tiff_read_direct16(cic_tiff_file *f, uint8_t *out, uint32_t width, uint32_t height,
                           char *message, size_t len) {
    const cic_tiff_api *api = f->api;
    direct_layout l;
    if (!direct_layout_of(f, height, &l)) return -2;
    tmsize_t seg_bytes = l.tiled ? api->tile_size(f->tif) : api->strip_size(f->tif);
    size_t block_samples = (size_t)l.block_rows * width * l.samples;
    if (seg_bytes <= 0 || (uint64_t)seg_bytes > ((uint64_t)1 << 31) || block_samples > ((size_t)1 << 31)) return -2;
    uint16_t *seg = malloc((size_t)seg_bytes);
    uint16_t *block = malloc(block_samples * sizeof *block);
    if (!seg || !block) {
        free(seg);
        free(block);
        snprintf(message, len, "out of memory");
        return -1;
    }
    int errors_before = f->errors, read_any = 0;
    for (uint32_t row = 0; row < height; row += l.block_rows) {
        uint32_t rows = height - row < l.block_rows ? height - row : l.block_rows;
        memset(block, 0, (size_t)rows * width * l.samples * sizeof *block);
        uint32_t step = l.tiled ? l.tile_width : width;
        for (uint32_t x0 = 0; x0 < width; x0 += step) {
            for (uint16_t p = 0; p < l.planes; p++) {
                tmsize_t got = l.tiled
                    ? api->read_encoded_tile(f->tif, api->compute_tile(f->tif, x0, row, 0, p), seg, seg_bytes)
                    : api->read_encoded_strip(f->tif, api->compute_strip(f->tif, row, p), seg, seg_bytes);
                if (got <= 0) continue;  // a damaged or missing segment leaves its pixels blank, as libtiff does
                read_any = 1;
                direct_place(&l, seg, (size_t)got / 2, block, width, rows, x0, step, p);
            }
        }
        direct_convert(&l, block, out + (size_t)row * width * 4, (size_t)rows * width);
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
