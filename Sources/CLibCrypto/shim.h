#ifndef TRANSFERD_CLIBCRYPTO_SHIM_H
#define TRANSFERD_CLIBCRYPTO_SHIM_H
// OpenSSL's libcrypto: the hashes, HMAC, ChaCha20-Poly1305 and random bytes transferd needs.
// libcurl links it already (libcurl4-openssl), so the process has one crypto library.
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#endif
