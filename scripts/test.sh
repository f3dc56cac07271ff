#!/usr/bin/env bash
# The test command: bash scripts/test.sh [--system] [swift test or pytest arguments...]
#
# On a new Debian bookworm machine with the Swift toolchain (at /opt/swift) and root, it
#   1. installs the missing Debian packages (build dependencies, nginx, curl, jq for the docs'
#      curl examples that test_doc_examples runs, tcpdump for the DSCP test, publicsuffix for the
#      cookie jars, the proxies, chromium and chromedriver for the dashboard test, tmux for the
#      terminal test, debootstrap for the container and package checks, python3-seccomp and
#      systemd (systemd-analyze) for the package check, the PostgreSQL server, and Python if
#      needed),
#   2. creates .build-peers/venv with the pinned Python packages of scripts/requirements/*.txt
#      (httpbin, gunicorn, trustme, pytest and what the system tests drive),
#   3. starts the peers on 127.0.0.1 on free ports (httpbin under gunicorn, nginx serving files,
#      and for the proxy and TLS tests tinyproxy, microsocks and nginx over TLS with certificates
#      made now; a PostgreSQL cluster made with initdb), waits until they answer, and exports
#      their addresses (TRANSFERD_TEST_HTTPBIN, ..., TRANSFERD_TEST_POSTGRES),
#   4. runs 'swift build --build-tests' (begun as soon as step 1 has the build's own packages,
#      beside the rest of steps 1-3), then 'swift test'
#      with this script's arguments; with
#      none, in two passes: every test in parallel but those of Tests/serial-suites.txt (timed
#      ones), then those in two shards at once, each one test at a time,
#   5. runs the system tests (Tests/System, pytest, two at a time): the built executables from outside, as
#      users meet them (dashboard in a browser, transferctl in a terminal, /metrics, the
#      OpenAPI contract, the container's runtime stage, the .deb installed and run),
#   6. stops the peers it started, by PID, however it exits.
# With no arguments it runs both 4 and 5; with arguments, only swift test (4) gets them; with
# --system first, only the system tests run, and the remaining arguments go to pytest.
# Exits non-zero if either failed. Peer logs are in .build-peers/logs; screenshots and other
# artifacts of the system tests in test-artifacts/.
#
# Environment:
#   TRANSFERD_TEST_ONLY_PEERS=1  start the peers, check each answers, stop them; no build, no tests
#                                (to check steps 1-3 and 5 while the package does not build).
#   TRANSFERD_SCRATCH_PATH=DIR   build in DIR (swift --scratch-path) instead of .build.
#
# Examples: bash scripts/test.sh
#           bash scripts/test.sh --filter TransferCoreTests
#           bash scripts/test.sh --system -k dashboard
set -euo pipefail

SCRIPT_NAME="test.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/common.sh
source scripts/lib/common.sh
# shellcheck source=scripts/lib/peers.sh
source scripts/lib/peers.sh
# shellcheck source=scripts/lib/network-peers.sh
source scripts/lib/network-peers.sh
# shellcheck source=scripts/lib/peers-ftp.sh
source scripts/lib/peers-ftp.sh
# shellcheck source=scripts/lib/peers-stream.sh
source scripts/lib/peers-stream.sh
# shellcheck source=scripts/lib/peers-postgres.sh
source scripts/lib/peers-postgres.sh

log "repository: $PWD"
# Where the command's time goes, printed last (CI shows the end of the output): each phase's
# seconds, from the end of the one before.
phase_times=()
phase_started=$SECONDS
phase_done() {
    phase_times+=("$1 $((SECONDS - phase_started)) s")
    phase_started=$SECONDS
}
report_phase_times() {
    local summary="" phase
    for phase in "${phase_times[@]}"; do summary+="$phase, "; done
    log "time: ${summary}total ${SECONDS} s"
}
ensure_swift
# What the build needs first; the packages of the peers and the system tests (chromium and the
# PostgreSQL server are the large ones) are installed after the build has started, beside it.
ensure_apt_packages "${BUILD_APT_PACKAGES[@]}"

