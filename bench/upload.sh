#!/usr/bin/env bash
# The upload benchmark: bash bench/upload.sh
#
# Measures how fast a transferd upload task sends a large blob to a server on loopback, against
# curl sending the same file, and the daemon's memory while it does:
#   1. builds the release binary (swift build -c release --product transferd, the same build as
#      scripts/run.sh and bench/download.sh, so it is reused),
#   2. writes a random file of BENCH_SIZE_MB MiB into a temporary folder,
#   3. starts the sink (bench/upload_sink.py: reads each PUT body to its end, hashing it with
#      SHA-256, keeps nothing, then answers {"bytes":N,"sha256":"..."}) and transferd (its own
#      data folder), each on 127.0.0.1 on a free port,
#   4. posts the file as a blob ('curl -T FILE -X POST .../v1/blobs': streamed, never whole in
#      memory), timed, its sha256 checked against the source, the daemon's VmRSS sampled,
#   5. runs BENCH_ROUNDS rounds; each round times both tools once, the order rotating:
#      'curl -s -H "Expect:" -T FILE URL' (a PUT; "Expect:" because transferd sends none either),
#      and a transferd upload task {"kind":"upload","request":{"url":URL,"method":"PUT",
#      "body":{"blob":ID}}} (posted with curl, its progress long-polled until completed; timed
#      from the POST to the answer that says completed). Every upload's sink answer must say
#      BENCH_SIZE_MB MiB and the source's sha256,
#   6. samples the daemon's VmRSS every 100 ms while its uploads run,
#   7. prints a table (median MB/s per tool, transferd/curl, peak RSS) and a last line to quote.
# The sink hashes at roughly 1-2 GB/s here, so it may cap both tools alike: the ratio then
# understates a difference, it does not invent one. The sink and transferd are stopped by PID
# and the temporary folder removed however it exits. MB is 10^6 bytes, MiB 2^20.
#
# Environment:
#   BENCH_SIZE_MB=1024       size of the file, in MiB
#   BENCH_ROUNDS=3           rounds (each tool once per round)
#   BENCH_TIMEOUT=600        seconds one transfer may take before the benchmark gives up
#   BENCH_BINARY=PATH        use this transferd binary instead of building one; no build step
#   BENCH_TMPDIR=DIR         where the temporary folder goes (default: $TMPDIR or /tmp)
set -euo pipefail

SCRIPT_NAME="bench-upload"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/common.sh
source scripts/lib/common.sh
# shellcheck source=scripts/lib/peers.sh
source scripts/lib/peers.sh
# shellcheck source=scripts/lib/bench.sh
source scripts/lib/bench.sh

bench_settings

bench_begin

# ---- helpers -------------------------------------------------------------------------------------

# check_answer JSON WHAT: the sink's (or the blob endpoint's) answer names the whole source.
check_answer() {
    local answer="$1" what="$2" bytes sum
    bytes="$(json_number "$answer" bytes || json_number "$answer" size)" || die "$what: no byte count in $answer"
    sum="$(json_string "$answer" sha256)" || die "$what: no sha256 in $answer"
    [ "$bytes" -eq "$SIZE_BYTES" ] || die "$what: $bytes bytes arrived, expected $SIZE_BYTES"
    [ "$sum" = "$SOURCE_SHA256" ] || die "$what: sha256 $sum differs from the source's $SOURCE_SHA256"
}

ELAPSED_NS=0

run_curl() {
    local round="$1" t0 t1 answer
    t0="$(now_ns)"
    answer="$(curl -sS --max-time "$TIMEOUT" -H 'Expect:' -T "$SOURCE" "$SINK_URL/curl-$round")" \
        || die "curl round $round failed"
    t1="$(now_ns)"
    ELAPSED_NS=$((t1 - t0))
    check_answer "$answer" "curl round $round"
}

POLLS=()

