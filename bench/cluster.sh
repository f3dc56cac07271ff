#!/usr/bin/env bash
# 1, 2 and 3 daemons on one PostgreSQL against one daemon on SQLite, in one run (issue 19):
# bash bench/cluster.sh
#
# For each setup, fresh daemons (--max-transfers 64 each; a cluster's nodes on one fresh database
# and one data folder) and the same three workloads:
#   a. FILES downloads of 16 KiB from nginx on 127.0.0.1, posted as ONE batch to the first node,
#      in a session with httpMaximumConnectionsPerHost 16 (cluster-wide), timed from the POST to
#      the last completion event read from the first node's feed (bench/submit_client --batch);
#      every file's size checked. In a cluster every node claims from the batch.
#   b. SUBMIT single POSTs of suspended tasks, over one keep-alive connection per node, the
#      nodes' clients at once (SUBMIT / nodes each); timed to the slowest client.
#   c. BATCHES batches of BATCH suspended tasks per node, the nodes' clients at once.
# Printed per setup: files/s and tasks/s, each against SQLite's, and the CPU per task of the
# daemons (all nodes) and of PostgreSQL's server (the postmaster and every backend). PostgreSQL
# runs with fsync on, as a cluster does (scripts/lib/peers-postgres.sh's server, a temporary
# folder on $TMPDIR or /tmp); SQLite in WAL with synchronous=NORMAL, as always. Everything runs
# on this machine's cores: the nodes share them with PostgreSQL, nginx and the clients, so the
# figures say what a node costs, not how a cluster of machines scales (docs/cluster.md).
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

download_batch_body "$FILES" "$NGINX_URL" >"$WORK/files-batch.json"
printf '{"kind":"data","request":{"url":"%s/files/f00000"},"state":"suspended"}' "$NGINX_URL" >"$WORK/one.json"
awk -v n="$BATCH" -v spec="{\"kind\":\"data\",\"request\":{\"url\":\"$NGINX_URL/files/f00000\"},\"state\":\"suspended\"}" \
    'BEGIN { printf "{\"tasks\":["; for (i = 0; i < n; i++) printf "%s%s", (i ? "," : ""), spec; printf "]}" }' >"$WORK/batch.json"

# start_nodes COUNT FLAGS...: COUNT daemons on one data folder ($WORK/data), node ids node1...;
# sets NODE_PIDS and NODE_PORTS.
start_nodes() {
    local count="$1" index
    shift
    NODE_PIDS=() NODE_PORTS=()
    for ((index = 1; index <= count; index++)); do
        if [ "$count" -gt 1 ]; then
            start_bench_daemon --max-transfers 64 --node-id "node$index" "$@"
        else
            start_bench_daemon --max-transfers 64 "$@"
        fi
        NODE_PIDS+=("$DAEMON_PID") NODE_PORTS+=("${DAEMON_URL##*:}")
    done
}
nodes_cpu_ms() {
    local pid total=0
    for pid in "${NODE_PIDS[@]}"; do total=$((total + $(process_cpu_ms "$pid"))); done
    echo "$total"
}

# on_every_node OUT ARGS...: submit_client ARGS (PORT first) against every node at once, each
# writing OUT.N; returns the slowest client's total seconds in SLOWEST.
on_every_node() {
    local out="$1" index pids=() status=0
    shift
    for index in "${!NODE_PORTS[@]}"; do
        timeout "$TIMEOUT" "$WORK/submit_client" "${NODE_PORTS[$index]}" "$@" >"$out.$index" &
        pids+=($!)
    done
    for index in "${!pids[@]}"; do wait "${pids[$index]}" || status=$?; done
    [ "$status" -eq 0 ] || return "$status"
    SLOWEST="$(for index in "${!NODE_PORTS[@]}"; do awk '$1 == "total" { print $3; exit }' "$out.$index"; done | sort -g | tail -n 1)"
}