# Options of every swift build and swift test below (they must match, or swift test builds
# again). -gnone: the test build carries no DWARF. Swift Testing reports a failure's place from
# #fileID and #line, test discovery reads the index store, and a crash's backtrace still names
# its functions from the symbol table; only line numbers in a backtrace and lldb are lost. A new
# debug build took 300 s real, 551 s user with it against 393 s, 705 s without (2026-11-29,
# /usr/bin/time swift build --build-tests --scratch-path NEW [-Xswiftc -gnone]). Build without
# it (swift build --build-tests) to debug a test in lldb.
swift_options=(-Xswiftc -gnone)
if [ -n "${TRANSFERD_SCRATCH_PATH:-}" ]; then
    swift_options+=(--scratch-path "$TRANSFERD_SCRATCH_PATH")
fi

# The debug build (the tests and every executable: the system tests run them) starts now, in
# the background, and the peers start while it runs: on a new machine the venv and the peers
# took about a minute that the build, minutes long, hides. Its output goes to a log, printed
# once it ends (wait_for_build).
build_pid=""
build_log=.build-peers/logs/build.log
if [ "${TRANSFERD_TEST_ONLY_PEERS:-0}" != "1" ]; then
    mkdir -p .build-peers/logs
    log "swift build --build-tests ${swift_options[*]} (in the background while the peers start; log $build_log)"
    swift build --build-tests "${swift_options[@]}" >"$build_log" 2>&1 &
    build_pid=$!
fi
stop_build() {
    if [ -n "$build_pid" ] && kill -0 "$build_pid" 2>/dev/null; then
        log "stopping the build (pid $build_pid)"
        kill "$build_pid" 2>/dev/null || true
    fi
}
# Until the full trap below: a failed install must not leave the build running.
trap 'stop_build' EXIT
ensure_apt_packages nginx-light curl jq openssl tcpdump publicsuffix tinyproxy microsocks \
    chromium chromium-driver tmux debootstrap python3-seccomp systemd socat "${POSTGRES_PACKAGES[@]}"
# Waits for the build; prints its end, or all of it when it failed, and then fails.
wait_for_build() {
    local status=0
    wait "$build_pid" || status=$?
    build_pid=""
    if [ "$status" -ne 0 ]; then
        cat "$build_log"
        die "swift build --build-tests exited with $status"
    fi
    grep -E "warning:|error:" "$build_log" | sort -u || true
    tail -n 1 "$build_log"
}

ensure_python
ensure_peer_venv

# The background release build of the container check, if still running (its process group).
stop_container_prebuild() {
    if [ -n "${container_prebuild:-}" ] && kill -0 "$container_prebuild" 2>/dev/null; then
        log "stopping the container check's release build (pid $container_prebuild)"
        pkill -TERM -P "$container_prebuild" 2>/dev/null || true
        kill "$container_prebuild" 2>/dev/null || true
    fi
}

# The serial pass's shards, if still running (run_serial_shards).
serial_shard_pids=()
stop_serial_shards() {
    local pid
    for pid in "${serial_shard_pids[@]}"; do
        kill -0 "$pid" 2>/dev/null && kill "$pid" 2>/dev/null || true
    done
}

# Stop the peers on every exit; turn SIGINT and SIGTERM into an exit so the EXIT trap runs.
trap 'stop_build; stop_serial_shards; stop_container_prebuild; stop_peers; remove_network_peer_files; remove_ftp_peer_files; remove_postgres_peer_files; report_phase_times' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_httpbin
start_nginx
start_network_peers
start_ftp_peers
start_stream_peers
start_postgres_peer
phase_done "install and peers"

