# shellcheck shell=bash
# The real peer servers the tests talk to, started on 127.0.0.1 on free ports:
#   httpbin under gunicorn  -> TRANSFERD_TEST_HTTPBIN=http://127.0.0.1:PORT,
#                              TRANSFERD_TEST_HTTPBIN_LOG=<its log, access lines included>
#   nginx serving files     -> TRANSFERD_TEST_NGINX=http://127.0.0.1:PORT,
#                              TRANSFERD_TEST_NGINX_ROOT=<folder it serves as /files/ and /slow/>
# Everything lives under .build-peers/ (venv, nginx config, served files, logs/).
# Sourced by scripts/test.sh after scripts/lib/common.sh. Every peer started here is recorded in
# PEER_PIDS and stopped by stop_peers, by PID only.

PEERS_DIR="$PWD/.build-peers"
PEERS_LOG_DIR="$PEERS_DIR/logs"
PEERS_VENV="$PEERS_DIR/venv"
PEERS_REQUIREMENTS_DIR="$PWD/scripts/requirements"
PEER_PIDS=()
PEER_NAMES=()

# Sets PYTHON to a Python 3 that can create a venv, installing Debian's if there is none.
ensure_python() {
    local candidate
    for candidate in python3 /usr/bin/python3; do
        if command -v "$candidate" >/dev/null 2>&1 \
            && "$candidate" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
            # The interpreter itself, not a wrapper such as a pyenv shim.
            PYTHON="$("$candidate" -c 'import sys; print(sys.executable)')"
            return 0
        fi
    done
    ensure_apt_packages python3 python3-venv
    PYTHON=/usr/bin/python3
}

