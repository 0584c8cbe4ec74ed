// The incremental JPEG decoder: header, configure, start, then decode (or preview) as input arrives. Input
// comes through the suspending source (cic_jpeg_source.c); every libjpeg call here runs under setjmp and
// failures come back as status codes (cic_jpeg_internal.h).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/mman.h>
#include <jpeglib.h>
#include <jerror.h>
#include "cic_jpeg_internal.h"

// MARK: - Helpers

static cic_jpeg_status cic_fail(cic_jpeg_decoder *d, cic_jpeg_failure failure, const char *message) {
    d->phase = PHASE_FAILED;
    d->failure = failure;
    if (message) snprintf(d->err.message, sizeof d->err.message, "%s", message);
    return CIC_JPEG_ERROR;
}

// The fake EOI arrived before a single row of the first scan was complete.
static int cic_nothing_decoded(const cic_jpeg_decoder *d) {
    return d->err.hit_eof && d->eof_scan <= 1 && d->eof_imcu_row == 0;
}

// Maps the message libjpeg longjmp'ed with to a failure kind.
static cic_jpeg_status cic_fail_after_longjmp(cic_jpeg_decoder *d) {
    int code = d->err.pub.msg_code;
    cic_jpeg_failure failure = CIC_JPEG_FAIL_CORRUPT;
    if (code == JERR_EMPTY_IMAGE) failure = CIC_JPEG_FAIL_ZERO_PIXELS;
    else if (code == JERR_OUT_OF_MEMORY || code == JERR_NO_BACKING_STORE) failure = CIC_JPEG_FAIL_MEMORY;
    else if (code == JERR_SOF_UNSUPPORTED) failure = CIC_JPEG_FAIL_UNSUPPORTED_PROCESS;  // libjpeg-turbo < 3.0: SOF3
    else if (cic_nothing_decoded(d)) failure = CIC_JPEG_FAIL_TRUNCATED;
    return cic_fail(d, failure, NULL);
}

// Reads rows of the current output pass into `pixels` until the pass ends or libjpeg suspends.
// Returns 1 when the pass is complete.
static int cic_read_rows(cic_jpeg_decoder *d, uint8_t *pixels) {
    j_decompress_ptr cinfo = &d->cinfo;
    size_t stride = (size_t)d->out_width * 4;
    while (cinfo->output_scanline < cinfo->output_height) {
        JSAMPROW rows[CIC_JPEG_ROW_BATCH];
        JDIMENSION first = cinfo->output_scanline;
        JDIMENSION want = cinfo->output_height - first;
        if (want > CIC_JPEG_ROW_BATCH) want = CIC_JPEG_ROW_BATCH;
        for (JDIMENSION i = 0; i < want; i++) rows[i] = pixels + (size_t)(first + i) * stride;
        JDIMENSION got = jpeg_read_scanlines(cinfo, rows, want);
        if (d->header.is_cmyk && got > 0) cic_jpeg_convert_cmyk(d, rows[0], (size_t)got * (size_t)d->out_width);
        if (got == 0) return 0;
    }
    return 1;
}

static cic_jpeg_status cic_finish(cic_jpeg_decoder *d) {
    d->phase = PHASE_DONE;
    d->incomplete = d->header.multi_scan ? d->err.hit_eof : d->err.warnings_after_eof > 0;
    if (d->incomplete && cic_nothing_decoded(d))
        return cic_fail(d, CIC_JPEG_FAIL_TRUNCATED, "data ends before the first row of pixels");
    return CIC_JPEG_OK;
}

// MARK: - Decoder API

// libjpeg setup under its own setjmp (jpeg_CreateDecompress can fail when out of memory).
static int cic_decoder_init(cic_jpeg_decoder *d) {
    if (setjmp(d->err.jump)) return 0;
    jpeg_CreateDecompress(&d->cinfo, JPEG_LIB_VERSION, sizeof(struct jpeg_decompress_struct));
    d->created = 1;
    cic_jpeg_source_init(d);
    jpeg_save_markers(&d->cinfo, JPEG_APP0 + 1, 0xFFFF);
    jpeg_save_markers(&d->cinfo, JPEG_APP0 + 2, 0xFFFF);  // ICC_PROFILE chunks
    // Caps libjpeg's big buffers (the progressive coefficient store): 8 bytes per allowed pixel covers
    // four full-resolution components of 16-bit coefficients; anything beyond that fails cleanly.
    uint64_t max_pixels = d->max_pixels;
    uint64_t limit = max_pixels > (uint64_t)(1) << 40 ? (uint64_t)(1) << 43 : max_pixels * 8;
    limit += 64u << 20;
    if (limit > (uint64_t)(long)(~0UL >> 1)) limit = (uint64_t)(long)(~0UL >> 1);
    d->cinfo.mem->max_memory_to_use = (long)limit;
    return 1;
}

