# shellcheck shell=bash
# The peers of the stream-task tests, started on 127.0.0.1 on free ports after
# start_network_peers (whose test CA and leaf certificates they use):
#   socat echo server (TCP-LISTEN, fork, EXEC:cat) -> TRANSFERD_TEST_ECHO=127.0.0.1:PORT
#   aiosmtpd, SMTP with STARTTLS (valid leaf)      -> TRANSFERD_TEST_STARTTLS=127.0.0.1:PORT
#   aiosmtpd, STARTTLS with the untrusted leaf     -> TRANSFERD_TEST_STARTTLS_UNTRUSTED=127.0.0.1:PORT
# Sourced by scripts/test.sh; every process is recorded with record_peer and stopped by
# stop_peers, by PID.

# port_answers PORT: whether something accepts TCP connections on 127.0.0.1:PORT.
port_answers() {
    "$PYTHON" -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2).close()' "$1"
}

# start_echo_peer: socat forks one 'cat' per connection, so every byte comes back in order;
# when the client shuts down its sending side, cat sees end of file, exits, and socat closes
# the connection after the echo (-t 10: time left for the last bytes). At most 64 connections.
start_echo_peer() {
    local attempt port pid
    mkdir -p "$PEERS_LOG_DIR"
    for attempt in 1 2 3; do
        port="$(free_port)"
        log "starting the echo peer (socat) on 127.0.0.1:$port (attempt $attempt)"
        socat -t 10 "TCP-LISTEN:$port,bind=127.0.0.1,reuseaddr,fork,max-children=64" EXEC:cat \
            >>"$PEERS_LOG_DIR/echo.out" 2>&1 </dev/null &
        pid=$!
        record_peer echo "$pid"
        if wait_for_command echo "$pid" 15 port_answers "$port"; then
            export TRANSFERD_TEST_ECHO="127.0.0.1:$port"
            log "echo peer ready at 127.0.0.1:$port (pid $pid)"
            return 0
        fi
        stop_peer echo "$pid"
    done
    die "the echo peer did not start; see $PEERS_LOG_DIR/echo.out"
}

# start_starttls_peer NAME VARIABLE LEAF: aiosmtpd with STARTTLS offered (not required) and the
# leaf LEAF.crt/.key of the test certificates; messages go to its log (the Debugging handler).
start_starttls_peer() {
    local name="$1" variable="$2" leaf="$3" attempt port pid certs="$NETWORK_PEERS_DIR/certs"
    for attempt in 1 2 3; do
        port="$(free_port)"
        log "starting $name (aiosmtpd) on 127.0.0.1:$port (attempt $attempt)"
        "$PEERS_VENV/bin/python" -m aiosmtpd -n -l "127.0.0.1:$port" --no-requiretls \
            --tlscert "$certs/$leaf.crt" --tlskey "$certs/$leaf.key" \
            >>"$PEERS_LOG_DIR/$name.out" 2>&1 </dev/null &
        pid=$!
        record_peer "$name" "$pid"
        if wait_for_command "$name" "$pid" 15 port_answers "$port"; then
            export "$variable=127.0.0.1:$port"
            log "$name ready at 127.0.0.1:$port (pid $pid)"
            return 0
        fi
        stop_peer "$name" "$pid"
    done
    die "$name did not start; see $PEERS_LOG_DIR/$name.out"
}

start_stream_peers() {
    start_echo_peer
    start_starttls_peer starttls TRANSFERD_TEST_STARTTLS valid
    start_starttls_peer starttls-untrusted TRANSFERD_TEST_STARTTLS_UNTRUSTED untrusted
}
