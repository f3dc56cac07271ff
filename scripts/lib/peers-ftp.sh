# shellcheck shell=bash
# The FTP, FTPS and SFTP peers, started on 127.0.0.1 on free ports by start_ftp_peers:
#   pyftpdlib, plain FTP                     -> TRANSFERD_TEST_FTP=ftp://127.0.0.1:PORT
#   pyftpdlib, FTPS with AUTH TLS required   -> TRANSFERD_TEST_FTPS_EXPLICIT=ftp://127.0.0.1:PORT
#   pyftpdlib, implicit FTPS                 -> TRANSFERD_TEST_FTPS=ftps://127.0.0.1:PORT
#   the FTPS servers' test CA (PEM)          -> TRANSFERD_TEST_FTPS_CA
#   asyncssh, SFTP                           -> TRANSFERD_TEST_SFTP=sftp://127.0.0.1:PORT
#   its host key as OpenSSH known_hosts      -> TRANSFERD_TEST_SFTP_KNOWN_HOSTS, and a file of the
#                                               same form naming another key:
#                                               TRANSFERD_TEST_SFTP_OTHER_KNOWN_HOSTS
#   the one user of all four, and the folder -> TRANSFERD_TEST_FTP_USER, TRANSFERD_TEST_FTP_PASSWORD,
#   they all serve (uploads land there)         TRANSFERD_TEST_FTP_ROOT (hello.txt, 1MiB.bin, 16MiB.bin)
# Servers: scripts/lib/ftp-peer.py and scripts/lib/sftp-peer.py (their docstrings say why these).
# Sourced by scripts/test.sh after peers.sh; every process is recorded with record_peer and
# stopped by stop_peers, by PID. Logs in .build-peers/logs/ftp-*.log.

FTP_PEERS_DIR="$PEERS_DIR/ftp-$$"

# The files every FTP peer serves: the same bytes as nginx's (prepare_nginx_files), copied.
prepare_ftp_root() {
    local root="$1" name
    prepare_nginx_files "$PEERS_DIR/www"
    mkdir -p "$root"
    for name in hello.txt 1MiB.bin 16MiB.bin; do
        cp "$PEERS_DIR/www/$name" "$root/$name"
    done
}

# start_ftp_peer NAME VARIABLE URL_SCHEME CHECK_COMMAND_PREFIX MODE [CERT KEY]: one pyftpdlib
# server; exports VARIABLE=URL_SCHEME://127.0.0.1:PORT once a listing through curl works.
start_ftp_peer() {
    local name="$1" variable="$2" scheme="$3" mode="$4" attempt port pid log_file="$PEERS_LOG_DIR/$1.log"
    shift 4
    local check=(curl -fsS -o /dev/null --max-time 5 --user "$TRANSFERD_TEST_FTP_USER:$TRANSFERD_TEST_FTP_PASSWORD")
    case "$mode" in
        explicit-tls) check+=(--ssl-reqd --cacert "$TRANSFERD_TEST_FTPS_CA") ;;
        implicit-tls) check+=(--cacert "$TRANSFERD_TEST_FTPS_CA") ;;
    esac
    for attempt in 1 2 3; do
        port="$(free_port)"
        log "starting $name (pyftpdlib, $mode) on 127.0.0.1:$port (attempt $attempt), log $log_file"
        "$PEERS_VENV/bin/python" scripts/lib/ftp-peer.py "$mode" "$port" "$TRANSFERD_TEST_FTP_ROOT" \
            "$TRANSFERD_TEST_FTP_USER" "$TRANSFERD_TEST_FTP_PASSWORD" "$@" >>"$log_file" 2>&1 </dev/null &
        pid=$!
        record_peer "$name" "$pid"
        if wait_for_command "$name" "$pid" 15 "${check[@]}" "$scheme://127.0.0.1:$port/hello.txt"; then
            export "$variable=$scheme://127.0.0.1:$port"
            log "$name ready at $scheme://127.0.0.1:$port (pid $pid)"
            return 0
        fi
        stop_peer "$name" "$pid"
    done
    tail -n 30 "$log_file" >&2 || true
    die "$name did not start; see $log_file"
}

