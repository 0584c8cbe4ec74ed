// PNG over libpng's progressive reader (png_process_data) and write API. libpng reports errors by
// longjmp; every setjmp lives here so that no longjmp ever crosses a Swift frame.
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <png.h>
#include "cic_png.h"

enum { CIC_PNG_MESSAGE_CAPACITY = 200 };
// libpng's limits for ancillary chunk storage: a hostile file cannot make it hold more than this.
static const png_alloc_size_t CIC_PNG_CHUNK_MALLOC_MAX = 8 * 1024 * 1024;
static const png_uint_32 CIC_PNG_CHUNK_CACHE_MAX = 128;
// Beyond this many warnings a file is treated as hostile (libpng keeps going after warnings).
static const int CIC_PNG_MAX_WARNINGS = 1000;

struct cic_png_decoder {
    png_structp png;
    png_infop info;
    uint64_t max_pixels;
    uint8_t *canvas;          // valid only during cic_png_decoder_feed
    size_t canvas_size;
    cic_png_progress progress;
    int warnings;
    int failed;
    cic_png_error_kind error_kind;
    char message[CIC_PNG_MESSAGE_CAPACITY];
};

static void cic_png_copy_message(char *dst, size_t capacity, const char *src) {
    if (capacity == 0) return;
    snprintf(dst, capacity, "%s", src ? src : "unknown libpng error");
}

static void cic_png_on_error(png_structp png, png_const_charp message) {
    cic_png_decoder *d = (cic_png_decoder *)png_get_error_ptr(png);
    if (d->error_kind == CIC_PNG_ERROR_NONE) {
        d->error_kind = CIC_PNG_ERROR_CORRUPT;
        cic_png_copy_message(d->message, sizeof d->message, message);
    }
    png_longjmp(png, 1);
}

static void cic_png_on_warning(png_structp png, png_const_charp message) {
    // Warnings are silent (bad ancillary chunks are simply skipped), with one exception: the push
    // reader reports ANY zlib data error in IDAT while rows are still missing as a benign "ADLER32
    // checksum mismatch" and then ends the image early. Adler-32 itself is not checked (see
    // PNG_IGNORE_ADLER32), so this is always damaged image data: fail like the sequential reader.
    if (message != NULL && strstr(message, "ADLER32") != NULL) {
        png_error(png, "IDAT: corrupt compressed data");
    }
    cic_png_decoder *d = (cic_png_decoder *)png_get_error_ptr(png);
    if (++d->warnings > CIC_PNG_MAX_WARNINGS) {
        png_error(png, "too many warnings");
    }
}

static void cic_png_fail(png_structp png, cic_png_decoder *d, cic_png_error_kind kind, const char *message) {
    d->error_kind = kind;
    cic_png_copy_message(d->message, sizeof d->message, message);
    png_error(png, message);
}

static void cic_png_on_info(png_structp png, png_infop info) {
    cic_png_decoder *d = (cic_png_decoder *)png_get_progressive_ptr(png);
    png_uint_32 width = 0, height = 0;
    int bit_depth = 0, color_type = 0, interlace = 0;
    png_get_IHDR(png, info, &width, &height, &bit_depth, &color_type, &interlace, NULL, NULL);
    d->progress.width = width;
    d->progress.height = height;
    if ((uint64_t)width * (uint64_t)height > d->max_pixels) {
        cic_png_fail(png, d, CIC_PNG_ERROR_TOO_LARGE, "image exceeds the pixel limit");
    }
    // Everything to RGBA8: palette, low-bit gray and tRNS expand (tRNS becomes alpha), 16-bit keeps
    // the high byte, gray becomes RGB, and an opaque alpha byte is added where none exists.
    png_set_expand(png);
    png_set_strip_16(png);
    png_set_gray_to_rgb(png);
    png_set_add_alpha(png, 0xFF, PNG_FILLER_AFTER);
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)width * 4) {
        cic_png_fail(png, d, CIC_PNG_ERROR_CORRUPT, "unsupported pixel layout");
    }
    if (d->canvas == NULL || d->canvas_size != (size_t)width * (size_t)height * 4) {
        cic_png_fail(png, d, CIC_PNG_ERROR_MEMORY, "no canvas for the image size");
    }
    d->progress.interlaced = passes > 1;
    d->progress.header_ready = 1;
}

