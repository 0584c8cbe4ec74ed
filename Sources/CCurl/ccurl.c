// The libcurl entry points, resolved from libcurl.so.4 through the symbol table below (cdl.h). Every wrapper
// calls through the table filled by ccurl_load; the Swift side calls nothing before a successful load.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "ccurl.h"
#include "cdl.h"

typedef int CURLcode;
typedef int CURLMcode;

// The leading fields of curl_version_info_data (curl/curl.h), up to CURLVERSION_SIXTH.
struct ccurl_version_info_data {
    int age;
    const char *version;
    unsigned int version_num;
    const char *host;
    int features;
    const char *ssl_version;
    long ssl_version_num;
    const char *libz_version;
    const char *const *protocols;
    const char *ares;        // CURLVERSION_SECOND
    int ares_num;
    const char *libidn;      // CURLVERSION_THIRD
    int iconv_ver_num;       // CURLVERSION_FOURTH
    const char *libssh_version;
    unsigned int brotli_ver_num;  // CURLVERSION_FIFTH
    const char *brotli_version;
    unsigned int nghttp2_ver_num; // CURLVERSION_SIXTH
    const char *nghttp2_version;
};

// CURLMsg (curl/multi.h).
struct ccurl_msg {
    int msg;  // CURLMSG_DONE = 1
    ccurl_easy *easy_handle;
    union {
        void *whatever;
        CURLcode result;
    } data;
};

struct ccurl_api {
    CURLcode (*global_init)(long flags);
    struct ccurl_version_info_data *(*version_info)(int age);
    ccurl_easy *(*easy_init)(void);
    void (*easy_cleanup)(ccurl_easy *);
    void (*easy_reset)(ccurl_easy *);
    CURLcode (*easy_setopt)(ccurl_easy *, int, ...);
    CURLcode (*easy_getinfo)(ccurl_easy *, int, ...);
    CURLcode (*easy_pause)(ccurl_easy *, int);
    const char *(*easy_strerror)(CURLcode);
    ccurl_slist *(*slist_append)(ccurl_slist *, const char *);
    void (*slist_free_all)(ccurl_slist *);
    ccurl_multi *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(ccurl_multi *);
    CURLMcode (*multi_setopt)(ccurl_multi *, int, ...);
    CURLMcode (*multi_add_handle)(ccurl_multi *, ccurl_easy *);
    CURLMcode (*multi_remove_handle)(ccurl_multi *, ccurl_easy *);
    CURLMcode (*multi_perform)(ccurl_multi *, int *);
    CURLMcode (*multi_poll)(ccurl_multi *, void *extra_fds, unsigned int extra_nfds, int timeout_ms, int *numfds);
    CURLMcode (*multi_wakeup)(ccurl_multi *);
    struct ccurl_msg *(*multi_info_read)(ccurl_multi *, int *);
    const char *(*multi_strerror)(CURLMcode);
};

static struct ccurl_api api;

#define CCURL_GLOBAL_DEFAULT 3L        // CURL_GLOBAL_ALL (curl/curl.h)
#define CCURLVERSION_SIXTH 5
#define CCURL_MINIMUM_VERSION 0x075000 // 7.80.0: curl_multi_poll/wakeup (7.68) and CURLOPT_PREREQFUNCTION

static const cdl_symbol curl_symbols[] = {
    CDL_REQUIRED(struct ccurl_api, global_init, "curl_global_init"),
    CDL_REQUIRED(struct ccurl_api, version_info, "curl_version_info"),
    CDL_REQUIRED(struct ccurl_api, easy_init, "curl_easy_init"),
    CDL_REQUIRED(struct ccurl_api, easy_cleanup, "curl_easy_cleanup"),
    CDL_REQUIRED(struct ccurl_api, easy_reset, "curl_easy_reset"),
    CDL_REQUIRED(struct ccurl_api, easy_setopt, "curl_easy_setopt"),
    CDL_REQUIRED(struct ccurl_api, easy_getinfo, "curl_easy_getinfo"),
    CDL_REQUIRED(struct ccurl_api, easy_pause, "curl_easy_pause"),
    CDL_REQUIRED(struct ccurl_api, easy_strerror, "curl_easy_strerror"),
    CDL_REQUIRED(struct ccurl_api, slist_append, "curl_slist_append"),
    CDL_REQUIRED(struct ccurl_api, slist_free_all, "curl_slist_free_all"),
    CDL_REQUIRED(struct ccurl_api, multi_init, "curl_multi_init"),
    CDL_REQUIRED(struct ccurl_api, multi_cleanup, "curl_multi_cleanup"),
    CDL_REQUIRED(struct ccurl_api, multi_setopt, "curl_multi_setopt"),
    CDL_REQUIRED(struct ccurl_api, multi_add_handle, "curl_multi_add_handle"),
    CDL_REQUIRED(struct ccurl_api, multi_remove_handle, "curl_multi_remove_handle"),
    CDL_REQUIRED(struct ccurl_api, multi_perform, "curl_multi_perform"),
    CDL_REQUIRED(struct ccurl_api, multi_poll, "curl_multi_poll"),
    CDL_REQUIRED(struct ccurl_api, multi_wakeup, "curl_multi_wakeup"),
    CDL_REQUIRED(struct ccurl_api, multi_info_read, "curl_multi_info_read"),
    CDL_REQUIRED(struct ccurl_api, multi_strerror, "curl_multi_strerror"),
};

