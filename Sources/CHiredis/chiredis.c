// hiredis entry points resolved with dlsym (see chiredis.h). Both ABIs' structure layouts are declared
// below, copied from the public headers of hiredis 0.14.1 and 1.1.0 (hiredis.h, read.h); only their
// leading fields are read.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include "chiredis.h"

// redisReply of hiredis 0.14.
struct reply_v0 {
    int type;
    long long integer;
    size_t len;
    char *str;
    size_t elements;
    struct reply_v0 **element;
};

// redisReply of hiredis 1.x (1.0 through 1.4): `dval` and `vtype` were added for RESP3.
struct reply_v1 {
    int type;
    long long integer;
    double dval;
    size_t len;
    char *str;
    char vtype[4];
    size_t elements;
    struct reply_v1 **element;
};

// The leading fields of redisContext: 0.14 starts with the error, 1.x with a function table.
struct context_v0 {
    int err;
    char errstr[128];
    int fd;
};
struct context_v1 {
    const void *funcs;
    int err;
    char errstr[128];
    int fd;
};

struct chiredis_api {
    void *(*connect_with_timeout)(const char *ip, int port, const struct timeval tv);
    int (*set_timeout)(void *context, const struct timeval tv);
    int (*append_argv)(void *context, int argc, const char **argv, const size_t *argvlen);
    int (*get_reply)(void *context, void **reply);
    void (*free_context)(void *context);
    void (*free_reply)(void *reply);
};

static struct chiredis_api api;
static int abi = -1;
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

#define RESOLVE(field, name)                                                                 \
    do {                                                                                     \
        *(void **)(&loaded.field) = dlsym(handle, name);                                     \
        if (!loaded.field) {                                                                 \
            snprintf(reason, reason_len, "%s has no symbol %s (not hiredis?)", soname, name); \
            pthread_mutex_unlock(&load_lock);                                                \
            return -1;                                                                       \
        }                                                                                    \
    } while (0)

int chiredis_load(const char *soname, char *reason, size_t reason_len) {
    pthread_mutex_lock(&load_lock);
    if (abi >= 0) {
        pthread_mutex_unlock(&load_lock);
        return 0;
    }
    void *handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *why = dlerror();
        snprintf(reason, reason_len, "%s", why ? why : "dlopen failed");
        pthread_mutex_unlock(&load_lock);
        return -1;
    }
    struct chiredis_api loaded;
    memset(&loaded, 0, sizeof loaded);
    RESOLVE(connect_with_timeout, "redisConnectWithTimeout");
    RESOLVE(set_timeout, "redisSetTimeout");
    RESOLVE(append_argv, "redisAppendCommandArgv");
    RESOLVE(get_reply, "redisGetReply");
    RESOLVE(free_context, "redisFree");
    RESOLVE(free_reply, "freeReplyObject");
    // redisConnectWithOptions arrived with 1.0, together with the new layouts: its presence tells them apart
    // whatever the file is called.
    int found = dlsym(handle, "redisConnectWithOptions") != NULL ? 1 : 0;
    api = loaded;
    abi = found;
    pthread_mutex_unlock(&load_lock);
    return 0;
}

int chiredis_abi(void) {
    pthread_mutex_lock(&load_lock);
    int value = abi;
    pthread_mutex_unlock(&load_lock);
    return value;
}

static struct timeval timeval_of(int ms) {
    struct timeval tv;
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    return tv;
}

int chiredis_context_error(const chiredis_context *context, char *errstr, size_t errlen) {
    int err;
    const char *message;
    if (abi == 1) {
        const struct context_v1 *c = (const struct context_v1 *)context;
        err = c->err;
        message = c->errstr;
    } else {
        const struct context_v0 *c = (const struct context_v0 *)context;
        err = c->err;
        message = c->errstr;
    }
    if (errstr && errlen > 0) snprintf(errstr, errlen, "%.127s", err ? message : "");
    return err;
}

chiredis_context *chiredis_connect(const char *host, int port, int timeout_ms, int *err, char *errstr, size_t errlen) {
    void *context = api.connect_with_timeout(host, port, timeval_of(timeout_ms));
    if (!context) {
        *err = CHIREDIS_ERR_OOM;
        snprintf(errstr, errlen, "cannot allocate a hiredis context");
        return NULL;
    }
    *err = chiredis_context_error((chiredis_context *)context, errstr, errlen);
    if (*err != 0) {
        api.free_context(context);
        return NULL;
    }
    // hiredis opens its socket without close-on-exec: a process the host spawns would inherit the connection
    // and hold it open after the pool closed it.
    int fd = abi == 1 ? ((const struct context_v1 *)context)->fd : ((const struct context_v0 *)context)->fd;
    if (fd >= 0) fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
    return (chiredis_context *)context;
}

int chiredis_set_timeout(chiredis_context *context, int timeout_ms) {
    return api.set_timeout(context, timeval_of(timeout_ms)) == 0 ? 0 : -1;
}

int chiredis_append(chiredis_context *context, int argc, const char **argv, const size_t *argvlen) {
    return api.append_argv(context, argc, argv, argvlen) == 0 ? 0 : -1;
}

// hiredis writes with write()/send() without MSG_NOSIGNAL: a server that closed the connection would raise
// SIGPIPE and kill the process. The signal is blocked for this thread around the call, and one raised by
// the call is taken off the pending set before the mask is restored (a SIGPIPE already pending for another
// reason is left alone).
int chiredis_get_reply(chiredis_context *context, void **reply) {
    sigset_t pipe_set, old_set, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigemptyset(&pending);
    sigpending(&pending);
    int was_pending = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old_set);
    int saved_errno = errno;
    int status = api.get_reply(context, reply);
    if (!was_pending) {
        sigemptyset(&pending);
        sigpending(&pending);
        if (sigismember(&pending, SIGPIPE)) {
            struct timespec zero = {0, 0};
            // Bounded: at most one SIGPIPE can be pending (standard signals do not queue).
            (void)sigtimedwait(&pipe_set, NULL, &zero);
        }
    }
    pthread_sigmask(SIG_SETMASK, &old_set, NULL);
    errno = saved_errno;
    if (status != 0) {
        *reply = NULL;
        return -1;
    }
    return 0;
}

void chiredis_free(chiredis_context *context) {
    if (context) api.free_context(context);
}

void chiredis_reply_view_of(const void *reply, chiredis_reply_view *out) {
    memset(out, 0, sizeof *out);
    if (!reply) return;
    if (abi == 1) {
        const struct reply_v1 *r = (const struct reply_v1 *)reply;
        out->type = r->type;
        out->integer = r->integer;
        out->str = r->str;
        out->len = r->len;
        out->elements = r->type == CHIREDIS_REPLY_ARRAY ? r->elements : 0;
    } else {
        const struct reply_v0 *r = (const struct reply_v0 *)reply;
        out->type = r->type;
        out->integer = r->integer;
        out->str = r->str;
        out->len = r->len;
        out->elements = r->type == CHIREDIS_REPLY_ARRAY ? r->elements : 0;
    }
}

const void *chiredis_reply_element(const void *reply, size_t index) {
    if (!reply) return NULL;
    if (abi == 1) {
        const struct reply_v1 *r = (const struct reply_v1 *)reply;
        return r->type == CHIREDIS_REPLY_ARRAY && index < r->elements ? r->element[index] : NULL;
    }
    const struct reply_v0 *r = (const struct reply_v0 *)reply;
    return r->type == CHIREDIS_REPLY_ARRAY && index < r->elements ? r->element[index] : NULL;
}

void chiredis_free_reply(void *reply) {
    if (reply) api.free_reply(reply);
}
