#!/usr/bin/env bash
# The scheduler benchmark: bash bench/scheduler.sh
#
# Measures, side by side in one run, how transferd takes and runs many small jobs:
#   a. 2,000 files of 16 KiB from nginx on 127.0.0.1, 16 at a time: 'curl --parallel
#      --parallel-max 16 --config LIST' (url/output pairs), 'aria2c -j16 -i LIST', and transferd
#      (all 2,000 download tasks posted as ONE batch to a session whose
#      httpMaximumConnectionsPerHost is 16; the daemon runs with --max-transfers 64; timed from
#      the POST to the last didCompleteWithError in the session's event feed, long-polled by
#      bench/submit_client --batch over the POST's keep-alive connection).
#      Every tool's files are counted and their sizes checked. BENCH_ROUNDS rounds, the three
#      tools in turn in each; each tool's median round in files/s, and transferd/curl,
#      transferd/aria2 of the medians; every round's figures are printed too. In each round
#      transferd also takes the same batch to an ephemeral session, which stores nothing
#      (records, events, metrics): the difference is what storing costs.
#   b. single POSTs: BENCH_SUBMIT tasks, one POST each, over ONE keep-alive connection, created
#      suspended (so the engine does not run them; they are stored and listed like any task).
#      Tasks/s overall, for the first and for the last thousand. The client is
#      bench/submit_client.c (built here with cc -O2): one request in flight, no allocation per
#      request. For comparison, aria2's JSON-RPC aria2.addUri (aria2c --enable-rpc --pause=true)
#      over one keep-alive connection with the same client; and the machine's floor for one
#      request in flight: nginx answering GETs of a static 8-byte file to the same client.
#   c. batches: BENCH_BATCHES POSTs of BENCH_BATCH suspended tasks each to tasks:batch, one
#      connection. Tasks/s. Then the machine's floor for those rows: SQLite alone (Python's
#      sqlite3 module on the system's libsqlite3) writing as many rows, BENCH_BATCH to a
#      transaction, each transaction one set-based upsert of a task record the daemon stored,
#      into a copy of the store's schema (bench/sqlite_floor.py); and again with the record's
#      null members left out, to show how much of that floor is the record's size.
#   d. memory: a fresh daemon (--max-transfers 512); one download that nginx trickles at 1 byte/s
#      holds the only slot of a session (httpMaximumConnectionsPerHost 1), and BENCH_QUEUED
#      running tasks to that host are queued behind it (batches of 10,000). VmRSS before and
#      after, KiB per queued task.
#   e. admission: the latency of POSTing one task to another session (per-host cap 64, room for
#      all 50 probes at once; admitted inside the POST, its answer says "phase":"connecting")
#      with 0, 1,000 and BENCH_QUEUED tasks queued: median of 50 POSTs each, the answers checked
#      for the admission. The queued tasks have the same priority, so the probe sits behind all
#      of them in the queue.
# nginx, aria2c and transferd are stopped by PID and the temporary folder removed however it
# exits. Figures are medians or totals of one run; the machine is shared, so run it twice.
#
# Environment:
#   BENCH_FILES=2000         files for (a)
#   BENCH_ROUNDS=3           rounds of (a), the tools in turn in each
#   BENCH_SUBMIT=10000       single POSTs for (b)
#   BENCH_BATCHES=10         batches for (c), of BENCH_BATCH tasks each
#   BENCH_BATCH=10000
#   BENCH_QUEUED=100000      queued tasks for (d) and (e) (a multiple of 10,000, or less than it)
#   BENCH_ARIA2=1            0: leave aria2 out
#   BENCH_TIMEOUT=600        seconds any one step may take
#   BENCH_BINARY=PATH        use this transferd binary instead of building one; no build step
#   BENCH_TMPDIR=DIR         where the temporary folder goes (default: $TMPDIR or /tmp)
set -euo pipefail

SCRIPT_NAME="bench-scheduler"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/common.sh
source scripts/lib/common.sh
# shellcheck source=scripts/lib/peers.sh
source scripts/lib/peers.sh
# shellcheck source=scripts/lib/bench.sh
source scripts/lib/bench.sh