if [ "${TRANSFERD_TEST_ONLY_PEERS:-0}" = "1" ]; then
    log "TRANSFERD_TEST_ONLY_PEERS=1: checking the peers, then stopping them"
    curl -fsS "$TRANSFERD_TEST_HTTPBIN/get?from=test.sh" >&2
    curl -fsS "$TRANSFERD_TEST_NGINX/files/hello.txt" >&2
    curl -fsS -o /dev/null -r 1000- -w "nginx range request: %{http_code}, %{size_download} bytes\n" \
        "$TRANSFERD_TEST_NGINX/files/1MiB.bin" >&2
    curl -fsS --cacert "$TRANSFERD_TEST_TLS_CA" --proxy "http://$TRANSFERD_TEST_HTTP_PROXY" "$TRANSFERD_TEST_TLS_VALID/files/hello.txt" >&2
    curl -fsS --proxy "socks5h://$TRANSFERD_TEST_SOCKS_PROXY" "$TRANSFERD_TEST_NGINX/files/hello.txt" >&2
    curl -fsS --user "$TRANSFERD_TEST_FTP_USER:$TRANSFERD_TEST_FTP_PASSWORD" "$TRANSFERD_TEST_FTP/" >&2
    "$(postgres_bin_dir)/psql" -q -d "$TRANSFERD_TEST_POSTGRES" -c "SELECT version()" >&2
    log "peers OK"
    exit 0
fi

mode=all
if [ "${1:-}" = "--system" ]; then
    mode=system
    shift
elif [ "$#" -gt 0 ]; then
    mode=swift
fi

wait_for_build
phase_done build

log "peers: TRANSFERD_TEST_HTTPBIN=$TRANSFERD_TEST_HTTPBIN TRANSFERD_TEST_NGINX=$TRANSFERD_TEST_NGINX"
# The container check (a system test) needs a release build of its own (the package check makes
# its .deb from the same build, scripts/package-deb.sh). It starts with the Swift tests under
# SCHED_IDLE and takes what they leave idle: about a quarter of the parallel pass (perf record -a
# over the pass, 2026-11-29) and most of the serial pass, which waits on sockets and timers. The
# check then finds it done (its lock orders the two). SCHED_IDLE, not nice 19: a waking test
# preempts an idle-policy task at once, but waits out a nice-19 compiler's slice (in a cold run
# with nice 19 the parallel pass took 151 s against 108 s; under SCHED_IDLE it was not slower).
# On a new machine this build is what ends the command: the system tests that need it run last.
container_prebuild=""
start_container_prebuild() {
    [ "$mode" = all ] || return 0
    mkdir -p .build-peers/logs
    # nice 19 where the kernel or a sandbox refuses SCHED_IDLE.
    local idle=(chrt --idle 0)
    chrt --idle 0 true 2>/dev/null || idle=(nice -n 19)
    "${idle[@]}" bash scripts/container-check.sh --build-only >.build-peers/logs/container-prebuild.log 2>&1 &
    container_prebuild=$!
    log "container check's release build started beside the tests under ${idle[*]} (pid $container_prebuild, log .build-peers/logs/container-prebuild.log)"
}
# The lines of Tests/serial-suites.txt as "seconds name", comments and blank lines left out.
serial_lines() {
    awk '!/^#/ && NF { print ($2 ? $2 : 1), $1 }' Tests/serial-suites.txt
}

# A swift test --filter/--skip pattern matching the tests named by "seconds name" lines.
serial_pattern_of() {
    printf '[.](%s)[/(]' "$(printf '%s\n' "$1" | awk 'NF { print $2 }' | paste -sd'|')"
}

# The serial pass: the lines of Tests/serial-suites.txt split into two shards of about equal
# seconds (longest first, each to the shard with fewer), run at once, each one test at a time,
# by the test bundle swift test built (two swift test commands would wait on each other's lock
# of the build folder). Each shard's output goes to a log, printed whole once both have ended.
run_serial_shards() {
    local bundle shard status=0 shard_status
    bundle="$(swift build "${swift_options[@]}" --show-bin-path)/transferdPackageTests.xctest"
    [ -x "$bundle" ] || die "no test bundle at $bundle"
    mkdir -p .build-peers/logs
    local assigned
    assigned="$(serial_lines | sort -rn -k1,1 | awk '{ if (a <= b) { a += $1; print 0, $0 } else { b += $1; print 1, $0 } }')"
    for shard in 0 1; do
        local lines
        lines="$(printf '%s\n' "$assigned" | awk -v s="$shard" '$1 == s { print $2, $3 }')"
        log "serial shard $shard: $(printf '%s\n' "$lines" | awk '{ n++; t += $1 } END { print n " lines, about " t " s" }'), log .build-peers/logs/serial-shard-$shard.log"
        NO_COLOR=1 "$bundle" --testing-library swift-testing --no-parallel --filter "$(serial_pattern_of "$lines")" \
            >".build-peers/logs/serial-shard-$shard.log" 2>&1 &
        serial_shard_pids+=($!)
    done
    for shard in 0 1; do
        shard_status=0
        wait "${serial_shard_pids[$shard]}" || shard_status=$?
        log "serial shard $shard exited with $shard_status; its output:"
        cat ".build-peers/logs/serial-shard-$shard.log"
        if [ "$status" -eq 0 ]; then status=$shard_status; fi
    done
    return "$status"
}

