#!/usr/bin/env bash
# The start command: bash scripts/run.sh [transferd arguments...]
#
# Installs the missing build dependencies (Debian packages), builds the release binary and
# replaces itself with it. The daemon listens on 127.0.0.1:8080 and keeps its state in ./data
# unless told otherwise (see transferd --help).
set -euo pipefail

SCRIPT_NAME="run.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/common.sh
source scripts/lib/common.sh

ensure_swift
ensure_apt_packages "${BUILD_APT_PACKAGES[@]}" publicsuffix  # the cookie jars refuse supercookies with it

log "swift build -c release --product transferd"
# Build output goes to stderr: stdout belongs to the daemon.
swift build -c release --product transferd >&2
binary="$(swift build -c release --show-bin-path)/transferd"

log "exec $binary $*"
exec "$binary" "$@"