FILES="${BENCH_FILES:-2000}"
ROUNDS="${BENCH_ROUNDS:-3}"
SUBMIT="${BENCH_SUBMIT:-10000}"
BATCHES="${BENCH_BATCHES:-10}"
BATCH="${BENCH_BATCH:-10000}"
QUEUED="${BENCH_QUEUED:-100000}"
WANT_ARIA2="${BENCH_ARIA2:-1}"
TIMEOUT="${BENCH_TIMEOUT:-600}"
for name in FILES ROUNDS SUBMIT BATCHES BATCH QUEUED TIMEOUT; do
    [[ "${!name}" =~ ^[1-9][0-9]*$ ]] || die "BENCH_$name must be a positive integer, got '${!name}'"
done
[ "$SUBMIT" -ge 2000 ] || die "BENCH_SUBMIT must be at least 2000 (first and last thousand)"
[ "$BATCH" -le 10000 ] || die "BENCH_BATCH must be at most 10000 (the daemon's batch limit)"
CONCURRENCY=16
FILE_BYTES=16384

bench_begin

# ---- helpers -------------------------------------------------------------------------------------

seconds_of() { awk -v ns="$1" 'BEGIN { printf "%.3f", ns / 1e9 }'; }
per_file_us() { awk -v ms="$1" -v n="$((FILES * ROUNDS))" 'BEGIN { printf "%.0f", ms * 1000 / n }'; }

# check_files DIR TOOL: DIR holds the FILES outputs, each FILE_BYTES long. They are kept until
# the temporary folder goes: on an ext4 without a journal, creating a file skips every inode
# freed in the last minute, so deleting one tool's 2,000 files would slow the next tool's.
check_files() {
    local dir="$1" tool="$2" count wrong
    count="$(find "$dir" -type f | wc -l)"
    [ "$count" -eq "$FILES" ] || die "$tool: $count files in $dir, expected $FILES"
    wrong="$(find "$dir" -type f ! -size "${FILE_BYTES}c" | wc -l)"
    [ "$wrong" -eq 0 ] || die "$tool: $wrong files in $dir are not $FILE_BYTES bytes"
}

# cpu_of CMD...: runs CMD; sets CPU_MS to the CPU time (user + system, ms) CMD and its children
# used. CPU per file holds still on a busy machine, where files/s moves with the load.
cpu_of() {
    local times_out
    times_out="$( ( "$@" >&2 && times ) )" || return 1
    CPU_MS="$(echo "$times_out" | awk 'NR == 2 { n = split($0, t, " "); ms = 0
        for (i = 1; i <= n; i++) { split(t[i], p, "m"); ms += (p[1] * 60 + p[2]) * 1000 } printf "%.0f", ms }')"
}

# post PATH JSON: POSTs JSON to the daemon and prints the answer; fails on a non-2xx answer.
post() {
    curl -fsS --max-time "$TIMEOUT" -X POST -H 'Content-Type: application/json' --data-binary "$2" "$DAEMON_URL$1" \
        || die "POST $1 failed"
}

# submit PATH BODYFILE COUNT GROUP STATUS [EXPECT]: runs the keep-alive client against the
# daemon; its output in $WORK/submit.out.
submit() {
    local path="$1"
    shift
    timeout "$TIMEOUT" "$WORK/submit_client" "${DAEMON_URL##*:}" "$path" "$@" >"$WORK/submit.out" \
        || die "submit_client $path failed"
}
submit_field() { awk -v key="$1" -v n="${2:-2}" '$1 == key { print $n; exit }' "$WORK/submit.out"; }

# batch_body COUNT SPEC: a tasks:batch body of COUNT copies of the task SPEC.
batch_body() {
    local count="$1" spec="$2"
    awk -v n="$count" -v spec="$spec" 'BEGIN { printf "{\"tasks\":["; for (i = 0; i < n; i++) printf "%s%s", (i ? "," : ""), spec; printf "]}" }'
}

# ---- set up ----------------------------------------------------------------------------------

ensure_swift
ensure_apt_packages "${BUILD_APT_PACKAGES[@]}" nginx-light curl gcc libc6-dev
[ "$WANT_ARIA2" = "1" ] && ensure_apt_packages aria2
ensure_python
bench_binary

WORK="$(mktemp -d "${BENCH_TMPDIR:-${TMPDIR:-/tmp}}/transferd-sched.XXXXXX")"
mkdir -p "$WORK/www/files" "$WORK/www/stall" "$WORK/out" "$WORK/nginx/tmp" "$WORK/logs"
cc -O2 -o "$WORK/submit_client" bench/submit_client.c || die "cc bench/submit_client.c failed"

