// The JPEG encoder: RGBA rows into a memory destination that doubles as it fills. libjpeg errors longjmp
// back through the shared error manager (cic_jpeg_internal.h) and come back as 0 with a message.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>
#include <jerror.h>
#include "cic_jpeg_internal.h"

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
    cic_jpeg_error_init(&e->err, CIC_JPEG_MAX_WARNINGS);
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