# Creates .build-peers/venv with the pinned packages of every scripts/requirements/*.txt (peers,
# system test runner, browser driver, ...), unless it already holds exactly those (a stamp records
# the requirements' hash and the Python used).
ensure_peer_venv() {
    local stamp="$PEERS_VENV/.transferd-stamp" wanted lock_fd file
    local requirements=("$PEERS_REQUIREMENTS_DIR"/*.txt) pip_arguments=()
    for file in "${requirements[@]}"; do pip_arguments+=(-r "$file"); done
    # Two runs in one checkout (two terminals) must not build the venv at the same time.
    mkdir -p "$PEERS_DIR"
    exec {lock_fd}>"$PEERS_DIR/.venv.lock"
    flock "$lock_fd"
    wanted="$(cat "${requirements[@]}" | sha256sum | cut -d' ' -f1) $PYTHON $("$PYTHON" -c 'import platform; print(platform.python_version())')"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] \
        && "$PEERS_VENV/bin/python" -c 'import httpbin, gunicorn, pytest' >/dev/null 2>&1; then
        log "peer venv up to date: $PEERS_VENV"
        exec {lock_fd}>&-
        return 0
    fi
    log "creating peer venv $PEERS_VENV with $PYTHON and scripts/requirements/*.txt"
    rm -rf "$PEERS_VENV"
    mkdir -p "$PEERS_DIR"
    "$PYTHON" -m venv "$PEERS_VENV"
    "$PEERS_VENV/bin/pip" install --disable-pip-version-check --no-input -q "${pip_arguments[@]}" \
        || die "pip install ${pip_arguments[*]} failed"
    printf '%s\n' "$wanted" >"$stamp"
    exec {lock_fd}>&-
}

# Prints a TCP port that is free on 127.0.0.1 right now (the kernel's pick).
free_port() {
    "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# wait_for_http NAME PID URL SECONDS: waits until URL answers 2xx while PID is alive.
# Returns 1 if the process died or the time ran out.
wait_for_http() {
    local name="$1" pid="$2" url="$3" seconds="$4" deadline
    deadline=$((SECONDS + seconds))
    while [ "$SECONDS" -lt "$deadline" ]; do
        if ! kill -0 "$pid" 2>/dev/null; then
            log "$name (pid $pid) exited during start-up"
            return 1
        fi
        if curl -fsS -o /dev/null --max-time 2 "$url" 2>/dev/null; then
            return 0
        fi
        sleep 0.2
    done
    log "$name did not answer $url within ${seconds}s"
    return 1
}

# record_peer NAME PID: remembers a started peer for stop_peers.
record_peer() {
    PEER_NAMES+=("$1")
    PEER_PIDS+=("$2")
}

# stop_peer NAME PID: SIGTERM, up to 10 s for a graceful exit, then SIGKILL. Only this PID.
stop_peer() {
    local name="$1" pid="$2" waited=0
    kill -0 "$pid" 2>/dev/null || return 0
    log "stopping $name (pid $pid)"
    kill -TERM "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 100 ]; do
        sleep 0.1
        waited=$((waited + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
        log "$name (pid $pid) ignored SIGTERM for 10 s: SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}

# Stops every peer this script started, newest first. Safe to call more than once.
stop_peers() {
    local index
    for ((index = ${#PEER_PIDS[@]} - 1; index >= 0; index--)); do
        stop_peer "${PEER_NAMES[$index]}" "${PEER_PIDS[$index]}"
    done
    PEER_PIDS=()
    PEER_NAMES=()
    rm -f "$PEERS_DIR/nginx/nginx-$$.conf"
}

# Starts httpbin under gunicorn (gthread workers, so slow endpoints like /delay and /drip do not
# hold a whole worker and keep-alive works) and exports TRANSFERD_TEST_HTTPBIN.
# A port taken between free_port and gunicorn's bind makes it exit: then try another port.
start_httpbin() {
    local attempt port pid log_file="$PEERS_LOG_DIR/httpbin.log"
    mkdir -p "$PEERS_LOG_DIR"
    for attempt in 1 2 3; do
        port="$(free_port)"
        log "starting httpbin (gunicorn) on 127.0.0.1:$port (attempt $attempt), log $log_file"
        "$PEERS_VENV/bin/gunicorn" \
            --bind "127.0.0.1:$port" \
            --worker-class gthread --workers 3 --threads 8 \
            --graceful-timeout 3 --no-control-socket \
            --access-logfile - --error-logfile - \
            httpbin:app >>"$log_file" 2>&1 </dev/null &
        pid=$!
        record_peer httpbin "$pid"
        if wait_for_http httpbin "$pid" "http://127.0.0.1:$port/get" 30; then
            export TRANSFERD_TEST_HTTPBIN="http://127.0.0.1:$port"
            # The access log shows what httpbin answered (the URL cache tests look for its 304s).
            export TRANSFERD_TEST_HTTPBIN_LOG="$log_file"
            log "httpbin ready at $TRANSFERD_TEST_HTTPBIN (pid $pid)"
            return 0
        fi
        stop_peer httpbin "$pid"
    done
    tail -n 30 "$log_file" >&2 || true
    die "httpbin did not start; see $log_file"
}

# Writes the files nginx serves, once: small text and random binaries of known sizes. Each is
# written under a temporary name and renamed, so a concurrent run never serves half a file.
prepare_nginx_files() {
    local root="$1"
    mkdir -p "$root"
    if [ ! -f "$root/hello.txt" ]; then
        printf 'hello from nginx\n' >"$root/hello.txt.$$" && mv "$root/hello.txt.$$" "$root/hello.txt"
    fi
    if [ ! -f "$root/1MiB.bin" ]; then
        head -c 1048576 /dev/urandom >"$root/1MiB.bin.$$" && mv "$root/1MiB.bin.$$" "$root/1MiB.bin"
    fi
    if [ ! -f "$root/16MiB.bin" ]; then
        head -c 16777216 /dev/urandom >"$root/16MiB.bin.$$" && mv "$root/16MiB.bin.$$" "$root/16MiB.bin"
    fi
}

# Starts nginx serving .build-peers/www as /files/ (full speed) and /slow/ (256 KiB/s), with
# /healthz answering 200, and exports TRANSFERD_TEST_NGINX and TRANSFERD_TEST_NGINX_ROOT.

# nginx_http_defaults PREFIX: the lines every test nginx's http block starts with (temporary
# files under PREFIX/tmp, the default type), for the plain and the TLS nginx alike.
nginx_http_defaults() {
    local prefix="$1"
    cat <<DEFAULTS
    client_body_temp_path $prefix/tmp/body;
    proxy_temp_path $prefix/tmp/proxy;
    fastcgi_temp_path $prefix/tmp/fastcgi;
    uwsgi_temp_path $prefix/tmp/uwsgi;
    scgi_temp_path $prefix/tmp/scgi;
    default_type application/octet-stream;
    types { text/plain txt; }
DEFAULTS
}
start_nginx() {
    local attempt port pid prefix="$PEERS_DIR/nginx" root="$PEERS_DIR/www"
    local conf error_log="$PEERS_LOG_DIR/nginx-error.log" user_line=""
    mkdir -p "$PEERS_LOG_DIR" "$prefix/tmp"
    prepare_nginx_files "$root"
    # Each run gets its own config and pid file: two runs in one checkout must not share them.
    conf="$prefix/nginx-$$.conf"
    # As root, nginx would run its workers as 'nobody', who may not read a checkout under /root.
    [ "$(id -u)" -eq 0 ] && user_line="user root;"
    for attempt in 1 2 3; do
        port="$(free_port)"
        cat >"$conf" <<EOF
# Written by scripts/lib/peers.sh for the tests; rewritten on every run.
$user_line
worker_processes 1;
pid $prefix/nginx-$$.pid;
error_log $error_log warn;
events { worker_connections 512; }
http {
    access_log $PEERS_LOG_DIR/nginx-access.log;
$(nginx_http_defaults "$prefix")
    sendfile on;
    keepalive_timeout 30s;
    server {
        listen 127.0.0.1:$port;
        location = /healthz { return 200 "ok\n"; }
        location /files/ { alias $root/; }
        location /slow/ { alias $root/; limit_rate 256k; }
        location /slower/ { alias $root/; limit_rate 64k; }
    }
}
EOF
        log "starting nginx on 127.0.0.1:$port (attempt $attempt), serving $root, log $error_log"
        "$(command -v nginx || echo /usr/sbin/nginx)" -p "$prefix" -e "$error_log" -c "$conf" -g 'daemon off;' >>"$PEERS_LOG_DIR/nginx.log" 2>&1 </dev/null &
        pid=$!
        record_peer nginx "$pid"
        if wait_for_http nginx "$pid" "http://127.0.0.1:$port/healthz" 15; then
            export TRANSFERD_TEST_NGINX="http://127.0.0.1:$port"
            export TRANSFERD_TEST_NGINX_ROOT="$root"
            log "nginx ready at $TRANSFERD_TEST_NGINX (pid $pid)"
            return 0
        fi
        stop_peer nginx "$pid"
    done
    tail -n 30 "$error_log" >&2 || true
    die "nginx did not start; see $error_log"
}
