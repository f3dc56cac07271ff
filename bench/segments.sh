#!/usr/bin/env bash
# The segmented download benchmark: bash bench/segments.sh
#
# Measures a transferd download task with "segments" (issue 18 item 2) against aria2c with the
# same number of connections, on one file served by nginx on loopback:
#   1. builds the release binary (as bench/download.sh; BENCH_BINARY skips it),
#   2. writes a random file of BENCH_SIZE_MB MiB (default 32) for the limited runs and one of
#      BENCH_FULL_SIZE_MB MiB (default 256) for the unlimited ones (32 MiB take 0.1 s there,
#      too short to time on a busy machine) into a temporary folder,
#   3. starts nginx (one worker, sendfile) serving it twice: /limited/ with 'limit_rate 1m'
#      (each connection at most 1 MiB/s, as a server that limits connections) and /files/ at
#      full speed; and transferd (its own data folder), each on 127.0.0.1 on a free port,
#   4. runs BENCH_ROUNDS rounds (default 2); each round times, order rotating:
#        limited:   'aria2c -x N -s N --min-split-size=1M' and a transferd task with
#                   "segments": N (N = BENCH_SEGMENTS, default 4);
#        unlimited: transferd tasks with "segments": 1 and with "segments": N.
#      transferd is timed from the POST to the progress answer that says completed. Every
#      output is checked (size; sha256 in round 1) and deleted, with an untimed sync after,
#   5. prints a table (median MB/s per run), the ratios transferd/aria2c (limited) and
#      segments N / segments 1 (unlimited), and a last line to quote.
# nginx and transferd are stopped by PID and the temporary folder removed however it exits.
# MB is 10^6 bytes, MiB 2^20. aria2c is installed with apt-get if missing.
#
# Environment:
#   BENCH_SIZE_MB=32         size of the file, in MiB
#   BENCH_ROUNDS=2           rounds
#   BENCH_FULL_SIZE_MB=256   size of the file of the unlimited runs, in MiB
#   BENCH_SEGMENTS=4         connections for aria2c -x/-s and transferd's "segments"
#   BENCH_TIMEOUT=600        seconds one transfer may take before the benchmark gives up
#   BENCH_BINARY=PATH        use this transferd binary instead of building one
#   BENCH_TMPDIR=DIR         where the temporary folder goes (default: $TMPDIR or /tmp)
set -euo pipefail

SCRIPT_NAME="bench-segments"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/common.sh
source scripts/lib/common.sh
# shellcheck source=scripts/lib/peers.sh
source scripts/lib/peers.sh
# shellcheck source=scripts/lib/bench.sh
source scripts/lib/bench.sh

BENCH_SIZE_MB="${BENCH_SIZE_MB:-32}"
BENCH_ROUNDS="${BENCH_ROUNDS:-2}"
bench_settings
SEGMENTS="${BENCH_SEGMENTS:-4}"
FULL_SIZE_MB="${BENCH_FULL_SIZE_MB:-256}"
[[ "$FULL_SIZE_MB" =~ ^[1-9][0-9]*$ ]] || die "BENCH_FULL_SIZE_MB must be a positive integer, got '$FULL_SIZE_MB'"
FULL_SIZE_BYTES=$((FULL_SIZE_MB * 1048576))
[[ "$SEGMENTS" =~ ^([2-9]|1[0-6])$ ]] || die "BENCH_SEGMENTS must be from 2 to 16, got '$SEGMENTS'"

bench_begin

# mbps2 BYTES NANOSECONDS and median2 VALUES...: as mbps and median, with two decimals (a
# limited run moves about 4 MB/s, where one decimal is a 2 % step).
mbps2() { awk -v b="$1" -v ns="$2" 'BEGIN { printf "%.2f", (b / 1e6) / (ns / 1e9) }'; }
median2() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) printf "%.2f", v[(NR + 1) / 2]; else printf "%.2f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# check_output FILE ROUND RUN [BYTES SHA256]: the file has the source's size (and sha256 in
# round 1); deleted. BYTES and SHA256 default to the limited runs' file.
check_output() {
    local file="$1" round="$2" run="$3" bytes="${4:-$SIZE_BYTES}" expected="${5:-$SOURCE_SHA256}" size sum
    [ -f "$file" ] || die "$run round $round: no file at $file"
    size="$(stat -c %s "$file")"
    [ "$size" -eq "$bytes" ] || die "$run round $round: $file has $size bytes, expected $bytes"
    if [ "$round" -eq 1 ]; then
        sum="$(sha256sum "$file" | cut -d' ' -f1)"
        [ "$sum" = "$expected" ] || die "$run round $round: sha256 $sum differs from the source's $expected"
    fi
    rm -f "$file"
    timeout 120 sync || log "sync took over 120 s"
}

