#ifndef TRANSFERD_CSQLITE_SHIM_H
#define TRANSFERD_CSQLITE_SHIM_H
#include <sqlite3.h>

// SQLITE_TRANSIENT is a cast macro that Swift does not import: SQLite copies the bound value.
static inline sqlite3_destructor_type transferd_sqlite_transient(void) { return SQLITE_TRANSIENT; }

#endif