int ccurl_load(void *dl_handle, char *reason, size_t reason_len) {
    struct ccurl_api loaded;
    memset(&loaded, 0, sizeof loaded);
    if (cdl_resolve(dl_handle, curl_symbols, CDL_COUNT(curl_symbols), &loaded, reason, reason_len) != 0) {
        // Only an old libcurl lacks one of these (curl_multi_wakeup came in 7.68).
        size_t length = strlen(reason);
        snprintf(reason + length, reason_len - length, " (libcurl too old?)");
        return -1;
    }
    struct ccurl_version_info_data *info = loaded.version_info(CCURLVERSION_SIXTH);
    if (!info || info->version_num < CCURL_MINIMUM_VERSION) {
        snprintf(reason, reason_len, "libcurl %s is too old: 7.80.0 or newer is needed",
                 info && info->version ? info->version : "(unknown version)");
        return -1;
    }
    // curl_global_init is not thread-safe before 7.84; the Swift side calls ccurl_load once, before any
    // other libcurl use of the package. (FoundationNetworking initialises the same library the same way.)
    CURLcode code = loaded.global_init(CCURL_GLOBAL_DEFAULT);
    if (code != 0) {
        snprintf(reason, reason_len, "curl_global_init failed: %s", loaded.easy_strerror(code));
        return -1;
    }
    api = loaded;
    return 0;
}

void ccurl_version_info(ccurl_version *out) {
    memset(out, 0, sizeof *out);
    struct ccurl_version_info_data *info = api.version_info(CCURLVERSION_SIXTH);
    if (!info) return;
    out->version = info->version;
    out->version_num = info->version_num;
    out->features = info->features;
    out->ssl_version = info->ssl_version;
    out->libz_version = info->libz_version;
    if (info->age >= 4) out->brotli_version = info->brotli_version;
    if (info->age >= 5) out->nghttp2_version = info->nghttp2_version;
}

ccurl_easy *ccurl_easy_init(void) { return api.easy_init(); }
void ccurl_easy_cleanup(ccurl_easy *easy) { api.easy_cleanup(easy); }
void ccurl_easy_reset(ccurl_easy *easy) { api.easy_reset(easy); }
int ccurl_easy_setopt_long(ccurl_easy *easy, int option, long value) { return api.easy_setopt(easy, option, value); }
int ccurl_easy_setopt_off(ccurl_easy *easy, int option, int64_t value) {
    return api.easy_setopt(easy, option, (long long)value);  // curl_off_t is 64-bit on every supported platform
}
int ccurl_easy_setopt_pointer(ccurl_easy *easy, int option, const void *value) {
    return api.easy_setopt(easy, option, value);
}
int ccurl_easy_setopt_data_callback(ccurl_easy *easy, int option, ccurl_data_callback callback) {
    return api.easy_setopt(easy, option, callback);
}
int ccurl_easy_setopt_prereq_callback(ccurl_easy *easy, int option, ccurl_prereq_callback callback) {
    return api.easy_setopt(easy, option, callback);
}
int ccurl_easy_getinfo_long(ccurl_easy *easy, int info, long *value) { return api.easy_getinfo(easy, info, value); }
int ccurl_easy_getinfo_off(ccurl_easy *easy, int info, int64_t *value) {
    long long result = 0;
    int code = api.easy_getinfo(easy, info, &result);
    *value = (int64_t)result;
    return code;
}
int ccurl_easy_getinfo_string(ccurl_easy *easy, int info, const char **value) {
    return api.easy_getinfo(easy, info, value);
}
int ccurl_easy_pause(ccurl_easy *easy, int bitmask) { return api.easy_pause(easy, bitmask); }
const char *ccurl_easy_strerror(int code) { return api.easy_strerror(code); }
ccurl_slist *ccurl_slist_append(ccurl_slist *list, const char *string) { return api.slist_append(list, string); }
void ccurl_slist_free_all(ccurl_slist *list) { api.slist_free_all(list); }

ccurl_multi *ccurl_multi_init(void) { return api.multi_init(); }
int ccurl_multi_cleanup(ccurl_multi *multi) { return api.multi_cleanup(multi); }
int ccurl_multi_setopt_long(ccurl_multi *multi, int option, long value) {
    return api.multi_setopt(multi, option, value);
}
int ccurl_multi_add_handle(ccurl_multi *multi, ccurl_easy *easy) { return api.multi_add_handle(multi, easy); }
int ccurl_multi_remove_handle(ccurl_multi *multi, ccurl_easy *easy) { return api.multi_remove_handle(multi, easy); }
int ccurl_multi_perform(ccurl_multi *multi, int *running) { return api.multi_perform(multi, running); }
int ccurl_multi_poll(ccurl_multi *multi, int timeout_ms, int *numfds) {
    return api.multi_poll(multi, NULL, 0, timeout_ms, numfds);
}
int ccurl_multi_wakeup(ccurl_multi *multi) { return api.multi_wakeup(multi); }
int ccurl_multi_next_done(ccurl_multi *multi, ccurl_easy **easy, int *result) {
    int left = 0;
    struct ccurl_msg *message;
    while ((message = api.multi_info_read(multi, &left)) != NULL) {
        if (message->msg == 1) {  // CURLMSG_DONE
            *easy = message->easy_handle;
            *result = message->data.result;
            return 1;
        }
    }
    return 0;
}
const char *ccurl_multi_strerror(int code) { return api.multi_strerror(code); }

void ccurl_name_current_thread(const char *name) {
#if defined(__linux__)
    pthread_setname_np(pthread_self(), name);
#else
    (void)name;
#endif
}
