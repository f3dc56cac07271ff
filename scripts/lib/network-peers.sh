# shellcheck shell=bash
# The peers of the proxy and TLS tests, started on 127.0.0.1 on free ports after start_nginx:
#   tinyproxy (HTTP proxy, CONNECT too)      -> TRANSFERD_TEST_HTTP_PROXY=127.0.0.1:PORT,
#                                               TRANSFERD_TEST_HTTP_PROXY_LOG=<its log file>
#   tinyproxy with BasicAuth                 -> TRANSFERD_TEST_AUTH_HTTP_PROXY, ..._LOG
#   microsocks (SOCKS5)                      -> TRANSFERD_TEST_SOCKS_PROXY, ..._LOG
#   microsocks with username/password        -> TRANSFERD_TEST_AUTH_SOCKS_PROXY, ..._LOG
#   the credentials of both auth proxies     -> TRANSFERD_TEST_PROXY_USERNAME, ..._PASSWORD
#   nginx over TLS (certificates made now)   -> TRANSFERD_TEST_TLS_VALID, _EXPIRED, _UNTRUSTED,
#                                               _TLS12 (https://127.0.0.1:PORT, /files/ as nginx),
#                                               TRANSFERD_TEST_TLS_CA (the test CA's PEM file),
#                                               TRANSFERD_TEST_TLS_LEAF (the valid leaf's chain),
#                                               TRANSFERD_TEST_TLS_PIN (its public key's pin, as
#                                               curl's --pinnedpubkey takes it: sha256//BASE64),
#                                               TRANSFERD_TEST_TLS_OTHER_CA (the untrusted one's CA)
#   the same nginx speaking HTTP/2               -> TRANSFERD_TEST_H2 (https, ALPN h2 and http/1.1,
#                                               the valid certificate; /files/ and /slow/),
#                                               TRANSFERD_TEST_H2C (http, h2 with prior knowledge only)
# Each proxy logs every connection with its target, which the tests read to see what went
# through it. Sourced by scripts/test.sh after peers.sh; every process is recorded with
# record_peer and stopped by stop_peers, by PID.

NETWORK_PEERS_DIR="$PEERS_DIR/network-$$"

# wait_for_command NAME PID SECONDS COMMAND...: waits until COMMAND succeeds while PID is alive.
wait_for_command() {
    local name="$1" pid="$2" seconds="$3" deadline
    shift 3
    deadline=$((SECONDS + seconds))
    while [ "$SECONDS" -lt "$deadline" ]; do
        if ! kill -0 "$pid" 2>/dev/null; then
            log "$name (pid $pid) exited during start-up"
            return 1
        fi
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.2
    done
    log "$name did not answer within ${seconds}s"
    return 1
}

# start_tinyproxy NAME VARIABLE [USER PASSWORD]: a tinyproxy in the foreground with its own
# config and log; exports VARIABLE=127.0.0.1:PORT and VARIABLE_LOG. No ConnectPort line: CONNECT
# is allowed to every port (the TLS origins are on free ports, not 443).
start_tinyproxy() {
    local name="$1" variable="$2" user="${3:-}" password="${4:-}" attempt port pid conf
    local log_file="$PEERS_LOG_DIR/$name.log" auth=() auth_line=""
    mkdir -p "$PEERS_LOG_DIR" "$NETWORK_PEERS_DIR"
    conf="$NETWORK_PEERS_DIR/$name.conf"
    if [ -n "$user" ]; then
        auth_line="BasicAuth $user $password"
        auth=(--proxy-user "$user:$password")
    fi
    for attempt in 1 2 3; do
        port="$(free_port)"
        cat >"$conf" <<CONF
# Written by scripts/lib/network-peers.sh for the tests; rewritten on every run.
Port $port
Listen 127.0.0.1
Timeout 60
LogFile "$log_file"
LogLevel Connect
MaxClients 64
Allow 127.0.0.1
DisableViaHeader Yes
$auth_line
CONF
        log "starting $name (tinyproxy) on 127.0.0.1:$port (attempt $attempt), log $log_file"
        tinyproxy -d -c "$conf" >>"$PEERS_LOG_DIR/$name.out" 2>&1 </dev/null &
        pid=$!
        record_peer "$name" "$pid"
        if wait_for_command "$name" "$pid" 15 curl -fsS -o /dev/null --max-time 2 \
            --proxy "http://127.0.0.1:$port" "${auth[@]}" "$TRANSFERD_TEST_NGINX/healthz"; then
            export "$variable=127.0.0.1:$port" "${variable}_LOG=$log_file"
            log "$name ready at 127.0.0.1:$port (pid $pid)"
            return 0
        fi
        stop_peer "$name" "$pid"
    done
    tail -n 30 "$log_file" "$PEERS_LOG_DIR/$name.out" >&2 || true
    die "$name did not start; see $log_file"
}