log "writing $FILES files of $FILE_BYTES bytes"
head -c $((FILES * FILE_BYTES)) /dev/urandom | split -b "$FILE_BYTES" -d -a 5 - "$WORK/www/files/f"
head -c 1048576 /dev/urandom >"$WORK/www/stall/big.bin"
printf '{"id":1}' >"$WORK/www/tiny.json"

start_bench_nginx 1024 "keepalive_requests 100000;" "location /stall/ { limit_rate 1; }"
NAMES=()
for ((i = 0; i < FILES; i++)); do NAMES+=("$(printf 'f%05d' "$i")"); done

# ---- a. many small files ---------------------------------------------------------------------------

# ROUNDS rounds, the tools in turn within each (curl, aria2c, transferd, transferd with an
# ephemeral session), each round to fresh folders and a fresh session: this machine's speed
# drifts by a fifth between minutes, so one run of each measured its moment as much as the tool.
# Each tool's figure is its median round; CPU is summed over the rounds.
for name in "${NAMES[@]}"; do printf 'url = "%s/files/%s"\noutput = "%s/out/curl/ROUND/%s"\n' "$NGINX_URL" "$name" "$WORK" "$name"; done >"$WORK/curl.cfg.in"
for name in "${NAMES[@]}"; do printf '%s/files/%s\n  out=%s\n' "$NGINX_URL" "$name" "$name"; done >"$WORK/aria2.list"
# transferd_round ROUND SESSION_FIELDS TAG: one batch of the FILES downloads to a new session
# (SESSION_FIELDS: more members of the session's JSON, such as its kind), into bench/TAGROUND;
# sets ROUND_RATE (files/s) and ROUND_CPU_MS (the daemon's CPU for it).
transferd_round() {
    local round="$1" fields="$2" tag="$3" answer session cpu_before completed failed seconds
    answer="$(post /v1/sessions "{\"configuration\":{\"httpMaximumConnectionsPerHost\":$CONCURRENCY}$fields}")"
    session="$(json_string "$answer" id)" || die "session: $answer"
    download_batch_body "$FILES" "$NGINX_URL" "bench/$tag$round" >"$WORK/files-batch.json"
    log "(a) round $round: transferd, one batch to session $session${fields:+ ($fields)}"
    cpu_before="$(process_cpu_ms "$DAEMON_PID")"
    # The client posts the batch and long-polls the session's completion events (types=, so the
    # other four events of each download neither wake nor fill a poll) over one keep-alive
    # connection, and times from the POST to the last completion.
    timeout "$TIMEOUT" "$WORK/submit_client" --batch "${DAEMON_URL##*:}" "$session" "$WORK/files-batch.json" \
        "$FILES" "$TIMEOUT" >"$WORK/submit.out" || die "the batch of $FILES downloads did not complete"
    ROUND_CPU_MS=$(($(process_cpu_ms "$DAEMON_PID") - cpu_before))
    read -r _ completed _ failed _ seconds <"$WORK/submit.out"
    [ "$completed" -eq "$FILES" ] || die "$completed of $FILES downloads completed"
    [ "$failed" -eq 0 ] || die "$failed download tasks failed"
    ROUND_RATE="$(rate "$FILES" "$seconds")"
    check_files "$WORK/data/downloads/bench/$tag$round" transferd
}

