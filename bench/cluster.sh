#!/usr/bin/env bash
# The daemon on PostgreSQL against the daemon on SQLite, in one run (issue 19): bash bench/cluster.sh
#
# For each store, a fresh daemon (--max-transfers 64) and the same three workloads:
#   a. FILES downloads of 16 KiB from nginx on 127.0.0.1, posted as ONE batch to a session with
#      httpMaximumConnectionsPerHost 16, timed from the POST to the last completion event
#      (bench/submit_client --batch); every file's size checked.
#   b. SUBMIT single POSTs of suspended tasks over one keep-alive connection.
#   c. BATCHES batches of BATCH suspended tasks.
# Printed per store: files/s and tasks/s, and the CPU each costs per task: the daemon's, and for
# PostgreSQL its server's (the postmaster and every backend), so the ratio PostgreSQL/SQLite says
# what the shared database costs a node. PostgreSQL runs with fsync on, as a cluster does
# (scripts/lib/peers-postgres.sh's server, a temporary folder on $TMPDIR or /tmp); SQLite in WAL
# with synchronous=NORMAL, as always. Only one node: several nodes on one database come with the
# cluster mode (docs/cluster.md), and this script will run 1, 2 and 3 of them then.
# Everything it starts is stopped by PID and its folders removed however it exits.
#
# Environment:
#   BENCH_FILES=2000 BENCH_SUBMIT=5000 BENCH_BATCHES=5 BENCH_BATCH=10000 BENCH_TIMEOUT=600
#   BENCH_BINARY=PATH   use this transferd binary instead of building one
set -euo pipefail

SCRIPT_NAME="bench-cluster"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/common.sh
source scripts/lib/common.sh
# shellcheck source=scripts/lib/peers.sh
source scripts/lib/peers.sh
# shellcheck source=scripts/lib/network-peers.sh
source scripts/lib/network-peers.sh
# shellcheck source=scripts/lib/peers-postgres.sh
source scripts/lib/peers-postgres.sh
# shellcheck source=scripts/lib/bench.sh
source scripts/lib/bench.sh

FILES="${BENCH_FILES:-2000}"
SUBMIT="${BENCH_SUBMIT:-5000}"
BATCHES="${BENCH_BATCHES:-5}"
BATCH="${BENCH_BATCH:-10000}"
TIMEOUT="${BENCH_TIMEOUT:-600}"
for name in FILES SUBMIT BATCHES BATCH TIMEOUT; do
    [[ "${!name}" =~ ^[1-9][0-9]*$ ]] || die "BENCH_$name must be a positive integer, got '${!name}'"
done
[ "$BATCH" -le 10000 ] || die "BENCH_BATCH must be at most 10000 (the daemon's batch limit)"
FILE_BYTES=16384

bench_begin
trap 'bench_cleanup $?; remove_postgres_peer_files' EXIT

ensure_swift
ensure_apt_packages "${BUILD_APT_PACKAGES[@]}" "${POSTGRES_PACKAGES[@]}" nginx-light curl gcc libc6-dev
ensure_python
bench_binary

WORK="$(mktemp -d "${TMPDIR:-/tmp}/transferd-cluster.XXXXXX")"
mkdir -p "$WORK/www/files" "$WORK/nginx/tmp" "$WORK/logs"
PEERS_LOG_DIR="$WORK/logs"
cc -O2 -o "$WORK/submit_client" bench/submit_client.c || die "cc bench/submit_client.c failed"
head -c $((FILES * FILE_BYTES)) /dev/urandom | split -b "$FILE_BYTES" -d -a 5 - "$WORK/www/files/f"
start_bench_nginx 1024 "keepalive_requests 100000;" ""
start_postgres_peer fsync=on
POSTGRES_PID="${PEER_PIDS[${#PEER_PIDS[@]} - 1]}"

# The CPU (ms) the PostgreSQL server used so far: the postmaster and its children (the backends,
# whose connections the daemon keeps open for its life).
postgres_cpu_ms() {
    local pid total=0
    for pid in "$POSTGRES_PID" $(pgrep -P "$POSTGRES_PID" || true); do
        [ -r "/proc/$pid/stat" ] && total=$((total + $(process_cpu_ms "$pid")))
    done
    echo "$total"
}
us_per() { awk -v ms="$1" -v n="$2" 'BEGIN { printf "%.0f", ms * 1000 / n }'; }
submit_total() { awk '$1 == "total" { print $3; exit }' "$WORK/submit.out"; }

download_batch_body "$FILES" "$NGINX_URL" >"$WORK/files-batch.json"
printf '{"kind":"data","request":{"url":"%s/files/f00000"},"state":"suspended"}' "$NGINX_URL" >"$WORK/one.json"
awk -v n="$BATCH" -v spec="{\"kind\":\"data\",\"request\":{\"url\":\"$NGINX_URL/files/f00000\"},\"state\":\"suspended\"}" \
    'BEGIN { printf "{\"tasks\":["; for (i = 0; i < n; i++) printf "%s%s", (i ? "," : ""), spec; printf "]}" }' >"$WORK/batch.json"