swift_status=0
if [ "$mode" != system ]; then
    if [ "$#" -eq 0 ]; then
        # Two passes. Most tests run in parallel; those of Tests/serial-suites.txt (they assert
        # elapsed time, rates or memory, kill processes, or race a running transfer; its header
        # says more) then run apart: beside other suites on 2 cores the CPU contention alone
        # made them fail. Measured on a quiet 2-core machine: 431 s all serial; about 100 s all
        # parallel, with 7 timed suites failing; about 70 s + 225 s in two passes. The second
        # pass runs as two shards at once, each one test at a time (run_serial_shards).
        # A test's id is Target.Suite/test(...): a line 'Suite' matches '.Suite/', a line
        # 'Suite/test' matches '.Suite/test(' (swift test's filter has no word boundaries: \b
        # matches nothing).
        serial_pattern="$(serial_pattern_of "$(serial_lines)")"
        log "swift test ${swift_options[*]} --parallel --skip <the tests of Tests/serial-suites.txt>"
        start_container_prebuild
        swift test "${swift_options[@]}" --parallel --skip "$serial_pattern" || swift_status=$?
        log "swift test (parallel pass) exited with $swift_status"
        phase_done "parallel tests"
        serial_status=0
        run_serial_shards || serial_status=$?
        log "serial pass exited with $serial_status"
        phase_done "serial tests"
        if [ "$swift_status" -eq 0 ]; then swift_status=$serial_status; fi
    else
        # With arguments (a --filter, say): one run, serial unless --parallel is given.
        order=(--no-parallel)
        for argument in "$@"; do
            if [ "$argument" = "--parallel" ]; then order=(); fi
        done
        log "swift test ${swift_options[*]} ${order[*]} $*"
        swift test "${swift_options[@]}" "${order[@]}" "$@" || swift_status=$?
        phase_done "swift tests"
    fi
    log "swift test exited with $swift_status"
fi

system_status=0
if [ "$mode" != swift ]; then
    TRANSFERD_TEST_BIN_DIR="$(swift build "${swift_options[@]}" --show-bin-path)"
    export TRANSFERD_TEST_BIN_DIR
    export TRANSFERD_TEST_ARTIFACTS="$PWD/test-artifacts"
    mkdir -p "$TRANSFERD_TEST_ARTIFACTS"
    pytest_arguments=("$@")
    [ "$mode" = all ] && pytest_arguments=()
    log "system tests: pytest Tests/System ${pytest_arguments[*]} (executables in $TRANSFERD_TEST_BIN_DIR)"
    # Two at a time, a file's tests together in one worker (a file's tests share fixtures and
    # folders), files in collection order (not xdist's largest-first): conftest.py puts the
    # checks that wait for the release build last. Arguments come after, so -n 0 runs them one
    # at a time again.
    "$PEERS_VENV/bin/python" -m pytest Tests/System -v --durations=8 -p no:cacheprovider \
        -n 2 --dist loadfile --no-loadscope-reorder \
        "${pytest_arguments[@]}" || system_status=$?
    log "system tests exited with $system_status"
    phase_done "system tests"
fi

if [ "$swift_status" -ne 0 ]; then exit "$swift_status"; fi
exit "$system_status"