static void cic_png_on_row(png_structp png, png_bytep new_row, png_uint_32 row, int pass) {
    cic_png_decoder *d = (cic_png_decoder *)png_get_progressive_ptr(png);
    // A later pass means every earlier pass is complete.
    if (pass > d->progress.passes_completed && pass <= 7) d->progress.passes_completed = pass;
    if (new_row == NULL || row >= d->progress.height || d->canvas == NULL) return;
    png_progressive_combine_row(png, d->canvas + (size_t)row * d->progress.width * 4, new_row);
    d->progress.any_rows = 1;
    if (!d->progress.interlaced && row + 1 > d->progress.rows_done) d->progress.rows_done = row + 1;
}

static void cic_png_on_end(png_structp png, png_infop info) {
    (void)info;
    cic_png_decoder *d = (cic_png_decoder *)png_get_progressive_ptr(png);
    if (!d->progress.interlaced && d->progress.rows_done < d->progress.height) {
        cic_png_fail(png, d, CIC_PNG_ERROR_CORRUPT, "IDAT: image data ends before the last row");
    }
    d->progress.finished = 1;
    d->progress.passes_completed = d->progress.interlaced ? 7 : 1;
    d->progress.rows_done = d->progress.height;
}

cic_png_decoder *cic_png_decoder_create(uint64_t max_pixels, int trusted_stream) {
    cic_png_decoder *d = calloc(1, sizeof *d);
    if (d == NULL) return NULL;
    d->max_pixels = max_pixels;
    d->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, d, cic_png_on_error, cic_png_on_warning);
    if (d->png == NULL) {
        free(d);
        return NULL;
    }
    d->info = png_create_info_struct(d->png);
    if (d->info == NULL) {
        png_destroy_read_struct(&d->png, NULL, NULL);
        free(d);
        return NULL;
    }
    if (setjmp(png_jmpbuf(d->png))) {
        png_destroy_read_struct(&d->png, &d->info, NULL);
        free(d);
        return NULL;
    }
    // Per-dimension limits (libpng checks them while reading IHDR); the product is checked in on_info.
    png_uint_32 dimension_max = max_pixels < PNG_UINT_31_MAX ? (png_uint_32)max_pixels : PNG_UINT_31_MAX;
    png_set_user_limits(d->png, dimension_max, dimension_max);
    png_set_chunk_malloc_max(d->png, CIC_PNG_CHUNK_MALLOC_MAX);
    png_set_chunk_cache_max(d->png, CIC_PNG_CHUNK_CACHE_MAX);
    // Chunks that do not change RGBA8 pixels are skipped unread: no colour management, and text or ICC
    // payloads cannot cost memory or time. eXIf is read by the caller's own chunk scan.
    static const png_byte skipped[] =
        "tEXt\0zTXt\0iTXt\0iCCP\0sPLT\0hIST\0pCAL\0sCAL\0sTER\0tIME\0pHYs\0oFFs\0gAMA\0cHRM\0sRGB\0bKGD\0eXIf\0sBIT";
    png_set_keep_unknown_chunks(d->png, PNG_HANDLE_CHUNK_NEVER, NULL, 0);
    png_set_keep_unknown_chunks(d->png, PNG_HANDLE_CHUNK_NEVER, skipped, (int)(sizeof skipped / 5));
    // The push reader drops the last row when zlib reports an Adler-32 mismatch at the end of IDAT
    // (the sequential reader keeps it); the checksum guards nothing the CRCs do not, so skip it.
    png_set_option(d->png, PNG_IGNORE_ADLER32, PNG_OPTION_ON);
    if (trusted_stream) png_set_crc_action(d->png, PNG_CRC_QUIET_USE, PNG_CRC_QUIET_USE);
    png_set_progressive_read_fn(d->png, d, cic_png_on_info, cic_png_on_row, cic_png_on_end);
    return d;
}

void cic_png_decoder_destroy(cic_png_decoder *d) {
    if (d == NULL) return;
    png_destroy_read_struct(&d->png, &d->info, NULL);
    free(d);
}

cic_png_status cic_png_decoder_feed(cic_png_decoder *d, const uint8_t *bytes, size_t count,
                                    uint8_t *canvas, size_t canvas_size) {
    if (d->failed) return CIC_PNG_FAILED;
    if (d->progress.finished) return CIC_PNG_DONE;
    if (count == 0) return CIC_PNG_NEED_MORE;
    d->canvas = canvas;
    d->canvas_size = canvas_size;
    if (setjmp(png_jmpbuf(d->png))) {
        d->canvas = NULL;
        d->failed = 1;
        if (d->error_kind == CIC_PNG_ERROR_NONE) d->error_kind = CIC_PNG_ERROR_CORRUPT;
        return CIC_PNG_FAILED;
    }
    png_process_data(d->png, d->info, (png_bytep)bytes, count);
    d->canvas = NULL;
    return d->progress.finished ? CIC_PNG_DONE : CIC_PNG_NEED_MORE;
}