# measure STORE [FLAGS...]: the three workloads on a fresh daemon; sets FILES_S, SUBMIT_S, BATCH_S
# and the CPU per task (µs) of the daemon (D_*) and of PostgreSQL (P_*).
measure() {
    local store="$1" d0 p0 answer session seconds completed failed
    shift
    rm -rf "$WORK/data"
    start_bench_daemon --max-transfers 64 "$@"
    answer="$(curl -fsS -X POST -H 'Content-Type: application/json' \
        --data-binary '{"configuration":{"httpMaximumConnectionsPerHost":16}}' "$DAEMON_URL/v1/sessions")" || die "session"
    session="$(json_string "$answer" id)" || die "session: $answer"

    log "$store (a): $FILES files, one batch"
    d0="$(process_cpu_ms "$DAEMON_PID")"; p0="$(postgres_cpu_ms)"
    timeout "$TIMEOUT" "$WORK/submit_client" --batch "${DAEMON_URL##*:}" "$session" "$WORK/files-batch.json" \
        "$FILES" "$TIMEOUT" >"$WORK/submit.out" || die "$store: the batch of $FILES downloads did not complete"
    D_FILES="$(us_per $(($(process_cpu_ms "$DAEMON_PID") - d0)) "$FILES")"; P_FILES="$(us_per $(($(postgres_cpu_ms) - p0)) "$FILES")"
    read -r _ completed _ failed _ seconds <"$WORK/submit.out"
    [ "$completed" -eq "$FILES" ] && [ "$failed" -eq 0 ] || die "$store: $completed completed, $failed failed of $FILES"
    [ "$(find "$WORK/data/downloads/bench" -type f -size "${FILE_BYTES}c" | wc -l)" -eq "$FILES" ] || die "$store: files missing or wrong size"
    FILES_S="$(rate "$FILES" "$seconds")"

    log "$store (b): $SUBMIT single POSTs"
    d0="$(process_cpu_ms "$DAEMON_PID")"; p0="$(postgres_cpu_ms)"
    timeout "$TIMEOUT" "$WORK/submit_client" "${DAEMON_URL##*:}" /v1/sessions/shared/tasks "$WORK/one.json" "$SUBMIT" 1000 201 \
        >"$WORK/submit.out" || die "$store: single POSTs failed"
    D_SUBMIT="$(us_per $(($(process_cpu_ms "$DAEMON_PID") - d0)) "$SUBMIT")"; P_SUBMIT="$(us_per $(($(postgres_cpu_ms) - p0)) "$SUBMIT")"
    SUBMIT_S="$(rate "$SUBMIT" "$(submit_total)")"

    log "$store (c): $BATCHES batches of $BATCH"
    d0="$(process_cpu_ms "$DAEMON_PID")"; p0="$(postgres_cpu_ms)"
    timeout "$TIMEOUT" "$WORK/submit_client" "${DAEMON_URL##*:}" /v1/sessions/shared/tasks:batch "$WORK/batch.json" "$BATCHES" 1 201 \
        >"$WORK/submit.out" || die "$store: batches failed"
    D_BATCH="$(us_per $(($(process_cpu_ms "$DAEMON_PID") - d0)) $((BATCHES * BATCH)))"; P_BATCH="$(us_per $(($(postgres_cpu_ms) - p0)) $((BATCHES * BATCH)))"
    BATCH_S="$(rate $((BATCHES * BATCH)) "$(submit_total)")"
    stop_peer transferd "$DAEMON_PID"
}

measure sqlite
S_FILES="$FILES_S" S_SUBMIT="$SUBMIT_S" S_BATCH="$BATCH_S" S_D_FILES="$D_FILES" S_D_SUBMIT="$D_SUBMIT" S_D_BATCH="$D_BATCH"
measure postgresql --database-url "$TRANSFERD_TEST_POSTGRES"

printf '\ntransferd on SQLite and on PostgreSQL (one node, fsync on), %s, %s\n' "$(bench_commit)" "$(date -u +%Y-%m-%dT%H:%MZ)"
printf '%-34s %12s %14s %12s %20s\n' workload sqlite postgresql pg/sqlite "pg cpu/task (d+pg)"
printf '%-34s %12s %14s %12s %20s\n' "(a) $FILES x 16 KiB, files/s" "$S_FILES" "$FILES_S" "$(ratio "$FILES_S" "$S_FILES")" \
    "${D_FILES}+${P_FILES} µs (sqlite ${S_D_FILES})"
printf '%-34s %12s %14s %12s %20s\n' "(b) single POSTs, tasks/s" "$S_SUBMIT" "$SUBMIT_S" "$(ratio "$SUBMIT_S" "$S_SUBMIT")" \
    "${D_SUBMIT}+${P_SUBMIT} µs (sqlite ${S_D_SUBMIT})"
printf '%-34s %12s %14s %12s %20s\n' "(c) batches of $BATCH, tasks/s" "$S_BATCH" "$BATCH_S" "$(ratio "$BATCH_S" "$S_BATCH")" \
    "${D_BATCH}+${P_BATCH} µs (sqlite ${S_D_BATCH})"
