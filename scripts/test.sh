#!/usr/bin/env bash
# The test command: bash scripts/test.sh [swift test arguments...]
#
# On a new Debian bookworm machine with the Swift toolchain (at /opt/swift) and root, it
#   1. installs the missing Debian packages (build dependencies, nginx, curl, tcpdump for the DSCP
#      test, publicsuffix for the cookie jars, and Python if needed),
#   2. creates .build-peers/venv with the pinned httpbin and gunicorn (scripts/peers-requirements.txt),
#   3. starts the peers on 127.0.0.1 on free ports (httpbin under gunicorn, nginx serving files,
#      and for the proxy and TLS tests tinyproxy, microsocks and nginx over TLS with certificates
#      made now), waits until they answer, and exports their addresses (TRANSFERD_TEST_HTTPBIN, ...),
#   4. runs 'swift build --build-tests', then 'swift test' with this script's arguments,
#   5. stops the peers it started, by PID, however it exits.
# Exits with swift test's status. Peer logs are in .build-peers/logs.
#
# Environment:
#   TRANSFERD_TEST_ONLY_PEERS=1  start the peers, check each answers, stop them; no build, no tests
#                                (to check steps 1-3 and 5 while the package does not build).
#   TRANSFERD_SCRATCH_PATH=DIR   build in DIR (swift --scratch-path) instead of .build.
#
# Examples: bash scripts/test.sh
#           bash scripts/test.sh --filter TransferCoreTests
set -euo pipefail

SCRIPT_NAME="test.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/common.sh
source scripts/lib/common.sh
# shellcheck source=scripts/lib/peers.sh
source scripts/lib/peers.sh
# shellcheck source=scripts/lib/network-peers.sh
source scripts/lib/network-peers.sh

log "repository: $PWD"
ensure_swift
ensure_apt_packages "${BUILD_APT_PACKAGES[@]}" nginx-light curl tcpdump publicsuffix tinyproxy microsocks
ensure_python
ensure_peer_venv

# Stop the peers on every exit; turn SIGINT and SIGTERM into an exit so the EXIT trap runs.
trap 'stop_peers; remove_network_peer_files' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_httpbin
start_nginx
start_network_peers

if [ "${TRANSFERD_TEST_ONLY_PEERS:-0}" = "1" ]; then
    log "TRANSFERD_TEST_ONLY_PEERS=1: checking the peers, then stopping them"
    curl -fsS "$TRANSFERD_TEST_HTTPBIN/get?from=test.sh" >&2
    curl -fsS "$TRANSFERD_TEST_NGINX/files/hello.txt" >&2
    curl -fsS -o /dev/null -r 1000- -w "nginx range request: %{http_code}, %{size_download} bytes\n" \
        "$TRANSFERD_TEST_NGINX/files/1MiB.bin" >&2
    curl -fsS --cacert "$TRANSFERD_TEST_TLS_CA" --proxy "http://$TRANSFERD_TEST_HTTP_PROXY" "$TRANSFERD_TEST_TLS_VALID/files/hello.txt" >&2
    curl -fsS --proxy "socks5h://$TRANSFERD_TEST_SOCKS_PROXY" "$TRANSFERD_TEST_NGINX/files/hello.txt" >&2
    log "peers OK"
    exit 0
fi

scratch=()
if [ -n "${TRANSFERD_SCRATCH_PATH:-}" ]; then
    scratch=(--scratch-path "$TRANSFERD_SCRATCH_PATH")
fi

log "swift build --build-tests ${scratch[*]}"
swift build --build-tests "${scratch[@]}"

log "peers: TRANSFERD_TEST_HTTPBIN=$TRANSFERD_TEST_HTTPBIN TRANSFERD_TEST_NGINX=$TRANSFERD_TEST_NGINX"
# Serial by default: several tests measure time (idle timeouts, long-poll latency) and others
# move gigabytes (1 GiB blob, concurrent downloads); side by side on 2 cores the heavy ones
# starved the timed ones into failing. Serial costs about two minutes. Pass --parallel to override.
order=(--no-parallel)
for argument in "$@"; do
    if [ "$argument" = "--parallel" ]; then order=(); fi
done
log "swift test ${scratch[*]} ${order[*]} $*"
status=0
swift test "${scratch[@]}" "${order[@]}" "$@" || status=$?
log "swift test exited with $status"
exit "$status"