# start_microsocks NAME VARIABLE [USER PASSWORD]: a SOCKS5 server that logs each connection
# ("client[N] ADDRESS: connected to HOST:PORT"); exports VARIABLE=127.0.0.1:PORT and VARIABLE_LOG.
start_microsocks() {
    local name="$1" variable="$2" user="${3:-}" password="${4:-}" attempt port pid
    local log_file="$PEERS_LOG_DIR/$name.log" auth=() proxy_auth=""
    mkdir -p "$PEERS_LOG_DIR"
    if [ -n "$user" ]; then
        auth=(-u "$user" -P "$password")
        proxy_auth="$user:$password@"
    fi
    for attempt in 1 2 3; do
        port="$(free_port)"
        log "starting $name (microsocks) on 127.0.0.1:$port (attempt $attempt), log $log_file"
        microsocks -i 127.0.0.1 -p "$port" "${auth[@]}" >>"$log_file" 2>&1 </dev/null &
        pid=$!
        record_peer "$name" "$pid"
        if wait_for_command "$name" "$pid" 15 curl -fsS -o /dev/null --max-time 2 \
            --proxy "socks5h://${proxy_auth}127.0.0.1:$port" "$TRANSFERD_TEST_NGINX/healthz"; then
            export "$variable=127.0.0.1:$port" "${variable}_LOG=$log_file"
            log "$name ready at 127.0.0.1:$port (pid $pid)"
            return 0
        fi
        stop_peer "$name" "$pid"
    done
    tail -n 30 "$log_file" >&2 || true
    die "$name did not start; see $log_file"
}

# answers_h2 [CURL_OPTIONS] URL: whether URL answers 200 over HTTP/2 (curl falls back to
# HTTP/1.1 silently, so the version it used is checked).
answers_h2() {
    [ "$(curl -sS -o /dev/null --max-time 2 --http2 -w '%{http_code} %{http_version}' "$@")" = "200 2" ]
}

