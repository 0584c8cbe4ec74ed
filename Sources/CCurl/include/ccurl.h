// libcurl through dlopen("libcurl.so.4"): the few entry points and constants the curl transport uses,
// declared here so that no curl header is needed to build. libcurl's setopt/getinfo are variadic, which
// Swift cannot call, so typed wrappers live in ccurl.c. Constants are copied from curl 7.88's public
// headers (curl/curl.h, curl/multi.h); they are part of libcurl's stable ABI.
#ifndef CCURL_H
#define CCURL_H

#include <stddef.h>
#include <stdint.h>

/// A `CURL *` easy handle and a `CURLM *` multi handle (opaque).
typedef struct ccurl_easy ccurl_easy;
typedef struct ccurl_multi ccurl_multi;

/// Same layout as `struct curl_slist`.
typedef struct ccurl_slist {
    char *data;
    struct ccurl_slist *next;
} ccurl_slist;

/// Resolves every entry point from `dl_handle` (libcurl.so.4, opened by the Swift side's DynamicLibrary), checks the
/// version and calls curl_global_init. Returns 0, or -1 with the reason in `reason`. Call once per handle (the Swift
/// side caches the result); the library is never closed.
int ccurl_load(void *dl_handle, char *reason, size_t reason_len);

/// curl_version_info(), the fields the transport reports (strings may be NULL).
typedef struct {
    const char *version;
    unsigned int version_num;  // 0xXXYYZZ
    int features;              // CCURL_VERSION_* bits
    const char *ssl_version;
    const char *libz_version;
    const char *brotli_version;
    const char *nghttp2_version;
} ccurl_version;
void ccurl_version_info(ccurl_version *out);

// ---- easy interface ----
/// curl_write_callback / curl header callback: (data, 1, length, userdata) -> bytes taken.
typedef size_t (*ccurl_data_callback)(char *data, size_t size, size_t count, void *userdata);
/// curl_prereq_callback (7.80): called right before each request is sent, also when libcurl re-sends
/// one by itself on a fresh connection. Return 0 to go on.
typedef int (*ccurl_prereq_callback)(void *userdata, char *primary_ip, char *local_ip, int primary_port, int local_port);

ccurl_easy *ccurl_easy_init(void);
void ccurl_easy_cleanup(ccurl_easy *easy);
void ccurl_easy_reset(ccurl_easy *easy);
int ccurl_easy_setopt_long(ccurl_easy *easy, int option, long value);
int ccurl_easy_setopt_off(ccurl_easy *easy, int option, int64_t value);
/// Strings (copied by libcurl), slists (NOT copied: keep them until the transfer ends), user pointers.
int ccurl_easy_setopt_pointer(ccurl_easy *easy, int option, const void *value);
int ccurl_easy_setopt_data_callback(ccurl_easy *easy, int option, ccurl_data_callback callback);
int ccurl_easy_setopt_prereq_callback(ccurl_easy *easy, int option, ccurl_prereq_callback callback);
int ccurl_easy_getinfo_long(ccurl_easy *easy, int info, long *value);
int ccurl_easy_getinfo_off(ccurl_easy *easy, int info, int64_t *value);
int ccurl_easy_getinfo_string(ccurl_easy *easy, int info, const char **value);
int ccurl_easy_pause(ccurl_easy *easy, int bitmask);
const char *ccurl_easy_strerror(int code);
ccurl_slist *ccurl_slist_append(ccurl_slist *list, const char *string);
void ccurl_slist_free_all(ccurl_slist *list);

// ---- multi interface ----
ccurl_multi *ccurl_multi_init(void);
int ccurl_multi_cleanup(ccurl_multi *multi);
int ccurl_multi_setopt_long(ccurl_multi *multi, int option, long value);
int ccurl_multi_add_handle(ccurl_multi *multi, ccurl_easy *easy);
int ccurl_multi_remove_handle(ccurl_multi *multi, ccurl_easy *easy);
int ccurl_multi_perform(ccurl_multi *multi, int *running);
/// curl_multi_poll without extra descriptors.
int ccurl_multi_poll(ccurl_multi *multi, int timeout_ms, int *numfds);
int ccurl_multi_wakeup(ccurl_multi *multi);
/// The next CURLMSG_DONE message: 1 with the handle and its CURLcode, or 0 when none is left.
int ccurl_multi_next_done(ccurl_multi *multi, ccurl_easy **easy, int *result);
const char *ccurl_multi_strerror(int code);

