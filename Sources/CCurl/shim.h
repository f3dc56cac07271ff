#ifndef TRANSFERD_CCURL_SHIM_H
#define TRANSFERD_CCURL_SHIM_H
// Swift cannot call C variadic functions, so curl_easy_setopt, curl_easy_getinfo,
// curl_multi_setopt and curl_share_setopt get one static inline wrapper per C *signature* of their third argument.
#include <curl/curl.h>
#include <openssl/ssl.h>

static inline CURLcode transferd_easy_setopt_long(CURL *h, CURLoption o, long v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode transferd_easy_setopt_off_t(CURL *h, CURLoption o, curl_off_t v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode transferd_easy_setopt_ptr(CURL *h, CURLoption o, const void *v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode transferd_easy_setopt_write_callback(CURL *h, CURLoption o, curl_write_callback v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode transferd_easy_setopt_read_callback(CURL *h, CURLoption o, curl_read_callback v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode transferd_easy_setopt_seek_callback(CURL *h, CURLoption o, curl_seek_callback v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode transferd_easy_setopt_xferinfo_callback(CURL *h, CURLoption o, curl_xferinfo_callback v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode transferd_easy_setopt_sockopt_callback(CURL *h, CURLoption o, curl_sockopt_callback v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode transferd_easy_setopt_closesocket_callback(CURL *h, CURLoption o, curl_closesocket_callback v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode transferd_easy_setopt_opensocket_callback(CURL *h, CURLoption o, curl_opensocket_callback v) { return curl_easy_setopt(h, o, v); }
static inline CURLcode transferd_easy_setopt_prereq_callback(CURL *h, CURLoption o, curl_prereq_callback v) { return curl_easy_setopt(h, o, v); }

static inline CURLcode transferd_easy_getinfo_long(CURL *h, CURLINFO i, long *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode transferd_easy_getinfo_off_t(CURL *h, CURLINFO i, curl_off_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode transferd_easy_getinfo_socket(CURL *h, CURLINFO i, curl_socket_t *v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode transferd_easy_getinfo_string(CURL *h, CURLINFO i, char **v) { return curl_easy_getinfo(h, i, v); }
static inline CURLcode transferd_easy_getinfo_certinfo(CURL *h, struct curl_certinfo **v) { return curl_easy_getinfo(h, CURLINFO_CERTINFO, v); }

// The TLS version (SSL_version: 0x0303 is TLS 1.2, 0x0304 TLS 1.3) and the IANA number of the
// cipher suite of the transfer's connection, or 0 and 0 when it has no OpenSSL session (no TLS,
// or no connection now). libcurl hands out OpenSSL's SSL* only through CURLINFO_TLS_SSL_PTR,
// which is why OpenSSL is called here and nowhere else.
static inline void transferd_easy_tls_session(CURL *h, int *version, unsigned short *cipherSuite) {
    struct curl_tlssessioninfo *info = NULL;
    *version = 0;
    *cipherSuite = 0;
    if (curl_easy_getinfo(h, CURLINFO_TLS_SSL_PTR, &info) != CURLE_OK || info == NULL) return;
    if (info->backend != CURLSSLBACKEND_OPENSSL || info->internals == NULL) return;
    SSL *ssl = (SSL *)info->internals;
    *version = SSL_version(ssl);
    const SSL_CIPHER *cipher = SSL_get_current_cipher(ssl);
    if (cipher != NULL) *cipherSuite = SSL_CIPHER_get_protocol_id(cipher);
}

static inline CURLSHcode transferd_share_setopt_long(CURLSH *s, CURLSHoption o, long v) { return curl_share_setopt(s, o, v); }

static inline CURLMcode transferd_multi_setopt_long(CURLM *m, CURLMoption o, long v) { return curl_multi_setopt(m, o, v); }

#endif
