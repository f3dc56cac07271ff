# shellcheck shell=bash
# shellcheck disable=SC2034 # the globals set here are read by the scripts that source this
# Helpers shared by the benchmarks (bench/download.sh, bench/upload.sh): clocks, rates, medians,
# /proc readings of the daemon, JSON fields of the daemon's compact answers. Sourced, not run.

now_ns() { date +%s%N; }

# mbps BYTES NANOSECONDS: MB/s with one decimal.
mbps() { awk -v b="$1" -v ns="$2" 'BEGIN { printf "%.1f", (b / 1e6) / (ns / 1e9) }'; }

# median VALUES...: the middle value (the mean of the two middle ones for an even count).
median() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) { print "n/a"; exit }
        if (NR % 2) printf "%.1f", v[(NR + 1) / 2]; else printf "%.1f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# kib_field PID FIELD: a "kB" field of /proc/PID/status (VmRSS, VmHWM), in KiB.
kib_field() {
    local key value _unit
    while read -r key value _unit; do
        if [ "$key" = "$2:" ]; then
            printf '%s\n' "$value"
            return 0
        fi
    done <"/proc/$1/status"
    printf '0\n'
}

# cpu_ticks PID: user + system time of PID (all its threads), in clock ticks.
cpu_ticks() {
    local stat
    stat="$(cat "/proc/$1/stat")"
    stat="${stat##*) }" # fields from 3 on: the command name may hold spaces
    # shellcheck disable=SC2086 # split on purpose
    set -- $stat
    printf '%s\n' "$((${12} + ${13}))"
}

# rss_sampler PID OUT: every 100 ms, writes the highest VmRSS seen (KiB) and the sample count to
# OUT. No forks but 'sleep', so that it costs next to nothing while the transfer runs.
rss_sampler() {
    local pid="$1" out="$2" peak=0 samples=0 key value _unit
    while [ -r "/proc/$pid/status" ]; do
        while read -r key value _unit; do
            if [ "$key" = "VmRSS:" ]; then
                samples=$((samples + 1))
                [ "$value" -gt "$peak" ] && peak="$value"
                break
            fi
        done <"/proc/$pid/status" 2>/dev/null || break
        printf '%s %s\n' "$peak" "$samples" >"$out"
        sleep 0.1
    done
}