# The SFTP server; curl checks its host key against the known_hosts file it writes (HOME points
# curl's ~/.ssh/known_hosts at it for the check only).
start_sftp_peer() {
    local attempt port pid log_file="$PEERS_LOG_DIR/sftp.log" home="$FTP_PEERS_DIR/home"
    mkdir -p "$home/.ssh"
    export TRANSFERD_TEST_SFTP_KNOWN_HOSTS="$FTP_PEERS_DIR/known_hosts"
    export TRANSFERD_TEST_SFTP_OTHER_KNOWN_HOSTS="$FTP_PEERS_DIR/other_known_hosts"
    for attempt in 1 2 3; do
        port="$(free_port)"
        log "starting sftp (asyncssh) on 127.0.0.1:$port (attempt $attempt), log $log_file"
        rm -f "$TRANSFERD_TEST_SFTP_KNOWN_HOSTS"
        "$PEERS_VENV/bin/python" scripts/lib/sftp-peer.py "$port" "$TRANSFERD_TEST_FTP_ROOT" \
            "$TRANSFERD_TEST_FTP_USER" "$TRANSFERD_TEST_FTP_PASSWORD" "$FTP_PEERS_DIR/ssh_host_ed25519_key" \
            "$TRANSFERD_TEST_SFTP_KNOWN_HOSTS" "$TRANSFERD_TEST_SFTP_OTHER_KNOWN_HOSTS" >>"$log_file" 2>&1 </dev/null &
        pid=$!
        record_peer sftp "$pid"
        if wait_for_command sftp "$pid" 15 sftp_peer_answers "$home" "$port"; then
            export TRANSFERD_TEST_SFTP="sftp://127.0.0.1:$port"
            log "sftp ready at $TRANSFERD_TEST_SFTP (pid $pid)"
            return 0
        fi
        stop_peer sftp "$pid"
    done
    tail -n 30 "$log_file" >&2 || true
    die "sftp did not start; see $log_file"
}

# sftp_peer_answers HOME PORT: curl fetches hello.txt, checking the host key against the written
# known_hosts (curl's CLI reads only ~/.ssh/known_hosts).
sftp_peer_answers() {
    [ -f "$TRANSFERD_TEST_SFTP_KNOWN_HOSTS" ] || return 1
    cp "$TRANSFERD_TEST_SFTP_KNOWN_HOSTS" "$1/.ssh/known_hosts"
    HOME="$1" curl -fsS -o /dev/null --max-time 5 --user "$TRANSFERD_TEST_FTP_USER:$TRANSFERD_TEST_FTP_PASSWORD" \
        "sftp://127.0.0.1:$2/hello.txt"
}

# Starts the four servers above (after start_network_peers, for wait_for_command).
start_ftp_peers() {
    export TRANSFERD_TEST_FTP_ROOT="$FTP_PEERS_DIR/root"
    export TRANSFERD_TEST_FTP_USER="transferd" TRANSFERD_TEST_FTP_PASSWORD="ftp-test-password"
    mkdir -p "$PEERS_LOG_DIR" "$FTP_PEERS_DIR"
    prepare_ftp_root "$TRANSFERD_TEST_FTP_ROOT"
    log "making the FTPS test certificates in $FTP_PEERS_DIR/certs"
    "$PEERS_VENV/bin/python" scripts/lib/make-tls-certs.py "$FTP_PEERS_DIR/certs" || die "making the FTPS test certificates failed"
    export TRANSFERD_TEST_FTPS_CA="$FTP_PEERS_DIR/certs/ca.pem"
    local cert=("$FTP_PEERS_DIR/certs/valid.crt" "$FTP_PEERS_DIR/certs/valid.key")
    start_ftp_peer ftp TRANSFERD_TEST_FTP ftp plain
    start_ftp_peer ftps-explicit TRANSFERD_TEST_FTPS_EXPLICIT ftp explicit-tls "${cert[@]}"
    start_ftp_peer ftps-implicit TRANSFERD_TEST_FTPS ftps implicit-tls "${cert[@]}"
    start_sftp_peer
}

# Deletes this run's FTP folder (served files, uploads, keys, certificates).
remove_ftp_peer_files() {
    rm -rf "$FTP_PEERS_DIR"
}