run_transferd() {
    local round="$1" answer
    start_sampler
    run_task "$round" "{\"kind\":\"upload\",\"request\":{\"url\":\"$SINK_URL/transferd-$round\",\"method\":\"PUT\",\"body\":{\"blob\":\"$BLOB_ID\"}}}"
    read_sampler
    [ "$PEAK" -gt "$UPLOAD_PEAK_KIB" ] && UPLOAD_PEAK_KIB="$PEAK"
    UPLOAD_SAMPLES=$((UPLOAD_SAMPLES + SAMPLES))
    POLLS+=("$TASK_POLLS")
    # The task's response body is the sink's answer.
    answer="$(curl -sS --max-time 10 "$DAEMON_URL/v1/tasks/$TASK_ID/body")" || die "transferd round $round: GET body failed"
    check_answer "$answer" "transferd round $round"
}

# ---- set up ----------------------------------------------------------------------------------

ensure_swift
ensure_apt_packages "${BUILD_APT_PACKAGES[@]}" curl
ensure_python

bench_binary

WORK="$(mktemp -d "${BENCH_TMPDIR:-${TMPDIR:-/tmp}}/transferd-bench-upload.XXXXXX")"
mkdir -p "$WORK/data"
SOURCE="$WORK/source.bin"
log "writing a ${SIZE_MB} MiB random file in $WORK"
head -c "$SIZE_BYTES" /dev/urandom >"$SOURCE"
SOURCE_SHA256="$(sha256sum "$SOURCE" | cut -d' ' -f1)"
sync "$SOURCE" # its write-back must not run during the uploads

for attempt in 1 2 3; do
    port="$(free_port)"
    log "starting the sink on 127.0.0.1:$port (attempt $attempt)"
    "$PYTHON" bench/upload_sink.py "$port" >>"$WORK/sink.log" 2>&1 </dev/null &
    pid=$!
    record_peer sink "$pid"
    if wait_for_http sink "$pid" "http://127.0.0.1:$port/healthz" 15; then
        SINK_URL="http://127.0.0.1:$port"
        break
    fi
    stop_peer sink "$pid"
    [ "$attempt" -lt 3 ] || die "the sink did not start; see $WORK/sink.log"
done

start_bench_daemon

RSS_IDLE_KIB="$(kib_field "$DAEMON_PID" VmRSS)"
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"

# ---- the blob ----------------------------------------------------------------------------------

log "POST $DAEMON_URL/v1/blobs (curl -T FILE -X POST: streamed)"
start_sampler
t0="$(now_ns)"
answer="$(curl -sS --max-time "$TIMEOUT" -H 'Expect:' -H 'Content-Type: application/octet-stream' -X POST -T "$SOURCE" \
    "$DAEMON_URL/v1/blobs")" || die "POST /v1/blobs failed"
t1="$(now_ns)"
read_sampler
BLOB_PEAK_KIB="$PEAK"
BLOB_SAMPLES="$SAMPLES"
BLOB_MBPS="$(mbps "$SIZE_BYTES" $((t1 - t0)))"
BLOB_ID="$(json_string "$answer" id)" || die "POST /v1/blobs answered: $answer"
check_answer "$answer" "the blob"
log "blob $BLOB_ID: $BLOB_MBPS MB/s, daemon peak VmRSS $((BLOB_PEAK_KIB / 1024)) MiB"

# ---- rounds ------------------------------------------------------------------------------------

TOOLS=(curl transferd)
UPLOAD_PEAK_KIB=0
UPLOAD_SAMPLES=0
declare -A RESULTS=()
log "commands: curl -s -H 'Expect:' -T FILE $SINK_URL/curl-N"
log "          POST $DAEMON_URL/v1/sessions/shared/tasks {\"kind\":\"upload\",\"request\":{\"url\":\"$SINK_URL/transferd-N\",\"method\":\"PUT\",\"body\":{\"blob\":\"$BLOB_ID\"}}}, then GET .../progress?after=V&wait=30 until completed"
for ((round = 1; round <= ROUNDS; round++)); do
    for ((k = 0; k < 2; k++)); do
        tool="${TOOLS[$(((k + round - 1) % 2))]}"
        case "$tool" in
            curl) run_curl "$round" ;;
            transferd) run_transferd "$round" ;;
        esac
        RESULTS[$tool]+="$(mbps "$SIZE_BYTES" "$ELAPSED_NS") "
        log "round $round: $tool $(mbps "$SIZE_BYTES" "$ELAPSED_NS") MB/s ($(awk -v ns="$ELAPSED_NS" 'BEGIN { printf "%.2f", ns / 1e9 }') s)"
    done