start_bench_daemon --max-transfers 64
CURL_RUNS=() ARIA2_RUNS=() TRANSFERD_RUNS=() EPHEMERAL_RUNS=()
CURL_CPU_MS=0 ARIA2_CPU_MS=0 TRANSFERD_CPU_MS=0 EPHEMERAL_CPU_MS=0
for ((round = 1; round <= ROUNDS; round++)); do
    log "(a) round $round of $ROUNDS: $FILES files with curl --parallel --parallel-max $CONCURRENCY"
    sed "s|/ROUND/|/r$round/|" "$WORK/curl.cfg.in" >"$WORK/curl.cfg"
    mkdir -p "$WORK/out/curl/r$round"
    t0="$(now_ns)"
    cpu_of timeout "$TIMEOUT" curl -sS --no-progress-meter --fail --parallel --parallel-max "$CONCURRENCY" --config "$WORK/curl.cfg" || die "curl --parallel failed"
    CURL_RUNS+=("$(rate "$FILES" "$(seconds_of $(($(now_ns) - t0)))")")
    CURL_CPU_MS=$((CURL_CPU_MS + CPU_MS))
    check_files "$WORK/out/curl/r$round" curl

    if [ "$WANT_ARIA2" = "1" ]; then
        log "(a) round $round: aria2c -j$CONCURRENCY -i LIST"
        mkdir -p "$WORK/out/aria2/r$round"
        t0="$(now_ns)"
        cpu_of timeout "$TIMEOUT" aria2c --quiet=true -j"$CONCURRENCY" --max-connection-per-server=1 --split=1 \
            --file-allocation=none --allow-overwrite=true --auto-file-renaming=false \
            --dir="$WORK/out/aria2/r$round" -i "$WORK/aria2.list" || die "aria2c failed"
        ARIA2_RUNS+=("$(rate "$FILES" "$(seconds_of $(($(now_ns) - t0)))")")
        ARIA2_CPU_MS=$((ARIA2_CPU_MS + CPU_MS))
        check_files "$WORK/out/aria2/r$round" aria2c
    fi

    # The stored round's trailing work (checkpoints letting completed tasks go) may fall in the
    # round after it: the two kinds take turns at going first.
    for kind in $([ $((round % 2)) -eq 1 ] && echo "default ephemeral" || echo "ephemeral default"); do
        if [ "$kind" = default ]; then
            transferd_round "$round" "" r
            TRANSFERD_RUNS+=("$ROUND_RATE")
            TRANSFERD_CPU_MS=$((TRANSFERD_CPU_MS + ROUND_CPU_MS))
        else
            transferd_round "$round" ',"kind":"ephemeral"' e
            EPHEMERAL_RUNS+=("$ROUND_RATE")
            EPHEMERAL_CPU_MS=$((EPHEMERAL_CPU_MS + ROUND_CPU_MS))
        fi
    done
done
CURL_FPS="$(printf '%.0f' "$(median "${CURL_RUNS[@]}")")"
TRANSFERD_FPS="$(printf '%.0f' "$(median "${TRANSFERD_RUNS[@]}")")"
EPHEMERAL_FPS="$(printf '%.0f' "$(median "${EPHEMERAL_RUNS[@]}")")"
[ "$WANT_ARIA2" = "1" ] && ARIA2_FPS="$(printf '%.0f' "$(median "${ARIA2_RUNS[@]}")")"

# ---- b. single POSTs over one keep-alive connection ---------------------------------------------

log "(b) $SUBMIT single POSTs (suspended tasks) over one connection"
printf '{"kind":"data","request":{"url":"%s/files/f00000"},"state":"suspended"}' "$NGINX_URL" >"$WORK/one.json"
submit /v1/sessions/shared/tasks "$WORK/one.json" "$SUBMIT" 1000 201
SUBMIT_S="$(submit_field total 3)"
FIRST_S="$(awk '$1 == "group" && $2 == 1 { print $3 }' "$WORK/submit.out")"
LAST_S="$(awk '$1 == "group" { s = $3 } END { print s }' "$WORK/submit.out")"
SUBMIT_LATENCY="$(submit_field latency_us)"

# The floor of this machine for one request in flight over one loopback connection: nginx
# answering a static 8-byte file to the same client (no parsing, no store, no commit).
log "(b) $SUBMIT GETs of a static file from nginx over one connection (the machine's floor)"
timeout "$TIMEOUT" "$WORK/submit_client" "${NGINX_URL##*:}" /tiny.json - "$SUBMIT" 1000 200 >"$WORK/submit.out" \
    || die "nginx GETs failed"
FLOOR_S="$(submit_field total 3)"
FLOOR_LATENCY="$(submit_field latency_us)"

RPC_S=""
if [ "$WANT_ARIA2" = "1" ]; then
    log "(b) $SUBMIT aria2.addUri over one connection (aria2c --enable-rpc --pause=true)"
    rpc_port="$(free_port)"
    aria2c --enable-rpc --rpc-listen-port="$rpc_port" --pause=true --dir="$WORK/out/rpc" --quiet=true \
        --max-concurrent-downloads=1 >"$WORK/logs/aria2-rpc.log" 2>&1 </dev/null &
    rpc_pid=$!
    record_peer aria2c-rpc "$rpc_pid"
    for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$rpc_port/jsonrpc" && break; sleep 0.1; done
    printf '{"jsonrpc":"2.0","id":"b","method":"aria2.addUri","params":[["%s/files/f00000"]]}' "$NGINX_URL" >"$WORK/rpc.json"
    timeout "$TIMEOUT" "$WORK/submit_client" "$rpc_port" /jsonrpc "$WORK/rpc.json" "$SUBMIT" 1000 200 >"$WORK/submit.out" \
        || die "aria2 addUri failed"
    RPC_S="$(submit_field total 3)"
    RPC_FIRST_S="$(awk '$1 == "group" && $2 == 1 { print $3 }' "$WORK/submit.out")"
    RPC_LAST_S="$(awk '$1 == "group" { s = $3 } END { print s }' "$WORK/submit.out")"
    stop_peer aria2c-rpc "$rpc_pid"