/// Names the calling thread (at most 15 characters on Linux), for debuggers and thread lists.
void ccurl_name_current_thread(const char *name);

// ---- constants (curl/curl.h, curl/multi.h of curl 7.88) ----
enum {
    // CURLoption: CURLOPTTYPE_LONG 0, OBJECTPOINT 10000, FUNCTIONPOINT 20000, OFF_T 30000.
    CCURLOPT_WRITEDATA = 10001,
    CCURLOPT_URL = 10002,
    CCURLOPT_PROXY = 10004,
    CCURLOPT_ERRORBUFFER = 10010,
    CCURLOPT_WRITEFUNCTION = 20011,
    CCURLOPT_LOW_SPEED_LIMIT = 19,
    CCURLOPT_LOW_SPEED_TIME = 20,
    CCURLOPT_HTTPHEADER = 10023,
    CCURLOPT_HEADERDATA = 10029,
    CCURLOPT_CUSTOMREQUEST = 10036,
    CCURLOPT_VERBOSE = 41,
    CCURLOPT_NOPROGRESS = 43,
    CCURLOPT_NOBODY = 44,
    CCURLOPT_FOLLOWLOCATION = 52,
    CCURLOPT_SSL_VERIFYPEER = 64,
    CCURLOPT_CAINFO = 10065,
    CCURLOPT_HEADERFUNCTION = 20079,
    CCURLOPT_HTTPGET = 80,
    CCURLOPT_SSL_VERIFYHOST = 81,
    CCURLOPT_HTTP_VERSION = 84,
    CCURLOPT_CAPATH = 10097,
    CCURLOPT_BUFFERSIZE = 98,
    CCURLOPT_NOSIGNAL = 99,
    CCURLOPT_ACCEPT_ENCODING = 10102,
    CCURLOPT_PRIVATE = 10103,
    CCURLOPT_PROXYAUTH = 111,
    CCURLOPT_POSTFIELDSIZE_LARGE = 30120,
    CCURLOPT_TCP_NODELAY = 121,
    CCURLOPT_CONNECTTIMEOUT_MS = 156,
    CCURLOPT_COPYPOSTFIELDS = 10165,
    CCURLOPT_PROXYUSERNAME = 10175,
    CCURLOPT_PROXYPASSWORD = 10176,
    CCURLOPT_NOPROXY = 10177,
    CCURLOPT_TCP_KEEPALIVE = 213,
    CCURLOPT_PINNEDPUBLICKEY = 10230,
    CCURLOPT_PIPEWAIT = 237,
    CCURLOPT_STREAM_WEIGHT = 239,
    CCURLOPT_SUPPRESS_CONNECT_HEADERS = 265,
    CCURLOPT_PREREQFUNCTION = 20312,
    CCURLOPT_PREREQDATA = 10313,
    CCURLOPT_PROTOCOLS = 181,  // a CURLPROTO_* bit mask (deprecated in 7.85 for _STR, still honoured)

    // CURLPROTO_*
    CCURLPROTO_HTTP = 1 << 0,
    CCURLPROTO_HTTPS = 1 << 1,
    // CURL_HTTP_VERSION_*
    CCURL_HTTP_VERSION_2TLS = 4,
    // CURLAUTH_BASIC
    CCURLAUTH_BASIC = 1,