done
RSS_HWM_KIB="$(kib_field "$DAEMON_PID" VmHWM)"
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"

# ---- report ------------------------------------------------------------------------------------

mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
read -r -a curl_values <<<"${RESULTS[curl]}"
read -r -a transferd_values <<<"${RESULTS[transferd]}"
CURL_MEDIAN="$(median "${curl_values[@]}")"
TRANSFERD_MEDIAN="$(median "${transferd_values[@]}")"
RATIO="$(awk -v a="$TRANSFERD_MEDIAN" -v b="$CURL_MEDIAN" 'BEGIN { printf "%.2f", a / b }')"
PEAK_KIB="$UPLOAD_PEAK_KIB"
[ "$BLOB_PEAK_KIB" -gt "$PEAK_KIB" ] && PEAK_KIB="$BLOB_PEAK_KIB"
[ "$RSS_HWM_KIB" -gt "$PEAK_KIB" ] && PEAK_KIB="$RSS_HWM_KIB"
RSS_OK="$(awk -v k="$PEAK_KIB" 'BEGIN { print (k < 64 * 1024) ? "met" : "NOT met" }')"
CPU_MODEL="$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
COMMIT="$(bench_commit)"

{
    echo
    echo "transferd upload benchmark: ${SIZE_MB} MiB ($SIZE_BYTES bytes) PUT to bench/upload_sink.py (reads and hashes every byte) on 127.0.0.1, $ROUNDS rounds, order rotating"
    echo "machine: nproc $(nproc), kernel $(uname -r), ${CPU_MODEL:-unknown CPU}, $(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM, load average $LOAD_BEFORE before, $LOAD_AFTER after"
    echo "transferd: $BINARY ($COMMIT); curl $(curl --version | awk 'NR == 1 { print $2 }')"
    echo "MB/s = 10^6 bytes per second; transferd timed from the POST of the task to the progress answer saying completed"
    echo
    header="$(printf '%-10s' tool)"
    for ((round = 1; round <= ROUNDS; round++)); do header+="$(printf ' %9s' "round $round")"; done
    header+="$(printf ' %11s %9s' 'median MB/s' 'vs curl')"
    echo "$header"
    for tool in "${TOOLS[@]}"; do
        read -r -a values <<<"${RESULTS[$tool]}"
        line="$(printf '%-10s' "$tool")"
        for value in "${values[@]}"; do line+="$(printf ' %9s' "$value")"; done
        med="$(median "${values[@]}")"
        line+="$(printf ' %11s %9s' "$med" "$(awk -v a="$med" -v b="$CURL_MEDIAN" 'BEGIN { printf "%.2f", a / b }')")"
        echo "$line"
    done
    echo
    echo "blob (POST /v1/blobs, curl -T):  $BLOB_MBPS MB/s; daemon peak VmRSS $(mib "$BLOB_PEAK_KIB") MiB ($BLOB_SAMPLES samples)"
    echo "transferd/curl (medians):        $RATIO"
    echo "daemon RSS:                      idle $(mib "$RSS_IDLE_KIB") MiB; peak VmRSS $(mib "$UPLOAD_PEAK_KIB") MiB sampled every 100 ms during the upload tasks ($UPLOAD_SAMPLES samples); VmHWM $(mib "$RSS_HWM_KIB") MiB at the end (blob included)   goal < 64 MiB: $RSS_OK"
    echo "progress polls per task:         ${POLLS[*]}"
    echo "checked:                         every upload's byte count and sha256 (the sink's answer) against the source, and the blob's"
    echo
    printf 'bench: upload transferd/curl = %s (transferd %.0f MB/s, curl %.0f MB/s), daemon peak RSS %.0f MiB (blob %.0f MiB, upload %.0f MiB)\n' \
        "$RATIO" "$TRANSFERD_MEDIAN" "$CURL_MEDIAN" "$(mib "$PEAK_KIB")" "$(mib "$BLOB_PEAK_KIB")" "$(mib "$UPLOAD_PEAK_KIB")"
}