fi

# ---- c. batches --------------------------------------------------------------------------------

log "(c) $BATCHES batches of $BATCH suspended tasks"
batch_body "$BATCH" "{\"kind\":\"data\",\"request\":{\"url\":\"$NGINX_URL/files/f00000\"},\"state\":\"suspended\"}" >"$WORK/batch.json"
submit /v1/sessions/shared/tasks:batch "$WORK/batch.json" "$BATCHES" 1 201
BATCH_S="$(submit_field total 3)"
RSS_AFTER_SUBMIT_KIB="$(kib_field "$DAEMON_PID" VmRSS)"
stop_peer transferd "$DAEMON_PID"
# The floor under (c): SQLite alone writing the same rows, the same number to a transaction, in
# one set-based statement each (bench/sqlite_floor.py), into a copy of the store's schema.
log "(c) the same rows written by SQLite alone (bench/sqlite_floor.py)"
read -r _ SQLITE_FLOOR_RATE SQLITE_FLOOR_S SQLITE_FLOOR_VERSION SQLITE_LEAN_RATE RECORD_BYTES LEAN_BYTES < <("$PYTHON" bench/sqlite_floor.py \
    "$WORK/data/transferd.sqlite3" "$WORK/sqlite-floor.db" "$BATCHES" "$BATCH") \
    || die "bench/sqlite_floor.py failed"
[ -n "${LEAN_BYTES:-}" ] || die "bench/sqlite_floor.py printed no figure"

# ---- d, e. a long queue: memory and admission -------------------------------------------------------

rm -rf "$WORK/data"
start_bench_daemon --max-transfers 512
answer="$(post /v1/sessions '{"configuration":{"httpMaximumConnectionsPerHost":1}}')"
QUEUE_SESSION="$(json_string "$answer" id)" || die "session: $answer"
answer="$(post "/v1/sessions/$QUEUE_SESSION/tasks" "{\"kind\":\"download\",\"request\":{\"url\":\"$NGINX_URL/stall/big.bin\"}}")"
STALLED_ID="$(json_number "$answer" id)" || die "stalled task: $answer"
# One URL for every probe: the URL cache must not answer them (a hit never reaches the engine),
# so each asks to load.
printf '{"kind":"data","request":{"url":"%s/files/f00000","cachePolicy":"reloadIgnoringLocalCacheData"}}' "$NGINX_URL" >"$WORK/probe.json"

# probe: PROBES POSTs to a new session with room for all of them at once (none waits for
# another's completion); sets PROBE_US (median µs) and checks that each was admitted.
PROBES=50
probe() {
    local answer session admitted
    answer="$(post /v1/sessions "{\"configuration\":{\"httpMaximumConnectionsPerHost\":64}}")"
    session="$(json_string "$answer" id)" || die "session: $answer"
    submit "/v1/sessions/$session/tasks" "$WORK/probe.json" "$PROBES" "$PROBES" 201 '"phase":"connecting"'
    PROBE_US="$(submit_field latency_us)"
    admitted="$(submit_field matched)"
    [ "$admitted" -eq "$PROBES" ] || die "only $admitted of $PROBES probe tasks were admitted inside their POST"
}

# fill_queue TOTAL: queues running tasks in the queue session until TOTAL are queued.
QUEUED_NOW=0
fill_queue() {
    local target="$1" size
    while [ "$QUEUED_NOW" -lt "$target" ]; do
        size=$((target - QUEUED_NOW))
        [ "$size" -gt 10000 ] && size=10000
        batch_body "$size" "{\"kind\":\"data\",\"request\":{\"url\":\"$NGINX_URL/files/f00001\"}}" >"$WORK/queue.json"
        submit "/v1/sessions/$QUEUE_SESSION/tasks:batch" "$WORK/queue.json" 1 1 201
        QUEUED_NOW=$((QUEUED_NOW + size))
    done
}

