// hiredis through dlopen: the few entry points the shared HTTP cache's Redis client uses, declared here so
// that no hiredis header is needed to build. Two ABIs exist in the wild and both are handled in chiredis.c:
// hiredis 0.14 (Debian 12's libhiredis.so.0.14) and hiredis 1.x (libhiredis.so.1.1.0), whose `redisReply`
// and `redisContext` structures differ (1.x added `dval`/`vtype` to the reply and a function table in front
// of the context). Swift never touches a hiredis structure: replies are read through `chiredis_reply_view`.
#ifndef CHIREDIS_H
#define CHIREDIS_H

#include <stddef.h>

/// A `redisContext *` (opaque: its layout depends on the loaded library).
typedef struct chiredis_context chiredis_context;

/// Reply types (hiredis `REDIS_REPLY_*`, the same numbers in 0.14 and 1.x for the RESP2 types).
enum {
    CHIREDIS_REPLY_STRING = 1,
    CHIREDIS_REPLY_ARRAY = 2,
    CHIREDIS_REPLY_INTEGER = 3,
    CHIREDIS_REPLY_NIL = 4,
    CHIREDIS_REPLY_STATUS = 5,
    CHIREDIS_REPLY_ERROR = 6,
};

/// Context error codes (hiredis `REDIS_ERR_*`).
enum {
    CHIREDIS_ERR_IO = 1,
    CHIREDIS_ERR_EOF = 3,
    CHIREDIS_ERR_PROTOCOL = 4,
    CHIREDIS_ERR_OOM = 5,
    CHIREDIS_ERR_TIMEOUT = 6,
    CHIREDIS_ERR_OTHER = 2,
};

/// One reply's fields, whatever the library's layout. `str` (for strings, statuses and errors) points into
/// the reply and lives as long as it.
typedef struct {
    int type;
    long long integer;
    const char *str;
    size_t len;
    size_t elements;
} chiredis_reply_view;

/// Opens `soname` (a soname or a path), resolves the entry points and finds which ABI it has. Returns 0, or
/// -1 with the reason in `reason`. The first successful load wins for the process; later calls return 0
/// at once. The library is never closed.
int chiredis_load(const char *soname, char *reason, size_t reason_len);

/// The major ABI of the loaded library: 0 (hiredis 0.x) or 1 (hiredis 1.x); -1 before a load.
int chiredis_abi(void);

/// Connects to `host:port` within `timeout_ms` (resolution, TCP connect). NULL on failure, with hiredis's
/// error code and message in `err`/`errstr`.
chiredis_context *chiredis_connect(const char *host, int port, int timeout_ms, int *err, char *errstr, size_t errlen);

/// Sets the read and write timeout of every later call on `context` (SO_RCVTIMEO/SO_SNDTIMEO). 0 on success.
int chiredis_set_timeout(chiredis_context *context, int timeout_ms);

/// Queues one command (binary-safe arguments) without sending it: pipelining. 0 on success.
int chiredis_append(chiredis_context *context, int argc, const char **argv, const size_t *argvlen);

/// Sends what is queued and reads the next reply (blocking, within the timeout). 0 with `*reply` set (free it
/// with `chiredis_free_reply`), or -1 with the context's error set: the context is then unusable. SIGPIPE
/// raised by a write to a closed connection is blocked and discarded for the calling thread.
int chiredis_get_reply(chiredis_context *context, void **reply);

/// The context's error code (0: none) and message.
int chiredis_context_error(const chiredis_context *context, char *errstr, size_t errlen);

void chiredis_free(chiredis_context *context);

void chiredis_reply_view_of(const void *reply, chiredis_reply_view *out);
/// Element `index` of an array reply (NULL when out of range or not an array).
const void *chiredis_reply_element(const void *reply, size_t index);
void chiredis_free_reply(void *reply);

#endif