# The JSON answers are compact ("key":value); these read one top-level-enough field.
json_string() { [[ "$1" =~ \"$2\":\"([^\"]*)\" ]] && printf '%s\n' "${BASH_REMATCH[1]}"; }
json_number() { [[ "$1" =~ \"$2\":([0-9]+) ]] && printf '%s\n' "${BASH_REMATCH[1]}"; }

# ---- what both benchmarks do the same way ---------------------------------------------------------
# They share these globals: SIZE_MB, ROUNDS, TIMEOUT, SIZE_BYTES (bench_settings), WORK (their
# temporary folder), BINARY, DAEMON_PID, DAEMON_URL, SAMPLER_PID.

# bench_begin: the state bench_cleanup reads starts empty, and the traps that call it are set
# (EXIT cleans up; INT and TERM exit with the usual codes, through EXIT).
bench_begin() {
    WORK=""
    SAMPLER_PID=""
    DAEMON_PID=""
    trap 'bench_cleanup $?' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

# bench_settings: BENCH_SIZE_MB, BENCH_ROUNDS and BENCH_TIMEOUT, checked.
bench_settings() {
    SIZE_MB="${BENCH_SIZE_MB:-1024}"
    ROUNDS="${BENCH_ROUNDS:-3}"
    TIMEOUT="${BENCH_TIMEOUT:-600}"
    [[ "$SIZE_MB" =~ ^[1-9][0-9]*$ ]] || die "BENCH_SIZE_MB must be a positive integer, got '$SIZE_MB'"
    [[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || die "BENCH_ROUNDS must be a positive integer, got '$ROUNDS'"
    [[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "BENCH_TIMEOUT must be a positive integer, got '$TIMEOUT'"
    SIZE_BYTES=$((SIZE_MB * 1048576))
}

# start_sampler: samples the daemon's VmRSS into $WORK/rss.out until stop_sampler.
start_sampler() {
    rm -f "$WORK/rss.out"
    rss_sampler "$DAEMON_PID" "$WORK/rss.out" &
    SAMPLER_PID=$!
}

stop_sampler() {
    if [ -n "$SAMPLER_PID" ]; then
        kill "$SAMPLER_PID" 2>/dev/null || true
        wait "$SAMPLER_PID" 2>/dev/null || true
        SAMPLER_PID=""
    fi
}

# read_sampler: stops the sampler; sets PEAK (KiB) and SAMPLES.
read_sampler() {
    stop_sampler
    read -r PEAK SAMPLES <"$WORK/rss.out" || { PEAK=0; SAMPLES=0; }
}

# bench_cleanup STATUS: the EXIT trap's work: the sampler and the peers (by PID, newest first),
# then the temporary folder, showing the daemon's log first if the run failed.
bench_cleanup() {
    local status="$1"
    stop_sampler
    stop_peers
    if [ -n "$WORK" ] && [ -d "$WORK" ]; then
        if [ "$status" -ne 0 ] && [ -f "$WORK/transferd.log" ]; then
            log "transferd log (last 20 lines):"
            tail -n 20 "$WORK/transferd.log" >&2 || true
        fi
        rm -rf "$WORK"
    fi
}

# bench_binary: sets BINARY: BENCH_BINARY, or the release build (as scripts/run.sh makes it).
bench_binary() {
    if [ -n "${BENCH_BINARY:-}" ]; then
        BINARY="$BENCH_BINARY"
        log "BENCH_BINARY=$BINARY: no build"
    else
        log "swift build -c release --product transferd"
        timeout 1800 swift build -c release --product transferd >&2 || die "swift build -c release failed (exit $?)"
        BINARY="$(timeout 300 swift build -c release --show-bin-path)/transferd"
    fi
    [ -x "$BINARY" ] || die "no binary at $BINARY"
}

# bench_commit: what was measured, for the report: the commit (and whether Sources/ had changes).
bench_commit() {
    if [ -n "${BENCH_BINARY:-}" ]; then
        echo "given by BENCH_BINARY"
        return
    fi
    local commit
    commit="commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    if [ -n "$(git status --porcelain -- Sources Package.swift 2>/dev/null)" ]; then
        commit="$commit + uncommitted changes in Sources/"
    fi
    echo "$commit"
}

# start_bench_daemon [FLAGS...]: starts $BINARY on a free port with its data in $WORK/data (and
# FLAGS, e.g. --max-transfers 64); sets DAEMON_PID and DAEMON_URL.
start_bench_daemon() {
    local attempt port
    for attempt in 1 2 3; do
        port="$(free_port)"
        log "starting transferd on 127.0.0.1:$port (attempt $attempt), data in $WORK/data"
        "$BINARY" --listen "127.0.0.1:$port" --data-dir "$WORK/data" --log-level warning "$@" \
            >>"$WORK/transferd.log" 2>&1 </dev/null &
        DAEMON_PID=$!
        record_peer transferd "$DAEMON_PID"
        if wait_for_http transferd "$DAEMON_PID" "http://127.0.0.1:$port/healthz" 30; then
            DAEMON_URL="http://127.0.0.1:$port"
            return
        fi
        stop_peer transferd "$DAEMON_PID"
    done
    die "transferd did not start; see $WORK/transferd.log"
}

# start_bench_nginx CONNECTIONS HTTP_LINES SERVER_LINES: nginx on a free 127.0.0.1 port serving
# $WORK/www (one worker, sendfile, no access log, /healthz), with extra directives for its http
# and server blocks; sets NGINX_BIN and NGINX_URL. Needs $WORK/nginx/tmp and $WORK/logs.
start_bench_nginx() {
    local connections="$1" http_lines="$2" server_lines="$3" user_line="" attempt port pid
    NGINX_BIN="$(command -v nginx || echo /usr/sbin/nginx)"
    [ "$(id -u)" -eq 0 ] && user_line="user root;"
    for attempt in 1 2 3; do
        port="$(free_port)"
        cat >"$WORK/nginx/nginx.conf" <<EOF
# Written by $SCRIPT_NAME.
$user_line
worker_processes 1;
pid $WORK/nginx/nginx.pid;
error_log $WORK/logs/nginx-error.log warn;
events { worker_connections $connections; }
http {
    access_log off;
$(nginx_http_defaults "$WORK/nginx")
    sendfile on;
    keepalive_timeout 30s;
    $http_lines
    server {
        listen 127.0.0.1:$port;
        root $WORK/www;
        location = /healthz { return 200 "ok\n"; }
        $server_lines
    }
}
EOF
        log "starting nginx on 127.0.0.1:$port (attempt $attempt)"
        "$NGINX_BIN" -p "$WORK/nginx" -e "$WORK/logs/nginx-error.log" -c "$WORK/nginx/nginx.conf" -g 'daemon off;' \
            >>"$WORK/logs/nginx.log" 2>&1 </dev/null &
        pid=$!
        record_peer nginx "$pid"
        if wait_for_http nginx "$pid" "http://127.0.0.1:$port/healthz" 15; then
            NGINX_URL="http://127.0.0.1:$port"
            return
        fi
        stop_peer nginx "$pid"
    done
    die "nginx did not start; see $WORK/logs/nginx-error.log"
}

# run_task ROUND BODY: posts the task BODY to the shared session and long-polls its progress
# until it completed; sets TASK_ID, TASK_POLLS and ELAPSED_NS (from the POST to the answer that
# says completed). Fails the benchmark if the task completed with an error (checked untimed).
run_task() {
    local round="$1" body="$2" t0 t1 answer state version deadline wait_s task
    TASK_POLLS=0
    deadline=$((SECONDS + TIMEOUT))
    t0="$(now_ns)"
    answer="$(curl -sS --max-time 30 -X POST -H 'Content-Type: application/json' -d "$body" \
        "$DAEMON_URL/v1/sessions/shared/tasks")" || die "transferd round $round: POST failed"
    TASK_ID="$(json_number "$answer" id)" || die "transferd round $round: POST answered: $answer"
    version=0
    state=""
    while [ "$state" != "completed" ]; do
        [ "$SECONDS" -lt "$deadline" ] || die "transferd round $round: task $TASK_ID not completed within ${TIMEOUT}s"
        wait_s=$((deadline - SECONDS))
        [ "$wait_s" -gt 30 ] && wait_s=30
        answer="$(curl -sS --max-time $((wait_s + 10)) "$DAEMON_URL/v1/tasks/$TASK_ID/progress?after=$version&wait=$wait_s")" \
            || die "transferd round $round: progress poll failed"
        TASK_POLLS=$((TASK_POLLS + 1))
        state="$(json_string "$answer" state)" || die "transferd round $round: progress answered: $answer"
        version="$(json_number "$answer" version)" || die "transferd round $round: progress answered: $answer"
    done
    t1="$(now_ns)"
    ELAPSED_NS=$((t1 - t0))
    task="$(curl -sS --max-time 10 "$DAEMON_URL/v1/tasks/$TASK_ID")" || die "transferd round $round: GET task failed"
    if [[ "$task" =~ \"error\":\{ ]]; then
        die "transferd round $round: task $TASK_ID completed with an error: $task"
    fi
}

# process_cpu_ms PID: the CPU time (user + system, ms) process PID used so far.
process_cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.0f", ($14 + $15) * 1000 / hz }' "/proc/$1/stat"; }
# rate N SECONDS: N per second, rounded.
rate() { awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", (s > 0) ? n / s : 0 }'; }
# ratio A B: A / B with two decimals.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
# download_batch_body COUNT URL [FOLDER]: a tasks:batch body of COUNT downloads of
# URL/files/f00000, f00001, ... (the names `split -d -a 5` gives), each to the destination
# FOLDER/<name> (FOLDER: bench).
download_batch_body() {
    local count="$1" url="$2" folder="${3:-bench}" i
    printf '{"tasks":['
    for ((i = 0; i < count; i++)); do
        [ "$i" -gt 0 ] && printf ','
        printf '{"kind":"download","request":{"url":"%s/files/f%05d"},"destination":"%s/f%05d"}' "$url" "$i" "$folder" "$i"
    done
    printf ']}'
}
