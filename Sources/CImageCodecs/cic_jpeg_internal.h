// Internal to the JPEG shim (not in include/, so not exported to Swift): the state the cic_jpeg_*.c files share.
//
// libjpeg-turbo behind a setjmp boundary. libjpeg reports fatal errors through error_exit, whose default
// calls exit(); here it longjmps back to the cic_* function that made the libjpeg call, which then returns
// an error status. Swift only ever sees status codes.
//
//   cic_jpeg_error.c   the error manager (decoder and encoder)
//   cic_jpeg_source.c  the decoder's suspending source and its input buffer
//   cic_jpeg_color.c   CMYK rows to RGBA, the embedded ICC profile
//   cic_jpeg_decode.c  the incremental decoder's phases and API
//   cic_jpeg_encode.c  the encoder and its growing memory destination
#ifndef CIC_JPEG_INTERNAL_H
#define CIC_JPEG_INTERNAL_H

#include <stdio.h>
#include <setjmp.h>
#include <jpeglib.h>
#include "cic_jpeg.h"
#include "cic_lcms.h"
#include "cic_color.h"

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
    const cic_matrix_transform *row_matrix;  // RGB/gray rows go through this fast-path transform when set,
    const cic_lcms_api *row_lcms_api;        // else through this lcms2 one (cic_jpeg_decoder_set_row_transform)
    void *row_lcms_transform;
};

// Installs the error manager: errors longjmp to err->jump, messages stay silent, warnings beyond
// `warning_limit` become an error.
void cic_jpeg_error_init(cic_error_mgr *err, long warning_limit);

// Points the decoder's libjpeg source at its suspending source manager (empty until input arrives).
void cic_jpeg_source_init(cic_jpeg_decoder *d);

// Rows just written by libjpeg, in place: CMYK to RGBA (through the profile's lcms2 transform when one is set,
// else the naive formula), RGB/gray to sRGB when a row transform is set.
void cic_jpeg_convert_rows(cic_jpeg_decoder *d, uint8_t *p, size_t pixels);

// Joins the saved APP2 ICC_PROFILE chunks into d->icc (owned), or leaves it NULL.
void cic_jpeg_collect_icc(cic_jpeg_decoder *d);

#endif
