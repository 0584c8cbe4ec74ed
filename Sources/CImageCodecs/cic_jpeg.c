// libjpeg-turbo behind a setjmp boundary. libjpeg reports fatal errors through error_exit, whose default
// calls exit(); here it longjmps back to the cic_* function that made the libjpeg call, which then returns
// an error status. Swift only ever sees status codes.
//
// The decoder reads from a suspending source: when the bytes run out before the input is final,
// fill_input_buffer returns FALSE and libjpeg backs up to the start of the unit (marker or MCU) it was
// reading; the unconsumed bytes stay in the buffer and new bytes are appended behind them, so nothing is
// ever decoded twice. Once the input is final, the end of data becomes a fake EOI exactly as jpeg_mem_src
// does it, so an incremental decode ends in the same state as a one-shot decode of the same bytes.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <sys/mman.h>
#include <jpeglib.h>
#include <jerror.h>
#include "cic_jpeg.h"
#include "cic_lcms.h"

// Corrupt data makes libjpeg warn and carry on; a hostile file can make it warn millions of times.
#define CIC_JPEG_MAX_WARNINGS 1000
// Each progressive scan costs a pass over the coefficients; tiny scans make that a CPU bomb.
#define CIC_JPEG_MAX_SCANS 500
// Rows handed to jpeg_read_scanlines per call.
#define CIC_JPEG_ROW_BATCH 32

typedef struct {
    struct jpeg_error_mgr pub;   // first: libjpeg's err pointer is cast back to this
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
    long warning_limit;
    int hit_eof;                 // the decoder's source has inserted a fake EOI
    long warnings_after_eof;     // corrupt-data warnings caused by the missing data
} cic_error_mgr;

enum {
    PHASE_FAILED = -1,
    PHASE_HEADER = 0,     // reading markers up to the first SOS
    PHASE_READY,          // header read; configure next
    PHASE_CONFIGURED,     // output parameters set; start next
    PHASE_SCANNING,       // single-scan: reading rows; multi-scan: absorbing scans
    PHASE_DONE,           // every output row written
};

struct cic_jpeg_decoder {
    struct jpeg_decompress_struct cinfo;   // first: source callbacks cast cinfo back to the decoder
    cic_error_mgr err;
    struct jpeg_source_mgr src;
    int created;
    int phase;
    cic_jpeg_failure failure;
    uint64_t max_pixels;

    // Input: owned storage holds the unconsumed bytes (src.next_input_byte points into it).
    uint8_t *storage;
    size_t capacity;
    size_t skip_pending;   // bytes libjpeg asked to skip that have not arrived yet
    int final;

    // Where the data ended (set when the fake EOI is first inserted).
    int eof_scan;
    JDIMENSION eof_imcu_row;

    cic_jpeg_header header;
    int out_width, out_height;
    int rows_decoded;
    int completed_scans;
    int rendered_scan;
    int finish_output_pending;   // a preview's jpeg_finish_output suspended; complete it first
    int incomplete;

    const uint8_t *exif;
    size_t exif_length;
    uint8_t *icc;                  // the APP2 ICC_PROFILE chunks joined (owned), or NULL
    size_t icc_length;
    const cic_lcms_api *cmyk_api;  // CMYK/YCCK rows go through this lcms2 transform when set
    void *cmyk_transform;
};

// MARK: - Error manager

static void cic_error_exit(j_common_ptr cinfo) {
    cic_error_mgr *err = (cic_error_mgr *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, err->message);
    longjmp(err->jump, 1);
}

static void cic_output_message(j_common_ptr cinfo) {
    (void)cinfo;  // silent: a library must not write to stderr
}

static void cic_emit_message(j_common_ptr cinfo, int msg_level) {
    if (msg_level >= 0) return;  // trace messages
    cic_error_mgr *err = (cic_error_mgr *)cinfo->err;
    cinfo->err->num_warnings++;
    if (err->hit_eof && cinfo->err->msg_code != JWRN_JPEG_EOF) err->warnings_after_eof++;
    if (cinfo->err->num_warnings > err->warning_limit) {
        char last[JMSG_LENGTH_MAX];
        (*cinfo->err->format_message)(cinfo, last);
        snprintf(err->message, sizeof err->message, "more than %ld corrupt-data warnings (last: %.120s)",
                 err->warning_limit, last);
        cinfo->err->msg_code = 0;
        longjmp(err->jump, 1);
    }
}

static void cic_error_init(cic_error_mgr *err, long warning_limit) {
    jpeg_std_error(&err->pub);
    err->pub.error_exit = cic_error_exit;
    err->pub.output_message = cic_output_message;
    err->pub.emit_message = cic_emit_message;
    err->warning_limit = warning_limit;
    err->message[0] = 0;
}

// MARK: - Suspending source

static void cic_src_init(j_decompress_ptr cinfo) { (void)cinfo; }
static void cic_src_term(j_decompress_ptr cinfo) { (void)cinfo; }

