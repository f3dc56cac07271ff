#ifndef TRANSFERD_CZLIB_SHIM_H
#define TRANSFERD_CZLIB_SHIM_H
#include <zlib.h>

// inflateInit2 is a macro (it passes ZLIB_VERSION and sizeof(z_stream)), which Swift does not import.
static inline int transferd_inflate_init2(z_streamp stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}

#endif