# run_aria2c ROUND URL RUN
run_aria2c() {
    local round="$1" url="$2" run="$3" name t0 t1
    name="$run-$round.bin"
    t0="$(now_ns)"
    timeout "$TIMEOUT" aria2c --quiet=true -x "$SEGMENTS" -s "$SEGMENTS" --min-split-size=1M \
        --file-allocation=none --allow-overwrite=true --auto-file-renaming=false \
        --dir="$WORK/out" --out="$name" "$url" || die "aria2c round $round failed (exit $?)"
    t1="$(now_ns)"
    ELAPSED_NS=$((t1 - t0))
    check_output "$WORK/out/$name" "$round" "$run"
}

# run_transferd ROUND URL SEGMENTS RUN [BYTES SHA256]
run_transferd() {
    local round="$1" url="$2" segments="$3" run="$4" destination
    destination="bench/$run-$round.bin"
    run_task "$round" "{\"kind\":\"download\",\"request\":{\"url\":\"$url\"},\"segments\":$segments,\"destination\":\"$destination\"}"
    check_output "$WORK/data/downloads/$destination" "$round" "$run" "${5:-$SIZE_BYTES}" "${6:-$SOURCE_SHA256}"
}

# ---- set up ----------------------------------------------------------------------------------

ensure_swift
# aria2c is the reference here, as in bench/scheduler.sh: installed if missing.
ensure_apt_packages "${BUILD_APT_PACKAGES[@]}" nginx-light curl aria2
ensure_python
bench_binary

WORK="$(mktemp -d "${BENCH_TMPDIR:-${TMPDIR:-/tmp}}/transferd-bench.XXXXXX")"
mkdir -p "$WORK/www" "$WORK/out" "$WORK/data" "$WORK/nginx/tmp" "$WORK/logs"

log "writing a ${SIZE_MB} MiB random file in $WORK/www"
head -c "$SIZE_BYTES" /dev/urandom >"$WORK/www/source.bin"
SOURCE_SHA256="$(sha256sum "$WORK/www/source.bin" | cut -d' ' -f1)"
log "writing a ${FULL_SIZE_MB} MiB random file in $WORK/www"
head -c "$FULL_SIZE_BYTES" /dev/urandom >"$WORK/www/full.bin"
FULL_SHA256="$(sha256sum "$WORK/www/full.bin" | cut -d' ' -f1)"
sync "$WORK/www/source.bin" "$WORK/www/full.bin"

# /files/ at full speed, /limited/ at 1 MiB/s per connection (nginx's limit_rate is per connection).
start_bench_nginx 64 "tcp_nopush on;" "location /files/ { alias $WORK/www/; } location /limited/ { alias $WORK/www/; limit_rate 1m; }"
FULL_URL="$NGINX_URL/files/full.bin"
LIMITED_URL="$NGINX_URL/limited/source.bin"

start_bench_daemon

log "warm-up: curl -s -o /dev/null $FULL_URL"
curl -fsS --max-time "$TIMEOUT" -o /dev/null "$FULL_URL" || die "warm-up fetch failed"
LOAD_BEFORE="$(cut -d' ' -f1-3 /proc/loadavg)"

RUNS=(aria2c-limited transferd-limited transferd-full-1 transferd-full-n)
declare -A RESULTS=()
declare -A LABELS=(
    [aria2c-limited]="aria2c -x$SEGMENTS -s$SEGMENTS, limit_rate 1m"
    [transferd-limited]="transferd segments $SEGMENTS, limit_rate 1m"
    [transferd-full-1]="transferd segments 1, unlimited, $FULL_SIZE_MB MiB"
    [transferd-full-n]="transferd segments $SEGMENTS, unlimited, $FULL_SIZE_MB MiB"
)

log "commands: aria2c -x $SEGMENTS -s $SEGMENTS --min-split-size=1M --file-allocation=none -d DIR -o FILE $LIMITED_URL"
log "          POST $DAEMON_URL/v1/sessions/shared/tasks {\"kind\":\"download\",\"request\":{\"url\":URL},\"segments\":N,\"destination\":...}, then GET .../progress until completed"