static boolean cic_src_fill(j_decompress_ptr cinfo) {
    static const JOCTET fake_eoi[2] = { 0xFF, JPEG_EOI };
    cic_jpeg_decoder *d = (cic_jpeg_decoder *)cinfo;
    // Suspend. libjpeg calls this with src still at the start of the unit it is reading: keep it as is.
    if (!d->final) return FALSE;
    if (!d->err.hit_eof) {
        d->err.hit_eof = 1;
        d->eof_scan = cinfo->input_scan_number;
        d->eof_imcu_row = cinfo->input_iMCU_row;
    }
    WARNMS(cinfo, JWRN_JPEG_EOF);
    cinfo->src->next_input_byte = fake_eoi;
    cinfo->src->bytes_in_buffer = 2;
    return TRUE;
}

static void cic_src_skip(j_decompress_ptr cinfo, long num_bytes) {
    cic_jpeg_decoder *d = (cic_jpeg_decoder *)cinfo;
    if (num_bytes <= 0) return;
    size_t n = (size_t)num_bytes;
    if (n <= cinfo->src->bytes_in_buffer) {
        cinfo->src->next_input_byte += n;
        cinfo->src->bytes_in_buffer -= n;
        return;
    }
    n -= cinfo->src->bytes_in_buffer;
    cinfo->src->next_input_byte += cinfo->src->bytes_in_buffer;
    cinfo->src->bytes_in_buffer = 0;
    // Final input: the next read finds the end of data. Otherwise drop the rest as it arrives.
    if (!d->final) d->skip_pending += n;
}

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
    else if (cic_nothing_decoded(d)) failure = CIC_JPEG_FAIL_TRUNCATED;
    return cic_fail(d, failure, NULL);
}

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
static void cic_convert_cmyk(cic_jpeg_decoder *d, uint8_t *p, size_t pixels) {
    if (!d->cmyk_transform) {
        cic_cmyk_to_rgba(p, pixels);
        return;
    }
    cic_lcms_apply(d->cmyk_api, d->cmyk_transform, p, pixels);
    for (size_t i = 0; i < pixels; i++) p[i * 4 + 3] = 255;  // the K byte's place becomes opaque alpha
}

// Joins the APP2 "ICC_PROFILE\0" chunks (sequence number, count, data) in order. A profile with a missing,
// repeated or inconsistent chunk is ignored, as libjpeg's own jpeg_read_icc_profile does.
static void cic_collect_icc(cic_jpeg_decoder *d) {
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
        if (d->header.is_cmyk && got > 0) cic_convert_cmyk(d, rows[0], (size_t)got * (size_t)d->out_width);
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
    d->src.init_source = cic_src_init;
    d->src.fill_input_buffer = cic_src_fill;
    d->src.skip_input_data = cic_src_skip;
    d->src.resync_to_restart = jpeg_resync_to_restart;
    d->src.term_source = cic_src_term;
    d->src.next_input_byte = NULL;
    d->src.bytes_in_buffer = 0;
    d->cinfo.src = &d->src;
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
    cic_error_init(&d->err, CIC_JPEG_MAX_WARNINGS);
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

int cic_jpeg_decoder_append(cic_jpeg_decoder *d, const uint8_t *bytes, size_t count) {
    if (d->final || count == 0) return 1;
    if (d->skip_pending) {
        size_t skip = d->skip_pending < count ? d->skip_pending : count;
        bytes += skip;
        count -= skip;
        d->skip_pending -= skip;
        if (count == 0) return 1;
    }
    size_t keep = d->src.bytes_in_buffer;
    const JOCTET *from = d->src.next_input_byte;
    if (keep > SIZE_MAX - count) return 0;
    size_t need = keep + count;
    if (need > d->capacity) {
        size_t capacity = d->capacity ? d->capacity : 65536;
        while (capacity < need) capacity = capacity > SIZE_MAX / 2 ? need : capacity * 2;
        uint8_t *grown = malloc(capacity);
        if (!grown) return 0;
        if (keep) memcpy(grown, from, keep);
        free(d->storage);
        d->storage = grown;
        d->capacity = capacity;
    } else if (keep && from != d->storage) {
        memmove(d->storage, from, keep);
    }
    memcpy(d->storage + keep, bytes, count);
    d->src.next_input_byte = d->storage;
    d->src.bytes_in_buffer = need;
    return 1;
}

void cic_jpeg_decoder_set_borrowed_input(cic_jpeg_decoder *d, const uint8_t *bytes, size_t count) {
    d->src.next_input_byte = bytes;
    d->src.bytes_in_buffer = bytes ? count : 0;
    d->final = 1;
}

void cic_jpeg_decoder_set_final(cic_jpeg_decoder *d) {
    d->final = 1;
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
        cic_collect_icc(d);
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

// MARK: - Encoder

typedef struct {
    struct jpeg_destination_mgr pub;
    uint8_t *data;
    size_t capacity;
} cic_dest_mgr;

typedef struct {
    struct jpeg_compress_struct cinfo;
    cic_error_mgr err;
    cic_dest_mgr dest;
} cic_encoder;

static void cic_dest_init(j_compress_ptr cinfo) {
    cic_dest_mgr *dest = (cic_dest_mgr *)cinfo->dest;
    dest->capacity = 65536;
    dest->data = malloc(dest->capacity);
    if (!dest->data) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 0);
    dest->pub.next_output_byte = dest->data;
    dest->pub.free_in_buffer = dest->capacity;
}

static boolean cic_dest_empty(j_compress_ptr cinfo) {
    // Called when the whole buffer is full: double it and carry on behind the old end.
    cic_dest_mgr *dest = (cic_dest_mgr *)cinfo->dest;
    size_t used = dest->capacity;
    if (used > SIZE_MAX / 2) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 1);
    uint8_t *grown = realloc(dest->data, used * 2);
    if (!grown) ERREXIT1(cinfo, JERR_OUT_OF_MEMORY, 1);
    dest->data = grown;
    dest->capacity = used * 2;
    dest->pub.next_output_byte = grown + used;
    dest->pub.free_in_buffer = dest->capacity - used;
    return TRUE;
}