# measure NAME NODES FLAGS...: the three workloads on fresh daemons; sets FILES_S, SUBMIT_S,
# BATCH_S and the CPU per task (µs) of the daemons (D_*) and of PostgreSQL (P_*).
measure() {
    local name="$1" nodes="$2" d0 p0 answer session seconds completed failed url per tasks
    shift 2
    rm -rf "$WORK/data"
    start_nodes "$nodes" "$@"
    url="http://127.0.0.1:${NODE_PORTS[0]}"
    answer="$(curl -fsS -X POST -H 'Content-Type: application/json' \
        --data-binary '{"configuration":{"httpMaximumConnectionsPerHost":16}}' "$url/v1/sessions")" || die "session"
    session="$(json_string "$answer" id)" || die "session: $answer"

    log "$name (a): $FILES files, one batch"
    d0="$(nodes_cpu_ms)"; p0="$(postgres_cpu_ms)"
    timeout "$TIMEOUT" "$WORK/submit_client" --batch "${NODE_PORTS[0]}" "$session" "$WORK/files-batch.json" \
        "$FILES" "$TIMEOUT" >"$WORK/submit.out" || die "$name: the batch of $FILES downloads did not complete"
    D_FILES="$(us_per $(($(nodes_cpu_ms) - d0)) "$FILES")"; P_FILES="$(us_per $(($(postgres_cpu_ms) - p0)) "$FILES")"
    read -r _ completed _ failed _ seconds <"$WORK/submit.out"
    [ "$completed" -eq "$FILES" ] && [ "$failed" -eq 0 ] || die "$name: $completed completed, $failed failed of $FILES"
    [ "$(find "$WORK/data/downloads/bench" -type f -size "${FILE_BYTES}c" | wc -l)" -eq "$FILES" ] || die "$name: files missing or wrong size"
    FILES_S="$(rate "$FILES" "$seconds")"

    per=$((SUBMIT / nodes))
    log "$name (b): $((per * nodes)) single POSTs ($per per node)"
    d0="$(nodes_cpu_ms)"; p0="$(postgres_cpu_ms)"
    on_every_node "$WORK/submit.out" /v1/sessions/shared/tasks "$WORK/one.json" "$per" 1000 201 || die "$name: single POSTs failed"
    tasks=$((per * nodes))
    D_SUBMIT="$(us_per $(($(nodes_cpu_ms) - d0)) "$tasks")"; P_SUBMIT="$(us_per $(($(postgres_cpu_ms) - p0)) "$tasks")"
    SUBMIT_S="$(rate "$tasks" "$SLOWEST")"

    log "$name (c): $BATCHES batches of $BATCH per node"
    d0="$(nodes_cpu_ms)"; p0="$(postgres_cpu_ms)"
    on_every_node "$WORK/submit.out" /v1/sessions/shared/tasks:batch "$WORK/batch.json" "$BATCHES" 1 201 || die "$name: batches failed"
    tasks=$((BATCHES * BATCH * nodes))
    D_BATCH="$(us_per $(($(nodes_cpu_ms) - d0)) "$tasks")"; P_BATCH="$(us_per $(($(postgres_cpu_ms) - p0)) "$tasks")"
    BATCH_S="$(rate "$tasks" "$SLOWEST")"
    for pid in "${NODE_PIDS[@]}"; do stop_peer transferd "$pid"; done
}

# A fresh database per PostgreSQL setup: URL of database NAME on the test server.
fresh_database() {
    local name="$1" server="${TRANSFERD_TEST_POSTGRES%/*}"
    "$(postgres_bin_dir)/psql" -q -d "$TRANSFERD_TEST_POSTGRES" -v ON_ERROR_STOP=1 -c "CREATE DATABASE $name" >&2 \
        || die "CREATE DATABASE $name failed"
    echo "$server/$name"
}

measure sqlite 1
S_FILES="$FILES_S" S_SUBMIT="$SUBMIT_S" S_BATCH="$BATCH_S" S_D_FILES="$D_FILES" S_D_SUBMIT="$D_SUBMIT" S_D_BATCH="$D_BATCH"
ROWS=()
for nodes in 1 2 3; do
    measure "postgresql x$nodes" "$nodes" --database-url "$(fresh_database "bench_nodes_$nodes")"
    ROWS+=("$nodes|$FILES_S|$D_FILES|$P_FILES|$SUBMIT_S|$D_SUBMIT|$P_SUBMIT|$BATCH_S|$D_BATCH|$P_BATCH")
done

printf '\ntransferd: 1, 2 and 3 nodes on one PostgreSQL (fsync on) against one on SQLite, %s, %s\n' "$(bench_commit)" "$(date -u +%Y-%m-%dT%H:%MZ)"
printf 'CPU per task: the daemons (all nodes) + the PostgreSQL server, in µs\n'
printf '%-16s %22s %22s %22s\n' setup "(a) 16 KiB files/s" "(b) single POSTs/s" "(c) batched tasks/s"
printf '%-16s %22s %22s %22s\n' sqlite "$S_FILES (${S_D_FILES} µs)" "$S_SUBMIT (${S_D_SUBMIT} µs)" "$S_BATCH (${S_D_BATCH} µs)"
for row in "${ROWS[@]}"; do
    IFS='|' read -r nodes f df pf u du pu b db pb <<<"$row"
    printf '%-16s %22s %22s %22s\n' "postgresql x$nodes" "$f ($(ratio "$f" "$S_FILES")x)" "$u ($(ratio "$u" "$S_SUBMIT")x)" "$b ($(ratio "$b" "$S_BATCH")x)"
    printf '%-16s %22s %22s %22s\n' "  cpu/task" "${df}+${pf} µs" "${du}+${pu} µs" "${db}+${pb} µs"
done