cic_jpeg_decoder *cic_jpeg_decoder_create(uint64_t max_pixels) {
    cic_jpeg_decoder *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    cic_jpeg_error_init(&d->err, CIC_JPEG_MAX_WARNINGS);
    d->cinfo.err = &d->err.pub;
    d->max_pixels = max_pixels;
    if (!cic_decoder_init(d)) {
        jpeg_destroy_decompress(&d->cinfo);
        free(d);
        return NULL;
    }
    return d;
}

void cic_jpeg_decoder_destroy(cic_jpeg_decoder *d) {
    if (!d) return;
    if (d->created) jpeg_destroy_decompress(&d->cinfo);
    free(d->icc);
    free(d->storage);
    free(d);
}

cic_jpeg_status cic_jpeg_decoder_read_header(cic_jpeg_decoder *d, cic_jpeg_header *header) {
    if (d->phase == PHASE_FAILED) return CIC_JPEG_ERROR;
    if (d->phase == PHASE_HEADER) {
        if (setjmp(d->err.jump)) return cic_fail_after_longjmp(d);
        int result = jpeg_read_header(&d->cinfo, TRUE);
        if (result == JPEG_SUSPENDED) {
            if (d->final) return cic_fail(d, CIC_JPEG_FAIL_TRUNCATED, "data ends inside the headers");
            return CIC_JPEG_SUSPENDED;
        }
        j_decompress_ptr cinfo = &d->cinfo;
        d->header.width = (int)cinfo->image_width;
        d->header.height = (int)cinfo->image_height;
        d->header.num_components = cinfo->num_components;
        d->header.is_cmyk = cinfo->jpeg_color_space == JCS_CMYK || cinfo->jpeg_color_space == JCS_YCCK;
        d->header.multi_scan = jpeg_has_multiple_scans(cinfo) ? 1 : 0;
        d->header.arithmetic = cinfo->arith_code ? 1 : 0;
        d->header.progressive = cinfo->progressive_mode ? 1 : 0;
        d->header.adobe_inverted = cinfo->saw_Adobe_marker ? 1 : 0;
        if (header) *header = d->header;  // also on the failures below: the caller reports the size
        // The decompression-bomb guard: before jpeg_start_decompress allocates anything image-sized.
        if (cinfo->image_width == 0 || cinfo->image_height == 0)
            return cic_fail(d, CIC_JPEG_FAIL_ZERO_PIXELS, "zero width or height");
        if ((uint64_t)cinfo->image_width * (uint64_t)cinfo->image_height > d->max_pixels)
            return cic_fail(d, CIC_JPEG_FAIL_TOO_LARGE, "image exceeds the pixel limit");
        cic_jpeg_collect_icc(d);
        for (jpeg_saved_marker_ptr m = cinfo->marker_list; m; m = m->next) {
            if (m->marker == JPEG_APP0 + 1 && m->data_length >= 6 && memcmp(m->data, "Exif\0\0", 6) == 0) {
                d->exif = m->data;
                d->exif_length = m->data_length;
                break;
            }
        }
        d->phase = PHASE_READY;
    }
    if (header) *header = d->header;
    return CIC_JPEG_OK;
}

