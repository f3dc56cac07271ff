#ifndef TRANSFERD_CLIBPQ_SHIM_H
#define TRANSFERD_CLIBPQ_SHIM_H
// PostgreSQL's own client library (Debian's libpq-dev); the header lives under
// /usr/include/postgresql, which pkg-config's libpq.pc adds.
#include <libpq-fe.h>
#endif