static void cic_dest_term(j_compress_ptr cinfo) { (void)cinfo; }

int cic_jpeg_encode_rgba(const uint8_t *pixels, int width, int height, int quality,
                         const uint8_t *exif, size_t exif_length,
                         uint8_t **out, size_t *out_length, char *message, size_t message_capacity) {
    cic_jpeg_encode_settings settings = {quality, 0, CIC_JPEG_SUBSAMPLING_420, 0};
    return cic_jpeg_encode_rgba_settings(pixels, width, height, &settings, exif, exif_length, out, out_length,
                                         message, message_capacity);
}

// Luma sampling factors per cic_jpeg_subsampling value (chroma is always 1x1).
static const int cic_luma_sampling[3][2] = {{2, 2}, {2, 1}, {1, 1}};

int cic_jpeg_encode_rgba_settings(const uint8_t *pixels, int width, int height,
                                  const cic_jpeg_encode_settings *settings, const uint8_t *exif, size_t exif_length,
                                  uint8_t **out, size_t *out_length, char *message, size_t message_capacity) {
    int quality = settings->quality;
    *out = NULL;
    *out_length = 0;
    if (width <= 0 || height <= 0 || !pixels) {
        if (message_capacity) snprintf(message, message_capacity, "no pixels to encode");
        return 0;
    }
    cic_encoder *e = calloc(1, sizeof *e);
    if (!e) {
        if (message_capacity) snprintf(message, message_capacity, "out of memory");
        return 0;
    }
    cic_error_init(&e->err, CIC_JPEG_MAX_WARNINGS);
    e->cinfo.err = &e->err.pub;
    if (setjmp(e->err.jump)) {
        if (message_capacity) snprintf(message, message_capacity, "%s", e->err.message);
        jpeg_destroy_compress(&e->cinfo);
        free(e->dest.data);
        free(e);
        return 0;
    }
    jpeg_CreateCompress(&e->cinfo, JPEG_LIB_VERSION, sizeof(struct jpeg_compress_struct));
    e->dest.pub.init_destination = cic_dest_init;
    e->dest.pub.empty_output_buffer = cic_dest_empty;
    e->dest.pub.term_destination = cic_dest_term;
    e->cinfo.dest = &e->dest.pub;
    e->cinfo.image_width = (JDIMENSION)width;
    e->cinfo.image_height = (JDIMENSION)height;
    e->cinfo.input_components = 4;
    e->cinfo.in_color_space = JCS_EXT_RGBX;  // the fourth byte (alpha) is ignored
    jpeg_set_defaults(&e->cinfo);
    jpeg_set_quality(&e->cinfo, quality < 1 ? 1 : quality > 100 ? 100 : quality, TRUE);
    int sampling = settings->subsampling;
    if (sampling < CIC_JPEG_SUBSAMPLING_420 || sampling > CIC_JPEG_SUBSAMPLING_444) sampling = CIC_JPEG_SUBSAMPLING_420;
    e->cinfo.comp_info[0].h_samp_factor = cic_luma_sampling[sampling][0];
    e->cinfo.comp_info[0].v_samp_factor = cic_luma_sampling[sampling][1];
    if (settings->optimize_coding) e->cinfo.optimize_coding = TRUE;
    if (settings->progressive) jpeg_simple_progression(&e->cinfo);
    jpeg_start_compress(&e->cinfo, TRUE);
    if (exif && exif_length > 0 && exif_length <= 65533)
        jpeg_write_marker(&e->cinfo, JPEG_APP0 + 1, exif, (unsigned int)exif_length);
    size_t stride = (size_t)width * 4;
    while (e->cinfo.next_scanline < e->cinfo.image_height) {
        JSAMPROW row = (JSAMPROW)(pixels + (size_t)e->cinfo.next_scanline * stride);
        jpeg_write_scanlines(&e->cinfo, &row, 1);
    }
    jpeg_finish_compress(&e->cinfo);
    *out = e->dest.data;
    *out_length = e->dest.capacity - e->dest.pub.free_in_buffer;
    jpeg_destroy_compress(&e->cinfo);
    free(e);
    return 1;
}

void cic_jpeg_free(void *buffer) {
    free(buffer);
}
