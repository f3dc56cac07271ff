#!/usr/bin/env bash
# The cost curves (issue 18, "a million tasks"): bash bench/scale.sh
#
# Fills one daemon's store through the API, in steps, to each size of BENCH_SIZES (default
# 1,000, 100,000 and 1,000,000 tasks), and at each size measures:
#   POST          median latency of 500 single POSTs of a suspended task (one keep-alive
#                 connection, bench/submit_client.c), the 201 after the commit as always
#   admission     median latency of 50 POSTs of a task admitted inside its POST (its answer says
#                 "phase":"connecting"; a new session with room for all of them), as
#                 bench/scheduler.sh part (e)
#   feed          median of 200 GET /v1/tasks?limit=100 (the change feed's first page)
#   page          median of 200 GET /v1/sessions/{sid}/tasks?limit=100&cursor=C with C half-way
#                 through the session's tasks (a deep page of a session's list)
#   task          median of 500 GET /v1/tasks/{id} of a completed task half-way through
#   queue         median of 200 GET /v1/queue?limit=100 (the first page of the queue, which
#                 holds a tenth of the tasks)
#   start-up      the daemon stopped (SIGTERM) and started again on the same data folder: seconds
#                 from the start to the first /healthz answer (the store is loaded before it)
#   RSS           the daemon's VmRSS after the fill, and after the restart
# The fill is POST .../tasks:batch of 10,000 specs at a time, the way a client would, of three
# kinds in every batch of ten: 8 completed (a URL of a scheme the daemon does not serve fails
# at creation, unsupportedURL), 1 suspended, 1 queued (a running task behind one download that
# nginx trickles at 1 byte/s, in a session with one connection per host). The fill's own rate
# is printed too. A request path whose cost grows linearly with the stored tasks shows as a
# column that grows about 100x from 1k to 100k and 10x again to 1M; flat or logarithmic is the
# goal.
#
# nginx and transferd are started here and stopped by PID; the temporary folder is removed
# however the script exits. The machine is shared: run it twice, and read ratios within a run.
#
# Environment:
#   BENCH_SIZES="1000 100000 1000000"   ascending task counts (each a multiple of 10, and of
#                                       10,000 above 10,000)
#   BENCH_TIMEOUT=900                   seconds any one step may take (start-up of 1M included)
#   BENCH_BINARY=PATH                   use this transferd binary instead of building one
#   BENCH_TMPDIR=DIR                    where the temporary folder goes (default: $TMPDIR or /tmp)
set -euo pipefail

SCRIPT_NAME="bench-scale"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/common.sh
source scripts/lib/common.sh
# shellcheck source=scripts/lib/peers.sh
source scripts/lib/peers.sh
# shellcheck source=scripts/lib/bench.sh
source scripts/lib/bench.sh

