#ifndef TRANSFERD_CMICROHTTPD_SHIM_H
#define TRANSFERD_CMICROHTTPD_SHIM_H
// MHD_start_daemon is variadic; MHD_start_daemon_va imports and takes options via va_list
// (MHD_OPTION_ARRAY), so it needs no wrapper. The two info getters below are variadic too
// (Swift cannot call them) and are wrapped once per C signature, without the unused `...`.
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <stdint.h>
#include <stdarg.h>
#include <microhttpd.h>

/// MHD_get_daemon_info without the variadic tail (no info type of 0.9.75 reads one).
/// - SeeAlso: https://www.gnu.org/software/libmicrohttpd/manual/html_node/microhttpd_002dinfo-daemon.html
static inline const union MHD_DaemonInfo *
mhd_get_daemon_info(struct MHD_Daemon *daemon, enum MHD_DaemonInfoType info_type) {
    return MHD_get_daemon_info(daemon, info_type);
}

/// MHD_get_connection_info without the variadic tail (no info type of 0.9.75 reads one).
/// - SeeAlso: https://www.gnu.org/software/libmicrohttpd/manual/html_node/microhttpd_002dinfo-conn.html
static inline const union MHD_ConnectionInfo *
mhd_get_connection_info(struct MHD_Connection *connection, enum MHD_ConnectionInfoType info_type) {
    return MHD_get_connection_info(connection, info_type);
}

/// MHD_set_response_options with flags only (the option list ends at once).
/// - SeeAlso: https://www.gnu.org/software/libmicrohttpd/manual/html_node/microhttpd_002dresponse-options.html
static inline enum MHD_Result
mhd_set_response_flags(struct MHD_Response *response, enum MHD_ResponseFlags flags) {
    return MHD_set_response_options(response, flags, MHD_RO_END);
}

#endif