for ((round = 1; round <= ROUNDS; round++)); do
    count="${#RUNS[@]}"
    for ((k = 0; k < count; k++)); do
        run="${RUNS[$(((k + round - 1) % count))]}"
        case "$run" in
            aria2c-limited) run_aria2c "$round" "$LIMITED_URL" "$run" ;;
            transferd-limited) run_transferd "$round" "$LIMITED_URL" "$SEGMENTS" "$run" ;;
            transferd-full-1) run_transferd "$round" "$FULL_URL" 1 "$run" "$FULL_SIZE_BYTES" "$FULL_SHA256" ;;
            transferd-full-n) run_transferd "$round" "$FULL_URL" "$SEGMENTS" "$run" "$FULL_SIZE_BYTES" "$FULL_SHA256" ;;
        esac
        bytes="$SIZE_BYTES"
        [[ "$run" == transferd-full-* ]] && bytes="$FULL_SIZE_BYTES"
        RESULTS[$run]+="$(mbps2 "$bytes" "$ELAPSED_NS") "
        log "round $round: $run $(mbps2 "$bytes" "$ELAPSED_NS") MB/s ($(awk -v ns="$ELAPSED_NS" 'BEGIN { printf "%.2f", ns / 1e9 }') s)"
    done
done
LOAD_AFTER="$(cut -d' ' -f1-3 /proc/loadavg)"

# ---- report ------------------------------------------------------------------------------------

declare -A MEDIANS=()
for run in "${RUNS[@]}"; do
    read -r -a values <<<"${RESULTS[$run]}"
    MEDIANS[$run]="$(median2 "${values[@]}")"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
SPLIT_RATIO="$(ratio "${MEDIANS[transferd-full-n]}" "${MEDIANS[transferd-full-1]}")"
SPLIT_OK="$(awk -v r="$SPLIT_RATIO" 'BEGIN { print (r >= 0.95) ? "met" : "NOT met" }')"
LIMITED_RATIO="$(ratio "${MEDIANS[transferd-limited]}" "${MEDIANS[aria2c-limited]}")"
LIMITED_OK="$(awk -v r="$LIMITED_RATIO" 'BEGIN { print (r >= 0.95) ? "met" : "NOT met" }')"
CPU_MODEL="$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)"
{
    echo
    echo "transferd segmented download benchmark: ${SIZE_MB} MiB ($SIZE_BYTES bytes) limited, ${FULL_SIZE_MB} MiB unlimited, from nginx $("$NGINX_BIN" -v 2>&1 | sed 's|.*nginx/||') on 127.0.0.1, $ROUNDS rounds, order rotating"
    echo "machine: nproc $(nproc), kernel $(uname -r), ${CPU_MODEL:-unknown CPU}, load average $LOAD_BEFORE before the rounds, $LOAD_AFTER after"
    echo "transferd: $BINARY ($(bench_commit)); $(aria2c --version 2>/dev/null | head -n 1 || echo 'aria2c: none')"
    echo "MB/s = 10^6 bytes per second; limit_rate 1m = 1 MiB/s (1.05 MB/s) per connection"
    echo
    header="$(printf '%-44s' run)"
    for ((round = 1; round <= ROUNDS; round++)); do header+="$(printf ' %9s' "round $round")"; done
    echo "$header$(printf ' %11s' 'median MB/s')"
    for run in "${RUNS[@]}"; do
        line="$(printf '%-44s' "${LABELS[$run]}")"
        read -r -a values <<<"${RESULTS[$run]}"
        for value in "${values[@]}"; do line+="$(printf ' %9s' "$value")"; done
        echo "$line$(printf ' %11s' "${MEDIANS[$run]}")"
    done
    echo
    echo "limited origin, $SEGMENTS connections: transferd/aria2c = $LIMITED_RATIO   goal >= 0.95: $LIMITED_OK"
    echo "unlimited origin: segments $SEGMENTS / segments 1 = $SPLIT_RATIO   goal >= 0.95 (no slower): $SPLIT_OK"
    echo "checked: size of every output; sha256 against the source in round 1"
    echo
    printf 'bench: segments %s vs aria2c -x%s -s%s at limit_rate 1m = %s (transferd %.2f MB/s, aria2c %.2f MB/s); unlimited segments %s/1 = %s (%.0f vs %.0f MB/s)\n' \
        "$SEGMENTS" "$SEGMENTS" "$SEGMENTS" "$LIMITED_RATIO" "${MEDIANS[transferd-limited]}" "${MEDIANS[aria2c-limited]}" \
        "$SEGMENTS" "$SPLIT_RATIO" "${MEDIANS[transferd-full-n]}" "${MEDIANS[transferd-full-1]}"
}