read -r -a SIZES <<<"${BENCH_SIZES:-1000 100000 1000000}"
TIMEOUT="${BENCH_TIMEOUT:-900}"
[[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "BENCH_TIMEOUT must be a positive integer, got '$TIMEOUT'"
previous=0
for size in "${SIZES[@]}"; do
    [[ "$size" =~ ^[1-9][0-9]*$ ]] && [ "$size" -gt "$previous" ] && [ $((size % 10)) -eq 0 ] \
        || die "BENCH_SIZES must be ascending multiples of 10, got '${SIZES[*]}'"
    [ "$size" -le 10000 ] || [ $((size % 10000)) -eq 0 ] || die "sizes above 10,000 must be multiples of 10,000, got $size"
    previous="$size"
done
BATCH=10000

bench_begin

# ---- helpers -------------------------------------------------------------------------------------

# client PATH BODYFILE|- COUNT STATUS [EXPECT]: the keep-alive client against the daemon ("-": GET);
# its output in $WORK/client.out.
client() {
    local path="$1" body="$2" count="$3" status="$4"
    shift 4
    timeout "$TIMEOUT" "$WORK/submit_client" "${DAEMON_URL##*:}" "$path" "$body" "$count" "$count" "$status" "$@" >"$WORK/client.out" \
        || die "submit_client $path failed"
}
client_field() { awk -v key="$1" -v n="${2:-2}" '$1 == key { print $n; exit }' "$WORK/client.out"; }

post() {
    curl -fsS --max-time "$TIMEOUT" -X POST -H 'Content-Type: application/json' --data-binary "$2" "$DAEMON_URL$1" \
        || die "POST $1 failed"
}

# specs COUNT SPEC: COUNT copies of SPEC, comma-separated.
specs() { awk -v n="$1" -v spec="$2" 'BEGIN { for (i = 0; i < n; i++) printf "%s%s", (i ? "," : ""), spec }'; }

# batch_file FILE COUNT SPEC: a tasks:batch body of COUNT copies of SPEC.
batch_file() { { printf '{"tasks":['; specs "$2" "$3"; printf ']}'; } >"$1"; }

# start_daemon: starts $BINARY on $PORT with $WORK/data; sets DAEMON_PID, DAEMON_URL and
# STARTUP_S (seconds until /healthz answered).
start_daemon() {
    local t0 deadline
    t0="$(now_ns)"
    "$BINARY" --listen "127.0.0.1:$PORT" --data-dir "$WORK/data" --log-level warning --max-transfers 512 \
        >>"$WORK/transferd.log" 2>&1 </dev/null &
    DAEMON_PID=$!
    record_peer transferd "$DAEMON_PID"
    DAEMON_URL="http://127.0.0.1:$PORT"
    deadline=$((SECONDS + TIMEOUT))
    until curl -fs -o /dev/null --max-time 5 "$DAEMON_URL/healthz"; do
        kill -0 "$DAEMON_PID" 2>/dev/null || die "transferd exited at start; see $WORK/transferd.log"
        [ "$SECONDS" -lt "$deadline" ] || die "transferd did not answer /healthz within ${TIMEOUT}s"
        sleep 0.05
    done
    STARTUP_S="$(awk -v ns="$(($(now_ns) - t0))" 'BEGIN { printf "%.2f", ns / 1e9 }')"
}

# stop_daemon: SIGTERM and a wait for the exit (a large store may take a while to close).
stop_daemon() {
    local deadline=$((SECONDS + TIMEOUT))
    kill -TERM "$DAEMON_PID" 2>/dev/null || true
    while kill -0 "$DAEMON_PID" 2>/dev/null; do
        [ "$SECONDS" -lt "$deadline" ] || { kill -KILL "$DAEMON_PID" 2>/dev/null || true; die "transferd did not stop within ${TIMEOUT}s"; }
        sleep 0.05
    done
    wait "$DAEMON_PID" 2>/dev/null || true
}

mib() { awk -v k="$1" 'BEGIN { printf "%.0f", k / 1024 }'; }

# ---- set up ----------------------------------------------------------------------------------

ensure_swift
ensure_apt_packages "${BUILD_APT_PACKAGES[@]}" nginx-light curl gcc libc6-dev
ensure_python
bench_binary

WORK="$(mktemp -d "${BENCH_TMPDIR:-${TMPDIR:-/tmp}}/transferd-scale.XXXXXX")"
mkdir -p "$WORK/www/files" "$WORK/www/stall" "$WORK/nginx/tmp" "$WORK/logs"
cc -O2 -o "$WORK/submit_client" bench/submit_client.c || die "cc bench/submit_client.c failed"
head -c 16384 /dev/urandom >"$WORK/www/files/f00000"
head -c 1048576 /dev/urandom >"$WORK/www/stall/big.bin"
start_bench_nginx 1024 "keepalive_requests 100000;" "location /stall/ { limit_rate 1; }"

PORT="$(free_port)"
start_daemon
# A background session: its download goes on across the restarts (a default session's would
# end with networkConnectionLost, and the queue behind it would drain while the next fill runs).
answer="$(post /v1/sessions '{"kind":"background","identifier":"bench-scale-queue","configuration":{"httpMaximumConnectionsPerHost":1}}')"
QUEUE_SESSION="$(json_string "$answer" id)" || die "session: $answer"
answer="$(post "/v1/sessions/$QUEUE_SESSION/tasks" "{\"kind\":\"download\",\"request\":{\"url\":\"$NGINX_URL/stall/big.bin\"}}")"
STALLED_ID="$(json_number "$answer" id)" || die "stalled task: $answer"
answer="$(post /v1/sessions '{}')"
FILL_SESSION="$(json_string "$answer" id)" || die "session: $answer"

printf '{"kind":"data","request":{"url":"%s/files/f00000"},"state":"suspended"}' "$NGINX_URL" >"$WORK/suspended.json"
# One URL for every probe: the URL cache must not answer them (a hit never reaches the engine).
printf '{"kind":"data","request":{"url":"%s/files/f00000","cachePolicy":"reloadIgnoringLocalCacheData"}}' "$NGINX_URL" >"$WORK/probe.json"
COMPLETED_SPEC='{"kind":"data","request":{"url":"gopher://127.0.0.1:9/fill"}}'
SUSPENDED_SPEC="{\"kind\":\"data\",\"request\":{\"url\":\"$NGINX_URL/files/f00000\"},\"state\":\"suspended\"}"
QUEUED_SPEC="{\"kind\":\"data\",\"request\":{\"url\":\"$NGINX_URL/files/f00000\"}}"

# fill COUNT: COUNT more tasks, in batches of at most BATCH: 8/10 completed and 1/10 suspended in
# the fill session, 1/10 queued in the queue session. Adds the time spent to FILL_NS.
FILL_NS=0
FILLED=0
fill() {
    local left="$1" size t0
    while [ "$left" -gt 0 ]; do
        size=$((left > BATCH ? BATCH : left))
        if [ ! -f "$WORK/fill-$size.json" ]; then
            { printf '{"tasks":['; specs $((size * 8 / 10)) "$COMPLETED_SPEC"; printf ','; specs $((size / 10)) "$SUSPENDED_SPEC"; printf ']}'; } >"$WORK/fill-$size.json"
            batch_file "$WORK/queue-$size.json" $((size / 10)) "$QUEUED_SPEC"
        fi
        t0="$(now_ns)"
        client "/v1/sessions/$FILL_SESSION/tasks:batch" "$WORK/fill-$size.json" 1 201
        client "/v1/sessions/$QUEUE_SESSION/tasks:batch" "$WORK/queue-$size.json" 1 201
        FILL_NS=$((FILL_NS + $(now_ns) - t0))
        left=$((left - size))
        FILLED=$((FILLED + size))
    done
}

# ---- the curves ----------------------------------------------------------------------------------

ROWS=()
for size in "${SIZES[@]}"; do
    log "filling to $size tasks"
    fill $((size - FILLED))
    sleep 1 # let the store writer and the allocator settle before reading RSS
    RSS_KIB="$(kib_field "$DAEMON_PID" VmRSS)"

    client "/v1/sessions/$FILL_SESSION/tasks" "$WORK/suspended.json" 500 201
    POST_US="$(client_field latency_us)"
    FILLED=$((FILLED + 500))

    answer="$(post /v1/sessions '{"configuration":{"httpMaximumConnectionsPerHost":64}}')"
    probe_session="$(json_string "$answer" id)" || die "session: $answer"
    client "/v1/sessions/$probe_session/tasks" "$WORK/probe.json" 50 201 '"phase":"connecting"'
    ADMIT_US="$(client_field latency_us)"
    [ "$(client_field matched)" -eq 50 ] || die "only $(client_field matched) of 50 probe tasks were admitted inside their POST"

    client "/v1/tasks?limit=100" - 200 200
    FEED_US="$(client_field latency_us)"
    grep -q '"id":' <(sed -n 's/^last //p' "$WORK/client.out") || die "the change feed's page is empty"

    # A completed task and a cursor half-way through the fill session (its ids are the batches').
    answer="$(curl -fsS "$DAEMON_URL/v1/sessions/$FILL_SESSION/tasks?limit=1&cursor=$((FILLED / 2))")" || die "list failed"
    middle="$(json_number "$answer" id)" || die "no task past the middle: $answer"
    client "/v1/sessions/$FILL_SESSION/tasks?limit=100&cursor=$middle" - 200 200
    PAGE_US="$(client_field latency_us)"
    client "/v1/tasks/$middle" - 500 200
    TASK_US="$(client_field latency_us)"
    client "/v1/queue?limit=100" - 200 200
    QUEUE_US="$(client_field latency_us)"
    grep -q '"position":1,' <(sed -n 's/^last //p' "$WORK/client.out") || die "the queue's first page is empty"

    log "restarting the daemon with $FILLED tasks stored"
    stop_daemon
    start_daemon
    sleep 1
    RSS_RESTART_KIB="$(kib_field "$DAEMON_PID" VmRSS)"
    answer="$(curl -fsS "$DAEMON_URL/v1/tasks/$STALLED_ID")" || die "the stalled task is gone after the restart"
    [[ "$answer" == *'"state":"running"'* ]] || die "the stalled download did not go on after the restart: $answer"

    ROWS+=("$(printf '%10s %9s %11s %9s %9s %9s %9s %10s %9s %11s' "$FILLED" "$POST_US" "$ADMIT_US" "$FEED_US" "$PAGE_US" "$TASK_US" "$QUEUE_US" "$STARTUP_S" "$(mib "$RSS_KIB")" "$(mib "$RSS_RESTART_KIB")")")
    LAST="$FILLED tasks: POST $POST_US µs, admit $ADMIT_US µs, feed $FEED_US µs, page $PAGE_US µs, task $TASK_US µs, queue $QUEUE_US µs, start-up $STARTUP_S s, RSS $(mib "$RSS_KIB") MiB"
    FIRST="${FIRST:-$LAST}"
done

# ---- report ------------------------------------------------------------------------------------

CPU_MODEL="$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
{
    echo
    echo "transferd cost curves ($(bench_commit)), nginx $("$NGINX_BIN" -v 2>&1 | sed 's|.*nginx/||') on 127.0.0.1"
    echo "machine: nproc $(nproc), ${CPU_MODEL:-unknown CPU}, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
    echo "fill: $FILLED tasks through tasks:batch at $(awk -v n="$FILLED" -v ns="$FILL_NS" 'BEGIN { printf "%.0f", n / (ns / 1e9) }') tasks/s (8/10 completed, 1/10 suspended, 1/10 queued)"
    echo "latencies are medians in µs; start-up in s; RSS in MiB after the fill and after the restart"
    echo
    printf '%10s %9s %11s %9s %9s %9s %9s %10s %9s %11s\n' "tasks" "POST" "admission" "feed" "page" "task" "queue" "start-up" "RSS" "RSS again"
    printf '%s\n' "${ROWS[@]}"
    echo
    echo "scale: $FIRST -> $LAST"
}
