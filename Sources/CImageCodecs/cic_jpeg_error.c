// The libjpeg error manager shared by the decoder and the encoder (see cic_jpeg_internal.h): fatal errors
// longjmp back to the cic_* call that made the libjpeg call instead of calling exit().
#include <stdio.h>
#include <setjmp.h>
#include <jpeglib.h>
#include <jerror.h>
#include "cic_jpeg_internal.h"

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

void cic_jpeg_error_init(cic_error_mgr *err, long warning_limit) {
    jpeg_std_error(&err->pub);
    err->pub.error_exit = cic_error_exit;
    err->pub.output_message = cic_output_message;
    err->pub.emit_message = cic_emit_message;
    err->warning_limit = warning_limit;
    err->message[0] = 0;
}
