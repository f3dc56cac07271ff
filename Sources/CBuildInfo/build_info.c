#include "build_info.h"

/* A C string macro is the one way SwiftPM passes a value computed by the manifest into code:
   Swift's -D defines carry no value. */
#ifndef TRANSFERD_BUILD_COMMIT
#define TRANSFERD_BUILD_COMMIT "unknown"
#endif

const char *transferd_build_commit(void) { return TRANSFERD_BUILD_COMMIT; }
