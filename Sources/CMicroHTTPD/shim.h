#ifndef TRANSFERD_CMICROHTTPD_SHIM_H
#define TRANSFERD_CMICROHTTPD_SHIM_H
// MHD_start_daemon is variadic; MHD_start_daemon_va imports and takes options via va_list
// (MHD_OPTION_ARRAY), so no wrapper is needed beyond the header itself.
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdarg.h>
#include <microhttpd.h>

#endif
