// The decoder reads from a suspending source: when the bytes run out before the input is final,
// fill_input_buffer returns FALSE and libjpeg backs up to the start of the unit (marker or MCU) it was
// reading; the unconsumed bytes stay in the buffer and new bytes are appended behind them, so nothing is
// ever decoded twice. Once the input is final, the end of data becomes a fake EOI exactly as jpeg_mem_src
// does it, so an incremental decode ends in the same state as a one-shot decode of the same bytes.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>
#include <jerror.h>
#include "cic_jpeg_internal.h"

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

void cic_jpeg_source_init(cic_jpeg_decoder *d) {
    d->src.init_source = cic_src_init;
    d->src.fill_input_buffer = cic_src_fill;
    d->src.skip_input_data = cic_src_skip;
    d->src.resync_to_restart = jpeg_resync_to_restart;
    d->src.term_source = cic_src_term;
    d->src.next_input_byte = NULL;
    d->src.bytes_in_buffer = 0;
    d->cinfo.src = &d->src;
}

// MARK: - Input API

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