cic_jpeg_status cic_jpeg_decoder_configure(cic_jpeg_decoder *d, int scale_denom, int *out_width, int *out_height) {
    if (d->phase == PHASE_FAILED) return CIC_JPEG_ERROR;
    if (d->phase != PHASE_READY && d->phase != PHASE_CONFIGURED)
        return cic_fail(d, CIC_JPEG_FAIL_CORRUPT, "configure called out of order");
    j_decompress_ptr cinfo = &d->cinfo;
    cinfo->scale_num = 1;
    cinfo->scale_denom = scale_denom == 2 || scale_denom == 4 || scale_denom == 8 ? (unsigned int)scale_denom : 1;
    if (setjmp(d->err.jump)) return cic_fail_after_longjmp(d);
    // The corpus hashes are exact for exactly this configuration.
    cinfo->dct_method = JDCT_ISLOW;
    cinfo->do_fancy_upsampling = TRUE;
    cinfo->out_color_space = d->header.is_cmyk ? JCS_CMYK : JCS_EXT_RGBA;
    cinfo->buffered_image = d->header.multi_scan ? TRUE : FALSE;
    jpeg_calc_output_dimensions(cinfo);
    if (cinfo->output_components != 4) return cic_fail(d, CIC_JPEG_FAIL_CORRUPT, "unsupported color space");
    d->out_width = (int)cinfo->output_width;
    d->out_height = (int)cinfo->output_height;
    *out_width = d->out_width;
    *out_height = d->out_height;
    d->phase = PHASE_CONFIGURED;
    return CIC_JPEG_OK;
}

cic_jpeg_status cic_jpeg_decoder_start(cic_jpeg_decoder *d) {
    if (d->phase == PHASE_FAILED) return CIC_JPEG_ERROR;
    if (d->phase != PHASE_CONFIGURED) return cic_fail(d, CIC_JPEG_FAIL_CORRUPT, "start called out of order");
    if (setjmp(d->err.jump)) return cic_fail_after_longjmp(d);
    // Single-scan and buffered-image decompression never read input here, so this cannot suspend.
    if (!jpeg_start_decompress(&d->cinfo)) return cic_fail(d, CIC_JPEG_FAIL_CORRUPT, "unexpected suspension");
    d->phase = PHASE_SCANNING;
    return CIC_JPEG_OK;
}

cic_jpeg_status cic_jpeg_decoder_decode(cic_jpeg_decoder *d, uint8_t *pixels) {
    if (d->phase == PHASE_FAILED) return CIC_JPEG_ERROR;
    if (d->phase == PHASE_DONE) return CIC_JPEG_OK;
    if (d->phase != PHASE_SCANNING) return cic_fail(d, CIC_JPEG_FAIL_CORRUPT, "decode called out of order");
    if (!pixels) return cic_fail(d, CIC_JPEG_FAIL_MEMORY, "no pixel buffer");
    if (setjmp(d->err.jump)) return cic_fail_after_longjmp(d);
    j_decompress_ptr cinfo = &d->cinfo;

    if (!d->header.multi_scan) {
        int done = cic_read_rows(d, pixels);
        d->rows_decoded = (int)cinfo->output_scanline;
        if (!done) {
            // A final source never suspends; no progress then would be a loop.
            if (d->final) return cic_fail(d, CIC_JPEG_FAIL_CORRUPT, "decoder made no progress");
            return CIC_JPEG_SUSPENDED;
        }
        // Rows complete: anything after them (EOI, trailing markers) is not read, so trailing garbage
        // cannot fail an image that is already whole.
        return cic_finish(d);
    }

    if (d->finish_output_pending) {
        if (!jpeg_finish_output(cinfo)) {
            if (d->final) return cic_fail(d, CIC_JPEG_FAIL_CORRUPT, "decoder made no progress");
            return CIC_JPEG_SUSPENDED;
        }
        d->finish_output_pending = 0;
    }
    for (;;) {
        int result = jpeg_consume_input(cinfo);
        if (result == JPEG_SUSPENDED) {
            if (d->final) return cic_fail(d, CIC_JPEG_FAIL_CORRUPT, "decoder made no progress");
            return CIC_JPEG_SUSPENDED;
        }
        if (result == JPEG_SCAN_COMPLETED) {
            d->completed_scans = cinfo->input_scan_number;
        } else if (result == JPEG_REACHED_SOS) {
            if (cinfo->input_scan_number > CIC_JPEG_MAX_SCANS)
                return cic_fail(d, CIC_JPEG_FAIL_CORRUPT, "more than 500 progressive scans");
        } else if (result == JPEG_REACHED_EOI) {
            d->completed_scans = cinfo->input_scan_number;
            break;
        }
    }
    // All input is in: the final output pass reads no more data, so it cannot suspend.
    if (!jpeg_start_output(cinfo, cinfo->input_scan_number))
        return cic_fail(d, CIC_JPEG_FAIL_CORRUPT, "unexpected suspension");
    int done = cic_read_rows(d, pixels);
    d->rows_decoded = (int)cinfo->output_scanline;
    if (!done || !jpeg_finish_output(cinfo)) return cic_fail(d, CIC_JPEG_FAIL_CORRUPT, "unexpected suspension");
    d->rendered_scan = cinfo->output_scan_number;
    return cic_finish(d);
}

