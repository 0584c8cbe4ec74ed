// Colour in the JPEG decoder: CMYK/YCCK rows to RGBA and the ICC profile carried in APP2 markers.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include "cic_jpeg_internal.h"

// Adobe CMYK as libjpeg delivers it is inverted (255 = no ink), so R = C * K / 255, rounded.
static void cic_cmyk_to_rgba(uint8_t *p, size_t pixels) {
    for (size_t i = 0; i < pixels; i++, p += 4) {
        unsigned k = p[3];
        unsigned r = p[0] * k + 128, g = p[1] * k + 128, b = p[2] * k + 128;
        p[0] = (uint8_t)((r + (r >> 8)) >> 8);
        p[1] = (uint8_t)((g + (g >> 8)) >> 8);
        p[2] = (uint8_t)((b + (b >> 8)) >> 8);
        p[3] = 255;
    }
}

// CMYK rows to RGBA: through the profile's lcms2 transform when one is set, else the naive formula.
static void cic_jpeg_convert_cmyk(cic_jpeg_decoder *d, uint8_t *p, size_t pixels) {
    if (!d->cmyk_transform) {
        cic_cmyk_to_rgba(p, pixels);
        return;
    }
    cic_lcms_apply(d->cmyk_api, d->cmyk_transform, p, pixels);
    for (size_t i = 0; i < pixels; i++) p[i * 4 + 3] = 255;  // the K byte's place becomes opaque alpha
}

void cic_jpeg_convert_rows(cic_jpeg_decoder *d, uint8_t *p, size_t pixels) {
    if (d->header.is_cmyk) cic_jpeg_convert_cmyk(d, p, pixels);
    else if (d->row_matrix) cic_matrix_transform_apply_opaque(d->row_matrix, p, pixels);  // libjpeg's RGBA: alpha 255
    else if (d->row_lcms_transform) cic_lcms_apply(d->row_lcms_api, d->row_lcms_transform, p, pixels);
}

void cic_jpeg_decoder_set_row_transform(cic_jpeg_decoder *d, const cic_matrix_transform *matrix,
                                        const cic_lcms_api *api, void *transform) {
    d->row_matrix = matrix;
    d->row_lcms_api = api;
    d->row_lcms_transform = api ? transform : NULL;
}

// Joins the APP2 "ICC_PROFILE\0" chunks (sequence number, count, data) in order. A profile with a missing,
// repeated or inconsistent chunk is ignored, as libjpeg's own jpeg_read_icc_profile does.
void cic_jpeg_collect_icc(cic_jpeg_decoder *d) {
    static const char tag[12] = "ICC_PROFILE";  // 11 letters and the NUL
    size_t lengths[256] = {0};
    const uint8_t *parts[256] = {0};
    int count = 0;
    size_t total = 0;
    for (jpeg_saved_marker_ptr m = d->cinfo.marker_list; m; m = m->next) {
        if (m->marker != JPEG_APP0 + 2 || m->data_length < 14 || memcmp(m->data, tag, 12) != 0) continue;
        int seq = m->data[12], n = m->data[13];
        if (count == 0) count = n;
        if (n == 0 || n != count || seq < 1 || seq > n || parts[seq]) return;
        parts[seq] = m->data + 14;
        lengths[seq] = m->data_length - 14;
        total += lengths[seq];
    }
    if (count == 0 || total == 0) return;
    for (int i = 1; i <= count; i++) if (!parts[i]) return;
    d->icc = malloc(total);
    if (!d->icc) return;
    for (int i = 1, at = 0; i <= count; i++) {
        memcpy(d->icc + at, parts[i], lengths[i]);
        at += (int)lengths[i];
    }
    d->icc_length = total;
}
