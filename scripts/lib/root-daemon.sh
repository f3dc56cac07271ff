# shellcheck shell=bash
# Shared by scripts/container-check.sh and scripts/package-check.sh: transferd run in a Debian
# root and the processes around it. Holds the bookkeeping of the processes a check starts (the
# daemon, PID 1 of a PID namespace of its own, and a python3 http.server), ended by PID on every
# exit path; the file to download (the nginx peer's, or one served here); the test CA added to the
# root; the daemon's port, token and log; starting it until GET /healthz answers; stopping it with
# a signal; and the state it leaves. Sourced, not run, after scripts/lib/common.sh and
# scripts/lib/debian-root.sh. Expects, set by the caller: ROOT (the root the daemon runs in),
# CHECK_FILES (what the names of the check's own files under .build-container begin with:
# "$WORK/" or "$WORK/package-") and CHECK_LOCK_FD (the file descriptor of the check's lock).

# ---- processes a check starts, ended by PID on every exit path ----
DAEMON_NS_PID=""   # the unshare process in front of the daemon
DAEMON_PID=""      # the daemon, PID 1 of its namespace (it outlives a killed unshare: its uid change clears --kill-child's death signal)
SERVER_PID=""      # python3 http.server, when no nginx peer is given
MOUNTS_UNDER=""    # where no mount may be left at the end

# Ends the processes above on every exit path (EXIT, INT, TERM) and fails the check when a mount
# is left under DIR. Usage: end_processes_on_exit DIR
end_processes_on_exit() {
    MOUNTS_UNDER="$1"
    trap end_processes EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
}

