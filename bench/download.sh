#!/usr/bin/env bash
# The download benchmark: bash bench/download.sh
#
# Measures how fast a transferd download task fetches a large file from nginx on loopback,
# against curl (the engine transferd drives) and, if it can be installed, aria2c:
#   1. builds the release binary (swift build -c release --product transferd, the same build
#      as scripts/run.sh, so it is reused),
#   2. writes a random file of BENCH_SIZE_MB MiB into a temporary folder,
#   3. starts nginx (sendfile on) and transferd (its own data folder), each on 127.0.0.1 on a
#      free port,
#   4. runs BENCH_ROUNDS rounds; each round times every tool once, the order rotating from round
#      to round: 'curl -s -o FILE URL', a transferd download task of the same URL (posted with
#      curl, its progress long-polled until it completes; timed from the POST to the answer that
#      says completed; the file must then be at its destination), and aria2c. Every output file
#      is checked (size; sha256 against the source in the first round) and deleted, and a 'sync'
#      (untimed) lets write-back settle before the next transfer,
#   5. samples the daemon's VmRSS every 100 ms while its downloads run,
#   6. prints a table (median MB/s per tool, transferd/curl, peak RSS, the machine) and a last
#      line to quote.
# nginx and transferd are stopped by PID and the temporary folder removed however it exits.
# MB is 10^6 bytes, MiB 2^20.
#
# Environment:
#   BENCH_SIZE_MB=1024       size of the file, in MiB
#   BENCH_ROUNDS=3           rounds (each tool once per round)
#   BENCH_ARIA2=1            0: leave aria2c out (otherwise it is installed if missing, or skipped)
#   BENCH_TIMEOUT=600        seconds one transfer may take before the benchmark gives up
#   BENCH_BINARY=PATH        use this transferd binary instead of building one (e.g. to compare
#                            two builds); the build step is skipped
#   BENCH_TMPDIR=DIR         where the temporary folder goes (default: $TMPDIR or /tmp); the
#                            source file, every output and transferd's data all live there,
#                            on one file system
set -euo pipefail

SCRIPT_NAME="bench"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/common.sh
source scripts/lib/common.sh
# shellcheck source=scripts/lib/peers.sh
source scripts/lib/peers.sh
# shellcheck source=scripts/lib/bench.sh
source scripts/lib/bench.sh

bench_settings
WANT_ARIA2="${BENCH_ARIA2:-1}"

bench_begin

# ---- helpers (the shared ones are in scripts/lib/bench.sh) ------------------------------------------

# check_output FILE ROUND TOOL: the file has the source's size (and sha256 in round 1); deleted.
check_output() {
    local file="$1" round="$2" tool="$3" size sum
    [ -f "$file" ] || die "$tool round $round: no file at $file"
    size="$(stat -c %s "$file")"
    [ "$size" -eq "$SIZE_BYTES" ] || die "$tool round $round: $file has $size bytes, expected $SIZE_BYTES"
    if [ "$round" -eq 1 ]; then
        sum="$(sha256sum "$file" | cut -d' ' -f1)"
        [ "$sum" = "$SOURCE_SHA256" ] || die "$tool round $round: sha256 $sum differs from the source's $SOURCE_SHA256"
        CHECKED+=("$tool")
    fi
    rm -f "$file"
    # Untimed: write-back still running for one tool's file must not slow the next tool down.
    timeout 120 sync || log "sync took over 120 s"
}

# ---- the tools, one transfer each; each sets ELAPSED_NS and CLIENT_TICKS --------------------------

ELAPSED_NS=0
CLIENT_TICKS=0

# Clock ticks used by this shell's finished children: the 'times' builtin's second line, e.g.
# "0m1.234s 0m0.567s", into CHILD_TICKS. Call it plainly, not in $(...): a subshell's 'times'
# knows nothing of this shell's children.
CHILD_TICKS=0
children_ticks() {
    times >"$WORK/times"
    CHILD_TICKS="$(awk -v hz="$(getconf CLK_TCK)" 'function sec(t, m) { m = t; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", t); sub(/s$/, "", t); return m * 60 + t }
        NR == 2 { printf "%d\n", (sec($1) + sec($2)) * hz }' "$WORK/times")"
}

run_curl() {
    local round="$1"
    local file="$WORK/out/curl-$round.bin" t0 t1 c0
    children_ticks
    c0="$CHILD_TICKS"
    t0="$(now_ns)"
    curl -s --max-time "$TIMEOUT" -o "$file" "$SOURCE_URL" || die "curl round $round failed (exit $?)"
    t1="$(now_ns)"
    children_ticks
    CLIENT_TICKS=$((CHILD_TICKS - c0))
    ELAPSED_NS=$((t1 - t0))
    check_output "$file" "$round" curl
}