cic_jpeg_status cic_jpeg_decoder_render_preview(cic_jpeg_decoder *d, uint8_t *pixels) {
    if (d->phase == PHASE_FAILED) return CIC_JPEG_ERROR;
    if (!d->header.multi_scan || d->phase != PHASE_SCANNING || !pixels) return CIC_JPEG_SUSPENDED;
    if (d->completed_scans < 1 || d->completed_scans <= d->rendered_scan) return CIC_JPEG_SUSPENDED;
    if (setjmp(d->err.jump)) return cic_fail_after_longjmp(d);
    j_decompress_ptr cinfo = &d->cinfo;
    if (d->finish_output_pending) {
        if (!jpeg_finish_output(cinfo)) return CIC_JPEG_SUSPENDED;
        d->finish_output_pending = 0;
    }
    // Showing a completed scan: its rows never wait for input, so the pass cannot suspend midway.
    int scan = d->completed_scans;
    if (!jpeg_start_output(cinfo, scan)) return CIC_JPEG_SUSPENDED;
    cic_read_rows(d, pixels);
    d->rows_decoded = (int)cinfo->output_scanline;
    // Ending the pass reads ahead to the next SOS when the shown scan is the newest one: that can suspend.
    if (!jpeg_finish_output(cinfo)) d->finish_output_pending = 1;
    d->rendered_scan = scan;
    return CIC_JPEG_OK;
}

cic_jpeg_progress cic_jpeg_decoder_progress(const cic_jpeg_decoder *d) {
    cic_jpeg_progress p;
    p.rows_decoded = d->rows_decoded;
    p.completed_scans = d->completed_scans;
    p.rendered_scan = d->rendered_scan;
    p.finished = d->phase == PHASE_DONE;
    p.incomplete = d->incomplete;
    p.warnings = d->err.pub.num_warnings;
    return p;
}

cic_jpeg_failure cic_jpeg_decoder_failure(const cic_jpeg_decoder *d) {
    return d->phase == PHASE_FAILED ? d->failure : CIC_JPEG_FAIL_NONE;
}

int cic_jpeg_decoder_unsupported_sof(const cic_jpeg_decoder *d) {
    // JERR_SOF_UNSUPPORTED carries the marker as its first parameter (jdmarker.c).
    if (d->phase != PHASE_FAILED || d->failure != CIC_JPEG_FAIL_UNSUPPORTED_PROCESS) return 0;
    return d->err.pub.msg_parm.i[0];
}

const char *cic_jpeg_decoder_error(const cic_jpeg_decoder *d) {
    return d->err.message;
}

const uint8_t *cic_jpeg_decoder_icc(const cic_jpeg_decoder *d, size_t *length) {
    *length = d->icc ? d->icc_length : 0;
    return d->icc;
}

void cic_jpeg_decoder_set_cmyk_transform(cic_jpeg_decoder *d, const cic_lcms_api *api, void *transform) {
    d->cmyk_api = api;
    d->cmyk_transform = api ? transform : NULL;
}

const uint8_t *cic_jpeg_decoder_exif(const cic_jpeg_decoder *d, size_t *length) {
    *length = d->exif ? d->exif_length : 0;
    return d->exif;
}

void cic_jpeg_advise_output(uint8_t *pixels, size_t length) {
#ifdef MADV_HUGEPAGE
    // A fresh multi-megabyte buffer costs one page fault per 4 KB page on first write (a 12 MP image:
    // ~12,000 faults, a third of libjpeg's own decode time). Transparent huge pages cut that 500-fold
    // where the system allows them on request; elsewhere this is a no-op.
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t start = ((uintptr_t)pixels + huge - 1) & ~(huge - 1);
    uintptr_t end = ((uintptr_t)pixels + length) & ~(huge - 1);
    if (end > start) madvise((void *)start, end - start, MADV_HUGEPAGE);
#else
    (void)pixels;
    (void)length;
#endif
}