    // CURLINFO: STRING 0x100000, LONG 0x200000, OFF_T 0x600000.
    CCURLINFO_RESPONSE_CODE = 0x200000 + 2,
    CCURLINFO_SIZE_UPLOAD_T = 0x600000 + 7,
    CCURLINFO_SIZE_DOWNLOAD_T = 0x600000 + 8,
    CCURLINFO_HEADER_SIZE = 0x200000 + 11,
    CCURLINFO_REQUEST_SIZE = 0x200000 + 12,
    CCURLINFO_SSL_VERIFYRESULT = 0x200000 + 13,
    CCURLINFO_HTTP_CONNECTCODE = 0x200000 + 22,
    CCURLINFO_OS_ERRNO = 0x200000 + 25,
    CCURLINFO_NUM_CONNECTS = 0x200000 + 26,
    CCURLINFO_PRIMARY_IP = 0x100000 + 32,
    CCURLINFO_PRIMARY_PORT = 0x200000 + 40,
    CCURLINFO_HTTP_VERSION = 0x200000 + 46,
    CCURLINFO_TOTAL_TIME_T = 0x600000 + 50,
    CCURLINFO_NAMELOOKUP_TIME_T = 0x600000 + 51,
    CCURLINFO_CONNECT_TIME_T = 0x600000 + 52,
    CCURLINFO_PRETRANSFER_TIME_T = 0x600000 + 53,
    CCURLINFO_STARTTRANSFER_TIME_T = 0x600000 + 54,
    CCURLINFO_APPCONNECT_TIME_T = 0x600000 + 56,

    // CURLcode values the transport maps (curl/curl.h).
    CCURLE_OK = 0,
    CCURLE_UNSUPPORTED_PROTOCOL = 1,
    CCURLE_URL_MALFORMAT = 3,
    CCURLE_COULDNT_RESOLVE_PROXY = 5,
    CCURLE_COULDNT_RESOLVE_HOST = 6,
    CCURLE_COULDNT_CONNECT = 7,
    CCURLE_WEIRD_SERVER_REPLY = 8,
    CCURLE_HTTP2 = 16,
    CCURLE_PARTIAL_FILE = 18,
    CCURLE_WRITE_ERROR = 23,
    CCURLE_OUT_OF_MEMORY = 27,
    CCURLE_OPERATION_TIMEDOUT = 28,
    CCURLE_SSL_CONNECT_ERROR = 35,
    CCURLE_ABORTED_BY_CALLBACK = 42,
    CCURLE_TOO_MANY_REDIRECTS = 47,
    CCURLE_GOT_NOTHING = 52,
    CCURLE_SEND_ERROR = 55,
    CCURLE_RECV_ERROR = 56,
    CCURLE_SSL_CERTPROBLEM = 58,
    CCURLE_SSL_CIPHER = 59,
    CCURLE_PEER_FAILED_VERIFICATION = 60,
    CCURLE_BAD_CONTENT_ENCODING = 61,
    CCURLE_FILESIZE_EXCEEDED = 63,
    CCURLE_SSL_CACERT_BADFILE = 77,
    CCURLE_SSL_SHUTDOWN_FAILED = 80,
    CCURLE_SSL_CRL_BADFILE = 82,
    CCURLE_SSL_ISSUER_ERROR = 83,
    CCURLE_SSL_PINNEDPUBKEYNOTMATCH = 90,
    CCURLE_SSL_INVALIDCERTSTATUS = 91,
    CCURLE_HTTP2_STREAM = 92,
    CCURLE_PROXY = 97,
    CCURLE_SSL_CLIENTCERT = 98,

    // CURLMoption (LONG)
    CCURLMOPT_PIPELINING = 3,
    CCURLMOPT_MAXCONNECTS = 6,
    CCURLMOPT_MAX_HOST_CONNECTIONS = 7,
    CCURLMOPT_MAX_TOTAL_CONNECTIONS = 13,
    CCURLMOPT_MAX_CONCURRENT_STREAMS = 16,
    CCURLPIPE_MULTIPLEX = 2,

    // curl_easy_pause bits; the write callback's pause return value.
    CCURLPAUSE_RECV = 1,
    CCURLPAUSE_CONT = 0,
    CCURL_WRITEFUNC_PAUSE = 0x10000001,

    // curl_version_info features
    CCURL_VERSION_IPV6 = 1 << 0,
    CCURL_VERSION_SSL = 1 << 2,
    CCURL_VERSION_LIBZ = 1 << 3,
    CCURL_VERSION_ASYNCHDNS = 1 << 7,
    CCURL_VERSION_HTTP2 = 1 << 16,
    CCURL_VERSION_HTTPS_PROXY = 1 << 21,
    CCURL_VERSION_BROTLI = 1 << 23,
    CCURL_VERSION_ZSTD = 1 << 26,
    CCURL_VERSION_THREADSAFE = 1 << 30,
};

#endif