run_aria2c() {
    local round="$1"
    local name="aria2c-$round.bin" t0 t1 c0
    children_ticks
    c0="$CHILD_TICKS"
    t0="$(now_ns)"
    timeout "$TIMEOUT" aria2c --quiet=true --max-connection-per-server=1 --split=1 \
        --file-allocation=none --allow-overwrite=true --auto-file-renaming=false \
        --dir="$WORK/out" --out="$name" "$SOURCE_URL" || die "aria2c round $round failed (exit $?)"
    t1="$(now_ns)"
    children_ticks
    CLIENT_TICKS=$((CHILD_TICKS - c0))
    ELAPSED_NS=$((t1 - t0))
    check_output "$WORK/out/$name" "$round" aria2c
}

POLLS=()

run_transferd() {
    local round="$1"
    local destination="bench/transferd-$round.bin" c0 d0
    start_sampler
    children_ticks
    c0="$CHILD_TICKS"
    d0="$(cpu_ticks "$DAEMON_PID")"
    run_task "$round" "{\"kind\":\"download\",\"request\":{\"url\":\"$SOURCE_URL\"},\"destination\":\"$destination\"}"
    CLIENT_TICKS=$(($(cpu_ticks "$DAEMON_PID") - d0))
    children_ticks
    POLLER_TICKS=$((CHILD_TICKS - c0))
    read_sampler
    [ "$PEAK" -gt "$RSS_PEAK_KIB" ] && RSS_PEAK_KIB="$PEAK"
    RSS_SAMPLES=$((RSS_SAMPLES + SAMPLES))
    POLLS+=("$TASK_POLLS")
    check_output "$DOWNLOADS_DIR/$destination" "$round" transferd
}

# ---- set up ----------------------------------------------------------------------------------

ensure_swift
ensure_apt_packages "${BUILD_APT_PACKAGES[@]}" nginx-light curl
ensure_python

bench_binary

ARIA2_NOTE=""
if [ "$WANT_ARIA2" = "1" ] && ! command -v aria2c >/dev/null 2>&1; then
    log "aria2c missing: apt-get install aria2 (skipped if that fails)"
    if ! as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends aria2 >&2; then
        as_root apt-get update -qq >&2 || true
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends aria2 >&2 || true
    fi
fi
TOOLS=(curl transferd)
if [ "$WANT_ARIA2" != "1" ]; then
    ARIA2_NOTE="aria2c: left out (BENCH_ARIA2=$WANT_ARIA2)"
elif command -v aria2c >/dev/null 2>&1; then
    TOOLS+=(aria2c)
else
    ARIA2_NOTE="aria2c: skipped (not installed and 'apt-get install aria2' failed); the reference is curl"
    log "$ARIA2_NOTE"
fi

WORK="$(mktemp -d "${BENCH_TMPDIR:-${TMPDIR:-/tmp}}/transferd-bench.XXXXXX")"
mkdir -p "$WORK/www" "$WORK/out" "$WORK/data" "$WORK/nginx/tmp" "$WORK/logs"
DOWNLOADS_DIR="$WORK/data/downloads"

log "writing a ${SIZE_MB} MiB random file in $WORK/www"
head -c "$SIZE_BYTES" /dev/urandom >"$WORK/www/source.bin"
SOURCE_SHA256="$(sha256sum "$WORK/www/source.bin" | cut -d' ' -f1)"
sync "$WORK/www/source.bin" # its write-back must not run during the first round

# nginx: one worker, sendfile, no access log, the file under /.
start_bench_nginx 64 "tcp_nopush on;" ""
SOURCE_URL="$NGINX_URL/source.bin"

start_bench_daemon

# One untimed fetch so nginx has the file open and in the page cache for everyone.
log "warm-up: curl -s -o /dev/null $SOURCE_URL"
curl -fsS --max-time "$TIMEOUT" -o /dev/null "$SOURCE_URL" || die "warm-up fetch failed"

RSS_IDLE_KIB="$(kib_field "$DAEMON_PID" VmRSS)"
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"
RSS_PEAK_KIB=0
RSS_SAMPLES=0
CHECKED=()
declare -A RESULTS=() TICKS=()
POLLER_TICKS=0
POLLER_TOTAL=0

log "commands: curl -s -o FILE $SOURCE_URL"
log "          POST $DAEMON_URL/v1/sessions/shared/tasks {\"kind\":\"download\",\"request\":{\"url\":\"$SOURCE_URL\"},\"destination\":\"bench/transferd-N.bin\"}, then GET .../progress?after=V&wait=30 until completed"
[ "${#TOOLS[@]}" -eq 3 ] && log "          aria2c --max-connection-per-server=1 --split=1 --file-allocation=none -d DIR -o FILE $SOURCE_URL"

# ---- rounds ------------------------------------------------------------------------------------

for ((round = 1; round <= ROUNDS; round++)); do
    count="${#TOOLS[@]}"
    for ((k = 0; k < count; k++)); do
        tool="${TOOLS[$(((k + round - 1) % count))]}"
        case "$tool" in
            curl) run_curl "$round" ;;
            transferd) run_transferd "$round"; POLLER_TOTAL=$((POLLER_TOTAL + POLLER_TICKS)) ;;
            aria2c) run_aria2c "$round" ;;
        esac
        RESULTS[$tool]+="$(mbps "$SIZE_BYTES" "$ELAPSED_NS") "
        TICKS[$tool]+="$CLIENT_TICKS "
        log "round $round: $tool $(mbps "$SIZE_BYTES" "$ELAPSED_NS") MB/s ($(awk -v ns="$ELAPSED_NS" 'BEGIN { printf "%.2f", ns / 1e9 }') s)"
    done