end_processes() {
    local status=$?
    # The daemon is PID 1 of its namespace: killing it ends the namespace. Killing only the
    # unshare process in front of it would leave it running (seen after a failed check).
    if [ -n "${DAEMON_PID:-}" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
        kill -KILL "$DAEMON_PID" 2>/dev/null || true
    fi
    if [ -n "$DAEMON_NS_PID" ] && kill -0 "$DAEMON_NS_PID" 2>/dev/null; then
        kill -KILL "$DAEMON_NS_PID" 2>/dev/null || true
        wait "$DAEMON_NS_PID" 2>/dev/null || true
    fi
    stop_download_source
    if findmnt -rn -o TARGET | grep -q "^$MOUNTS_UNDER/"; then
        printf '==> %s: error: mounts left under %s:\n%s\n' "$SCRIPT_NAME" "$MOUNTS_UNDER" "$(findmnt -rn -o TARGET | grep "^$MOUNTS_UNDER/")" >&2
        status=1
    fi
    exit "$status"
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ---- the file the daemon downloads, and the test CA ----

# Sets SOURCE_URL and SOURCE_FILE, a file of 1 MiB: the nginx peer's (TRANSFERD_TEST_NGINX and
# TRANSFERD_TEST_NGINX_ROOT) when it is given, else a random one served from ${CHECK_FILES}served
# by a python3 http.server started here on a free loopback port (SERVER_PID).
choose_download_source() {
    if [ -n "${TRANSFERD_TEST_NGINX:-}" ] && [ -n "${TRANSFERD_TEST_NGINX_ROOT:-}" ]; then
        SOURCE_URL="$TRANSFERD_TEST_NGINX/files/1MiB.bin"
        SOURCE_FILE="$TRANSFERD_TEST_NGINX_ROOT/1MiB.bin"
        log "download source: the nginx peer, $SOURCE_URL"
    else
        local served="${CHECK_FILES}served" port i
        rm -rf "$served"
        mkdir -p "$served"
        head -c 1048576 /dev/urandom >"$served/1MiB.bin"
        port="$(free_port)"
        # {CHECK_LOCK_FD}>&-: the check's lock stays with the check, never with a server that could outlive it.
        python3 -m http.server --bind 127.0.0.1 --directory "$served" "$port" >"${CHECK_FILES}http-server.log" 2>&1 {CHECK_LOCK_FD}>&- &
        SERVER_PID=$!
        SOURCE_URL="http://127.0.0.1:$port/1MiB.bin"
        SOURCE_FILE="$served/1MiB.bin"
        for i in $(seq 1 50); do curl -fsS -o /dev/null "$SOURCE_URL" 2>/dev/null && break; sleep 0.1; done
        log "download source: python3 http.server (pid $SERVER_PID), $SOURCE_URL"
    fi
    [ -f "$SOURCE_FILE" ] || fail "$SOURCE_FILE is missing"
}

# Ends the http.server of choose_download_source, if one runs.
stop_download_source() {
    if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    SERVER_PID=""
}

# Sets TLS to 1 when the TLS peers are given (TRANSFERD_TEST_TLS_VALID and TRANSFERD_TEST_TLS_CA,
# with the nginx root that holds their files), else to 0, saying that HTTPS goes unchecked.
choose_tls() {
    if [ -n "${TRANSFERD_TEST_TLS_VALID:-}" ] && [ -n "${TRANSFERD_TEST_TLS_CA:-}" ] && [ -n "${TRANSFERD_TEST_NGINX_ROOT:-}" ]; then
        TLS=1
    else
        TLS=0
        log "no TLS peers (TRANSFERD_TEST_TLS_VALID, _CA): the HTTPS download is not checked"
    fi
}

# Adds the test CA to the root as an operator would: the certificate in
# /usr/local/share/ca-certificates, then update-ca-certificates, run in the root as root by
# RUNNER... (a command that runs its arguments there). Usage: add_test_ca RUNNER...
add_test_ca() {
    install -D -m 0644 "$TRANSFERD_TEST_TLS_CA" "$ROOT/usr/local/share/ca-certificates/transferd-test-ca.crt"
    "$@" update-ca-certificates >&2 || fail "update-ca-certificates failed in the root"
}

# ---- the daemon ----

# Sets PORT (a free loopback port), TOKEN (named after the check), API (the daemon's address on
# PORT), DAEMON_LOG and STARTED_MARKER (the check's files).
choose_daemon_address() {
    PORT="$(free_port)"
    TOKEN="${SCRIPT_NAME%.sh}-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
    API="http://127.0.0.1:$PORT"
    DAEMON_LOG="${CHECK_FILES}transferd.log"
    STARTED_MARKER="${CHECK_FILES}started-marker"
}

# Runs COMMAND... (the daemon, given a configuration it must refuse) for at most SECONDS and checks
# that it exits non-zero in time, saying PATTERN (grep -i); logs the last line that says it.
# Usage: expect_refusal SECONDS PATTERN COMMAND...
expect_refusal() {
    local seconds="$1" pattern="$2" status=0 output
    shift 2
    output="$(timeout "$seconds" "$@" 2>&1 {CHECK_LOCK_FD}>&-)" || status=$?
    if [ "$status" -eq 0 ] || [ "$status" -eq 124 ]; then
        fail "the daemon did not refuse its configuration (exit $status): $output"
    fi
    grep -qi -- "$pattern" <<<"$output" || fail "the refusal does not say '$pattern': $output"
    log "refused, exit $status: $(grep -i -- "$pattern" <<<"$output" | tail -n 1)"
}

# Starts COMMAND... in the background, its output in DAEMON_LOG: an unshare process (DAEMON_NS_PID)
# whose child, PID 1 of the new PID namespace, is the daemon (DAEMON_PID). Waits until GET
# $API/healthz answers 200, at most 30 s. Usage: start_daemon COMMAND...
start_daemon() {
    local i healthy=0
    touch "$STARTED_MARKER"
    sleep 1 # a file the daemon writes is then strictly newer than the marker, whatever the clock's grain
    # {CHECK_LOCK_FD}>&-: the check's lock stays with the check, never with a daemon that could outlive it.
    "$@" >"$DAEMON_LOG" 2>&1 {CHECK_LOCK_FD}>&- &
    DAEMON_NS_PID=$!
    DAEMON_PID=""
    for i in $(seq 1 100); do
        DAEMON_PID="$(awk '{ print $1 }' "/proc/$DAEMON_NS_PID/task/$DAEMON_NS_PID/children" 2>/dev/null)" || true
        [ -n "$DAEMON_PID" ] && break
        sleep 0.1
    done
    [ -n "$DAEMON_PID" ] || fail "the daemon's process did not appear; log: $(cat "$DAEMON_LOG")"
    for i in $(seq 1 300); do
        if [ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$API/healthz" 2>/dev/null)" = 200 ]; then healthy=1; break; fi
        kill -0 "$DAEMON_NS_PID" 2>/dev/null || fail "the daemon exited before answering; log: $(cat "$DAEMON_LOG")"
        sleep 0.1
    done
    [ "$healthy" -eq 1 ] || fail "GET /healthz did not answer 200 within 30 s; log: $(tail -n 20 "$DAEMON_LOG")"
}

# Sends SIGNAL to the daemon and checks that it exits 0 within BOUND seconds (after which MANAGER,
# docker stop or systemd, would SIGKILL it), logging its 'transferd stopped' line and having found
# the public suffix list; logs how long it took. Usage: stop_daemon SIGNAL BOUND MANAGER
stop_daemon() {
    local signal="$1" bound="$2" manager="$3" started i stopped=0 exit_status=0
    started="${EPOCHREALTIME/./}"
    kill -s "${signal#SIG}" "$DAEMON_PID"
    for i in $(seq 1 $((bound * 10))); do
        if ! kill -0 "$DAEMON_NS_PID" 2>/dev/null; then stopped=1; break; fi
        sleep 0.1
    done
    [ "$stopped" -eq 1 ] || fail "the daemon ignored $signal as PID 1 for $bound s ($manager would SIGKILL it)"
    wait "$DAEMON_NS_PID" || exit_status=$?
    DAEMON_NS_PID=""
    DAEMON_PID=""
    [ "$exit_status" -eq 0 ] || fail "the daemon exited with $exit_status after $signal; log: $(tail -n 20 "$DAEMON_LOG")"
    grep -q "transferd stopped" "$DAEMON_LOG" || fail "the log has no 'transferd stopped' line"
    if grep -qi "public suffix list not found" "$DAEMON_LOG"; then fail "the daemon found no public suffix list in the root"; fi
    log "exit 0 after $(awk -v s="$started" -v e="${EPOCHREALTIME/./}" 'BEGIN { printf "%.2f", (e - s) / 1e6 }') s"
}

# Checks the daemon's state: its database in DIR (a path in the root), everything there owned by
# UID (the user NAME), and nothing in the root written outside DIR since the daemon started.
# Usage: check_state DIR UID NAME
check_state() {
    local dir="$1" uid="$2" name="$3" foreign elsewhere
    [ -f "$ROOT$dir/transferd.sqlite3" ] || fail "no database in $dir: $(ls -la "$ROOT$dir")"
    foreign="$(find "$ROOT$dir" ! -uid "$uid" | head -n 5)"
    [ -z "$foreign" ] || fail "files in $dir not owned by $name: $foreign"
    elsewhere="$(find "$ROOT" -xdev -newer "$STARTED_MARKER" ! -type d ! -path "$ROOT$dir/*" | head -n 5)"
    [ -z "$elsewhere" ] || fail "something wrote outside $dir: $elsewhere"
    log "$dir: $(find "$ROOT$dir" | wc -l) entries, all owned by uid $uid ($(find "$ROOT$dir" -mindepth 1 -maxdepth 1 -printf '%f '))"
}
