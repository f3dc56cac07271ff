#ifndef TRANSFERD_BUILD_INFO_H
#define TRANSFERD_BUILD_INFO_H

/* The git commit the binaries were built from, set by Package.swift (TRANSFERD_BUILD_COMMIT in
   the environment, else the package's git checkout), or "unknown". */
const char *transferd_build_commit(void);

#endif