done
RSS_HWM_KIB="$(kib_field "$DAEMON_PID" VmHWM)"
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"

# ---- report ------------------------------------------------------------------------------------

HZ="$(getconf CLK_TCK)"
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
# cpu_per_gib TICKS...: median CPU seconds per GiB transferred.
cpu_per_gib() {
    local values=() t
    for t in "$@"; do
        values+=("$(awk -v t="$t" -v hz="$HZ" -v b="$SIZE_BYTES" 'BEGIN { printf "%.3f", (t / hz) / (b / 1073741824) }')")
    done
    printf '%s\n' "${values[@]}" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) printf "%.2f", v[(NR + 1) / 2]; else printf "%.2f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

read -r -a curl_values <<<"${RESULTS[curl]}"
read -r -a transferd_values <<<"${RESULTS[transferd]}"
CURL_MEDIAN="$(median "${curl_values[@]}")"
TRANSFERD_MEDIAN="$(median "${transferd_values[@]}")"
RATIO="$(awk -v a="$TRANSFERD_MEDIAN" -v b="$CURL_MEDIAN" 'BEGIN { printf "%.2f", a / b }')"
PEAK_KIB="$RSS_HWM_KIB"
[ "$RSS_PEAK_KIB" -gt "$PEAK_KIB" ] && PEAK_KIB="$RSS_PEAK_KIB"
RATIO_OK="$(awk -v r="$RATIO" 'BEGIN { print (r >= 0.95) ? "met" : "NOT met" }')"
RSS_OK="$(awk -v k="$PEAK_KIB" 'BEGIN { print (k < 64 * 1024) ? "met" : "NOT met" }')"
CPU_MODEL="$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
COMMIT="$(bench_commit)"
read -r -a polls_values <<<"${POLLS[*]}"

{
    echo
    echo "transferd download benchmark: ${SIZE_MB} MiB ($SIZE_BYTES bytes) from nginx $("$NGINX_BIN" -v 2>&1 | sed 's|.*nginx/||') (sendfile on) on 127.0.0.1, $ROUNDS rounds, order rotating"
    echo "machine: nproc $(nproc), kernel $(uname -r), ${CPU_MODEL:-unknown CPU}, $(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM, load average $LOAD_BEFORE before the rounds, $LOAD_AFTER after"
    echo "transferd: $BINARY ($COMMIT); curl $(curl --version | awk 'NR == 1 { print $2 }')"
    echo "MB/s = 10^6 bytes per second; transferd timed from the POST to the progress answer saying completed; untimed sync between transfers"
    echo
    header="$(printf '%-10s' tool)"
    for ((round = 1; round <= ROUNDS; round++)); do header+="$(printf ' %9s' "round $round")"; done
    header+="$(printf ' %11s %9s %13s' 'median MB/s' 'vs curl' 'cpu s/GiB')"
    echo "$header"
    for tool in "${TOOLS[@]}"; do
        read -r -a values <<<"${RESULTS[$tool]}"
        read -r -a ticks <<<"${TICKS[$tool]}"
        line="$(printf '%-10s' "$tool")"
        for value in "${values[@]}"; do line+="$(printf ' %9s' "$value")"; done
        med="$(median "${values[@]}")"
        line+="$(printf ' %11s %9s %13s' "$med" "$(awk -v a="$med" -v b="$CURL_MEDIAN" 'BEGIN { printf "%.2f", a / b }')" "$(cpu_per_gib "${ticks[@]}")")"
        echo "$line"
    done
    [ -n "$ARIA2_NOTE" ] && echo "$ARIA2_NOTE"
    echo "(cpu s/GiB: user+system CPU of the curl or aria2c process, or of the whole transferd daemon)"
    echo
    echo "transferd/curl (medians):  $RATIO   goal >= 0.95: $RATIO_OK"
    echo "daemon RSS:                idle $(mib "$RSS_IDLE_KIB") MiB before the rounds; peak VmRSS $(mib "$RSS_PEAK_KIB") MiB sampled every 100 ms during the transferd rounds ($RSS_SAMPLES samples); VmHWM $(mib "$RSS_HWM_KIB") MiB at the end   goal < 64 MiB: $RSS_OK"
    echo "progress polls per task:   ${polls_values[*]} (client CPU of all POSTs and polls: $(awk -v t="$POLLER_TOTAL" -v hz="$HZ" 'BEGIN { printf "%.2f", t / hz }') s)"
    echo "checked:                   size of every output; sha256 against the source in round 1 (${CHECKED[*]})"
    echo
    printf 'bench: transferd/curl = %s (transferd %.0f MB/s, curl %.0f MB/s), daemon peak RSS %.0f MiB\n' \
        "$RATIO" "$TRANSFERD_MEDIAN" "$CURL_MEDIAN" "$(mib "$PEAK_KIB")"
}