probe
PROBE_0_US="$PROBE_US"
RSS_EMPTY_KIB="$(kib_field "$DAEMON_PID" VmRSS)"
fill_queue 1000
probe
PROBE_1K_US="$PROBE_US"
log "(d) queueing $QUEUED tasks behind task $STALLED_ID"
fill_queue "$QUEUED"
sleep 1 # let the store writer and allocator settle before reading RSS
RSS_FULL_KIB="$(kib_field "$DAEMON_PID" VmRSS)"
probe
PROBE_FULL_US="$PROBE_US"
answer="$(curl -fsS "$DAEMON_URL/v1/tasks/$STALLED_ID")"
[[ "$answer" =~ \"state\":\"running\" ]] || die "the stalled task is no longer running: $answer"
answer="$(curl -fsS "$DAEMON_URL/v1/sessions/$QUEUE_SESSION/tasks?limit=1&cursor=$STALLED_ID")"
[[ "$answer" =~ \"phase\":\"queued\" ]] || die "the first task behind the stalled one is not queued: $answer"

# ---- report ------------------------------------------------------------------------------------

SUBMIT_RATE="$(rate "$SUBMIT" "$SUBMIT_S")"
FIRST_RATE="$(rate 1000 "$FIRST_S")"
LAST_RATE="$(rate 1000 "$LAST_S")"
BATCH_RATE="$(rate $((BATCHES * BATCH)) "$BATCH_S")"
PER_TASK_KIB="$(awk -v a="$RSS_EMPTY_KIB" -v b="$RSS_FULL_KIB" -v n="$QUEUED_NOW" 'BEGIN { printf "%.2f", (b - a) / n }')"
CPU_MODEL="$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
{
    echo
    echo "transferd scheduler benchmark ($(bench_commit)), nginx $("$NGINX_BIN" -v 2>&1 | sed 's|.*nginx/||') on 127.0.0.1"
    echo "machine: nproc $(nproc), ${CPU_MODEL:-unknown CPU}, load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
    echo
    echo "(a) $FILES files of $FILE_BYTES bytes, $CONCURRENCY at a time (count and sizes checked), $ROUNDS rounds: median files/s (each round)"
    printf '    %-48s %8s  (%s)\n' "curl --parallel --parallel-max $CONCURRENCY" "$CURL_FPS" "${CURL_RUNS[*]}"
    if [ "$WANT_ARIA2" = "1" ]; then
        printf '    %-48s %8s  (%s)\n' "aria2c -j$CONCURRENCY -i LIST" "$ARIA2_FPS" "${ARIA2_RUNS[*]}"
    fi
    printf '    %-48s %8s  (%s)\n' "transferd (one batch, POST to last completion)" "$TRANSFERD_FPS" "${TRANSFERD_RUNS[*]}"
    printf '    %-48s %8s  (%s)\n' "transferd, ephemeral session (nothing stored)" "$EPHEMERAL_FPS" "${EPHEMERAL_RUNS[*]}"
    echo "    transferd/curl $(ratio "$TRANSFERD_FPS" "$CURL_FPS") (goal >= 0.5, then 1)$([ "$WANT_ARIA2" = "1" ] && echo ", transferd/aria2 $(ratio "$TRANSFERD_FPS" "$ARIA2_FPS") (goal >= 5)")"
    echo "    CPU per file (user + system; the daemon's, the client's): curl $(per_file_us "$CURL_CPU_MS") µs$([ "$WANT_ARIA2" = "1" ] && echo ", aria2c $(per_file_us "$ARIA2_CPU_MS") µs"), transferd $(per_file_us "$TRANSFERD_CPU_MS") µs (ephemeral $(per_file_us "$EPHEMERAL_CPU_MS") µs); transferd/curl $(ratio "$TRANSFERD_CPU_MS" "$CURL_CPU_MS")"
    echo "    what storing costs: transferd/ephemeral $(ratio "$TRANSFERD_FPS" "$EPHEMERAL_FPS") in files/s, $(awk -v a="$TRANSFERD_CPU_MS" -v b="$EPHEMERAL_CPU_MS" -v n="$((FILES * ROUNDS))" 'BEGIN { printf "%.0f", (a - b) * 1000 / n }') µs CPU per file"
    echo
    echo "(b) $SUBMIT single POSTs of suspended tasks over one keep-alive connection"
    echo "    transferd: $SUBMIT_RATE tasks/s overall, first thousand $FIRST_RATE/s, last thousand $LAST_RATE/s (last/first $(ratio "$LAST_RATE" "$FIRST_RATE")), median latency $SUBMIT_LATENCY µs   goal >= 20000/s"
    FLOOR_RATE="$(rate "$SUBMIT" "$FLOOR_S")"
    echo "    nginx, a static file to the same client (this machine's floor): $FLOOR_RATE requests/s, median latency $FLOOR_LATENCY µs; transferd/nginx $(ratio "$SUBMIT_RATE" "$FLOOR_RATE")"
    if [ -n "$RPC_S" ]; then
        RPC_RATE="$(rate "$SUBMIT" "$RPC_S")"
        echo "    aria2 addUri (paused): $RPC_RATE calls/s overall, first thousand $(rate 1000 "$RPC_FIRST_S")/s, last thousand $(rate 1000 "$RPC_LAST_S")/s; transferd/aria2 $(ratio "$SUBMIT_RATE" "$RPC_RATE")"
    fi
    echo
    echo "(c) $BATCHES batches of $BATCH suspended tasks: $BATCH_RATE tasks/s ($BATCH_S s)   goal >= 100000/s"
    echo "    SQLite $SQLITE_FLOOR_VERSION alone, the same rows in one statement a batch (this machine's floor): $SQLITE_FLOOR_RATE rows/s ($SQLITE_FLOOR_S s); transferd/SQLite $(ratio "$BATCH_RATE" "$SQLITE_FLOOR_RATE")"
    echo "    the same with the record's null members left out ($RECORD_BYTES -> $LEAN_BYTES bytes a record): $SQLITE_LEAN_RATE rows/s"
    echo "    daemon VmRSS after (b) and (c): $(awk -v k="$RSS_AFTER_SUBMIT_KIB" 'BEGIN { printf "%.1f", k / 1024 }') MiB with $((SUBMIT + BATCHES * BATCH)) suspended tasks, and in memory the $((FILES * ROUNDS)) completed downloads of (a)'s ephemeral sessions"
    echo
    echo "(d) $QUEUED_NOW tasks queued behind one stalled transfer: VmRSS $(awk -v k="$RSS_EMPTY_KIB" 'BEGIN { printf "%.1f", k / 1024 }') MiB -> $(awk -v k="$RSS_FULL_KIB" 'BEGIN { printf "%.1f", k / 1024 }') MiB, $PER_TASK_KIB KiB per queued task   goal <= 1"
    echo
    echo "(e) POST of a task admitted at once (median of $PROBES), with the queue at:"
    echo "    0: $PROBE_0_US µs   1000: $PROBE_1K_US µs   $QUEUED_NOW: $PROBE_FULL_US µs   ratio $QUEUED_NOW/1000: $(ratio "$PROBE_FULL_US" "$PROBE_1K_US") (log ratio $(awk -v n="$QUEUED_NOW" 'BEGIN { printf "%.2f", log(n) / log(1000) }'))"
    echo "    admission share over the empty queue: 1000: $(awk -v a="$PROBE_1K_US" -v b="$PROBE_0_US" 'BEGIN { printf "%.1f", a - b }') µs, $QUEUED_NOW: $(awk -v a="$PROBE_FULL_US" -v b="$PROBE_0_US" 'BEGIN { printf "%.1f", a - b }') µs"
    echo
    printf 'bench: files/s transferd %s (ephemeral %s) curl %s%s (CPU/file transferd %s µs curl %s µs); POST %s tasks/s (last/first %s, nginx static GET %s/s); batch %s tasks/s (SQLite alone %s rows/s, %s without null members); %s KiB/queued task; admit %s->%s µs (1k->%s)\n' \
        "$TRANSFERD_FPS" "$EPHEMERAL_FPS" "$CURL_FPS" "$([ "$WANT_ARIA2" = "1" ] && echo " aria2 $ARIA2_FPS")" "$(per_file_us "$TRANSFERD_CPU_MS")" "$(per_file_us "$CURL_CPU_MS")" "$SUBMIT_RATE" "$(ratio "$LAST_RATE" "$FIRST_RATE")" "$FLOOR_RATE" \
        "$BATCH_RATE" "$SQLITE_FLOOR_RATE" "$SQLITE_LEAN_RATE" "$PER_TASK_KIB" "$PROBE_1K_US" "$PROBE_FULL_US" "$QUEUED_NOW"
}
