# shellcheck shell=bash
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