void cic_png_decoder_get_progress(const cic_png_decoder *d, cic_png_progress *progress) {
    *progress = d->progress;
}

cic_png_error_kind cic_png_decoder_error_kind(const cic_png_decoder *d) { return d->error_kind; }

const char *cic_png_decoder_message(const cic_png_decoder *d) { return d->message; }

// MARK: - Encoding

typedef struct {
    uint8_t *data;
    size_t size;
    size_t capacity;
} cic_png_sink;

static void cic_png_sink_write(png_structp png, png_bytep bytes, size_t count) {
    cic_png_sink *sink = (cic_png_sink *)png_get_io_ptr(png);
    if (count > SIZE_MAX - sink->size) png_error(png, "output too large");
    if (sink->size + count > sink->capacity) {
        size_t capacity = sink->capacity ? sink->capacity : 4096;
        while (capacity < sink->size + count) {
            if (capacity > SIZE_MAX / 2) png_error(png, "output too large");
            capacity *= 2;
        }
        uint8_t *grown = realloc(sink->data, capacity);
        if (grown == NULL) png_error(png, "out of memory");
        sink->data = grown;
        sink->capacity = capacity;
    }
    memcpy(sink->data + sink->size, bytes, count);
    sink->size += count;
}

static void cic_png_sink_flush(png_structp png) { (void)png; }

typedef struct {
    char *message;
    size_t capacity;
} cic_png_write_errors;

static void cic_png_on_write_error(png_structp png, png_const_charp message) {
    cic_png_write_errors *errors = (cic_png_write_errors *)png_get_error_ptr(png);
    cic_png_copy_message(errors->message, errors->capacity, message);
    png_longjmp(png, 1);
}

static void cic_png_on_write_warning(png_structp png, png_const_charp message) {
    (void)png;
    (void)message;
}

int cic_png_encode_rgba(const uint8_t *rgba, uint32_t width, uint32_t height, int keep_alpha,
                        uint8_t **out, size_t *out_size, char *message, size_t message_capacity) {
    return cic_png_encode_rgba_level(rgba, width, height, keep_alpha, -1, out, out_size, message, message_capacity);
}

int cic_png_encode_rgba_level(const uint8_t *rgba, uint32_t width, uint32_t height, int keep_alpha, int level,
                              uint8_t **out, size_t *out_size, char *message, size_t message_capacity) {
    *out = NULL;
    *out_size = 0;
    cic_png_write_errors errors = {message, message_capacity};
    if (width == 0 || height == 0 || width > PNG_UINT_31_MAX || height > PNG_UINT_31_MAX) {
        cic_png_copy_message(message, message_capacity, "invalid image size");
        return -1;
    }
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &errors, cic_png_on_write_error,
                                              cic_png_on_write_warning);
    if (png == NULL) {
        cic_png_copy_message(message, message_capacity, "out of memory");
        return -1;
    }
    png_infop info = png_create_info_struct(png);
    // volatile: modified between setjmp and a possible longjmp.
    cic_png_sink sink = {NULL, 0, 0};
    cic_png_sink *volatile sink_ptr = &sink;
    if (info == NULL || setjmp(png_jmpbuf(png))) {
        if (info == NULL) cic_png_copy_message(message, message_capacity, "out of memory");
        png_destroy_write_struct(&png, &info);
        free(sink_ptr->data);
        return -1;
    }
    png_set_write_fn(png, sink_ptr, cic_png_sink_write, cic_png_sink_flush);
    if (level >= 0 && level <= 9) png_set_compression_level(png, level);
    png_set_IHDR(png, info, width, height, 8, keep_alpha ? PNG_COLOR_TYPE_RGB_ALPHA : PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    // For RGB output the fourth byte of every pixel is dropped while writing.
    if (!keep_alpha) png_set_filler(png, 0, PNG_FILLER_AFTER);
    for (uint32_t y = 0; y < height; y++) {
        png_write_row(png, (png_const_bytep)(rgba + (size_t)y * width * 4));
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    *out = sink.data;
    *out_size = sink.size;
    return 0;
}

void cic_png_free(void *pointer) { free(pointer); }