# Starts nginx over TLS with four servers, each on a free port: a valid certificate, an expired
# one, one from an untrusted CA, and the valid one limited to TLS 1.2; and two HTTP/2 servers:
# the valid certificate with h2 offered by ALPN, and cleartext h2 (prior knowledge, no Upgrade:
# nginx 1.22's `listen ... http2` without ssl). Certificates are made
# now (scripts/lib/make-tls-certs.py, trustme). All serve .build-peers/www as /files/; the valid
# and the h2 server also store PUTs to /uploads/NAME (WebDAV's PUT) in TRANSFERD_TEST_TLS_UPLOADS.
start_tls_nginx() {
    local attempt pid prefix="$PEERS_DIR/nginx" root="$PEERS_DIR/www" certs="$NETWORK_PEERS_DIR/certs"
    local conf="$NETWORK_PEERS_DIR/nginx-tls.conf" error_log="$PEERS_LOG_DIR/nginx-tls-error.log"
    local user_line="" valid expired untrusted tls12 h2 h2c uploads="$NETWORK_PEERS_DIR/uploads"
    mkdir -p "$PEERS_LOG_DIR" "$prefix/tmp" "$NETWORK_PEERS_DIR" "$uploads"
    prepare_nginx_files "$root"
    log "making the TLS test certificates in $certs"
    "$PEERS_VENV/bin/python" scripts/lib/make-tls-certs.py "$certs" || die "making the TLS test certificates failed"
    [ "$(id -u)" -eq 0 ] && user_line="user root;"
    for attempt in 1 2 3; do
        valid="$(free_port)"; expired="$(free_port)"; untrusted="$(free_port)"; tls12="$(free_port)"
        h2="$(free_port)"; h2c="$(free_port)"
        cat >"$conf" <<CONF
# Written by scripts/lib/network-peers.sh for the tests; rewritten on every run.
$user_line
worker_processes 1;
pid $NETWORK_PEERS_DIR/nginx-tls.pid;
error_log $error_log warn;
events { worker_connections 256; }
http {
    access_log $PEERS_LOG_DIR/nginx-tls-access.log;
$(nginx_http_defaults "$prefix")
    ssl_protocols TLSv1.2 TLSv1.3;
    server {
        listen 127.0.0.1:$valid ssl;
        ssl_certificate $certs/valid.crt;
        ssl_certificate_key $certs/valid.key;
        location = /healthz { return 200 "ok\n"; }
        location /files/ { alias $root/; }
        location /uploads/ { alias $uploads/; dav_methods PUT; client_max_body_size 64m; }
    }
    server {
        listen 127.0.0.1:$expired ssl;
        ssl_certificate $certs/expired.crt;
        ssl_certificate_key $certs/expired.key;
        location /files/ { alias $root/; }
    }
    server {
        listen 127.0.0.1:$untrusted ssl;
        ssl_certificate $certs/untrusted.crt;
        ssl_certificate_key $certs/untrusted.key;
        location /files/ { alias $root/; }
    }
    server {
        listen 127.0.0.1:$tls12 ssl;
        ssl_protocols TLSv1.2;
        ssl_certificate $certs/valid.crt;
        ssl_certificate_key $certs/valid.key;
        location = /healthz { return 200 "ok\n"; }
        location /files/ { alias $root/; }
    }
    server {
        listen 127.0.0.1:$h2 ssl http2;
        ssl_certificate $certs/valid.crt;
        ssl_certificate_key $certs/valid.key;
        location = /healthz { return 200 "ok\n"; }
        location /files/ { alias $root/; }
        location /slow/ { alias $root/; limit_rate 256k; }
        location /uploads/ { alias $uploads/; dav_methods PUT; client_max_body_size 64m; }
    }
    server {
        listen 127.0.0.1:$h2c http2;
        location = /healthz { return 200 "ok\n"; }
        location /files/ { alias $root/; }
    }
}
CONF
        log "starting nginx-tls on 127.0.0.1:$valid,$expired,$untrusted,$tls12,$h2,$h2c (attempt $attempt), log $error_log"
        "$(command -v nginx || echo /usr/sbin/nginx)" -p "$prefix" -e "$error_log" -c "$conf" -g 'daemon off;' >>"$PEERS_LOG_DIR/nginx-tls.log" 2>&1 </dev/null &
        pid=$!
        record_peer nginx-tls "$pid"
        if wait_for_command nginx-tls "$pid" 15 curl -fsS -o /dev/null --max-time 2 --cacert "$certs/ca.pem" "https://127.0.0.1:$valid/healthz" \
            && wait_for_command nginx-tls "$pid" 5 curl -fsS -o /dev/null --max-time 2 --cacert "$certs/ca.pem" --tls-max 1.2 "https://127.0.0.1:$tls12/healthz" \
            && wait_for_command nginx-tls "$pid" 5 answers_h2 --cacert "$certs/ca.pem" "https://127.0.0.1:$h2/healthz" \
            && wait_for_command nginx-tls "$pid" 5 answers_h2 --http2-prior-knowledge "http://127.0.0.1:$h2c/healthz"; then
            export TRANSFERD_TEST_TLS_VALID="https://127.0.0.1:$valid" TRANSFERD_TEST_TLS_EXPIRED="https://127.0.0.1:$expired"
            export TRANSFERD_TEST_TLS_UNTRUSTED="https://127.0.0.1:$untrusted" TRANSFERD_TEST_TLS_TLS12="https://127.0.0.1:$tls12"
            export TRANSFERD_TEST_TLS_CA="$certs/ca.pem" TRANSFERD_TEST_TLS_LEAF="$certs/valid.crt"
            TRANSFERD_TEST_TLS_PIN="sha256//$(openssl x509 -in "$certs/valid.crt" -pubkey -noout | openssl pkey -pubin -outform DER |
                openssl dgst -sha256 -binary | base64 -w0)"
            export TRANSFERD_TEST_TLS_PIN
            export TRANSFERD_TEST_TLS_OTHER_CA="$certs/other-ca.pem"
            export TRANSFERD_TEST_H2="https://127.0.0.1:$h2" TRANSFERD_TEST_H2C="http://127.0.0.1:$h2c"
            export TRANSFERD_TEST_TLS_UPLOADS="$uploads"
            log "nginx-tls ready (pid $pid)"
            return 0
        fi
        stop_peer nginx-tls "$pid"
    done
    tail -n 30 "$error_log" >&2 || true
    die "nginx-tls did not start; see $error_log"
}

# Starts every peer of this file. The proxy credentials are made per run.
start_network_peers() {
    TRANSFERD_TEST_PROXY_USERNAME="transferd"
    TRANSFERD_TEST_PROXY_PASSWORD="$("$PYTHON" -c 'import secrets; print(secrets.token_hex(12))')"
    export TRANSFERD_TEST_PROXY_USERNAME TRANSFERD_TEST_PROXY_PASSWORD
    start_tls_nginx
    start_tinyproxy tinyproxy TRANSFERD_TEST_HTTP_PROXY
    start_tinyproxy tinyproxy-auth TRANSFERD_TEST_AUTH_HTTP_PROXY "$TRANSFERD_TEST_PROXY_USERNAME" "$TRANSFERD_TEST_PROXY_PASSWORD"
    start_microsocks microsocks TRANSFERD_TEST_SOCKS_PROXY
    start_microsocks microsocks-auth TRANSFERD_TEST_AUTH_SOCKS_PROXY "$TRANSFERD_TEST_PROXY_USERNAME" "$TRANSFERD_TEST_PROXY_PASSWORD"
}

# Removes this run's configs and certificates (after the peers stopped; logs stay).
remove_network_peer_files() {
    rm -rf "$NETWORK_PEERS_DIR"
}
