# shellcheck shell=bash
# The PostgreSQL peer (issue 19, the cluster's shared store), started by start_postgres_peer:
# Debian's server (the postgresql package), a cluster made now with initdb in a temporary folder
# of this run, listening on a free port of 127.0.0.1 only (and a Unix socket in that folder), run
# as an unprivileged user (the server refuses root: as root, the package's 'postgres' user).
#   TRANSFERD_TEST_POSTGRES=postgresql://transferd@127.0.0.1:PORT/transferd
# The role 'transferd' owns the cluster (trust authentication, loopback only) and may create
# databases. fsync is off: the tests kill daemons, never this server, and a commit need not reach
# the disk for them. Sourced by scripts/test.sh after peers.sh; the server is recorded with
# record_peer and stopped by stop_peers, by PID (SIGTERM: a smart shutdown once the tests'
# connections are gone); remove_postgres_peer_files deletes the folder. Log in
# .build-peers/logs/postgres.log.

POSTGRES_PACKAGES=(postgresql)
POSTGRES_PEER_DIR=""

# The server's binaries: Debian keeps them out of PATH, under /usr/lib/postgresql/VERSION/bin.
postgres_bin_dir() {
    local dir
    for dir in /usr/lib/postgresql/*/bin; do
        [ -x "$dir/initdb" ] && [ -x "$dir/postgres" ] && printf '%s\n' "$dir"
    done | sort -V | tail -n 1
}

# The prefix that runs a command as the server's user: as root, setpriv to the package's
# 'postgres' user (setpriv execs, so a command started in the background with it has its own
# PID in $!); as anyone else, nothing (that user runs it).
POSTGRES_AS_USER=()

# start_postgres_peer [NAME=VALUE...]: the server, with these settings after the defaults
# (bench/postgres.sh runs it with fsync=on too).
start_postgres_peer() {
    local bin attempt port pid log_file="$PEERS_LOG_DIR/postgres.log" setting settings=()
    for setting in "$@"; do settings+=(-c "$setting"); done
    bin="$(postgres_bin_dir)"
    [ -n "$bin" ] || die "no PostgreSQL server under /usr/lib/postgresql/*/bin (the postgresql package)"
    mkdir -p "$PEERS_LOG_DIR"
    POSTGRES_PEER_DIR="$(mktemp -d "${TMPDIR:-/tmp}/transferd-postgres.XXXXXX")"
    if [ "$(id -u)" -eq 0 ]; then
        id postgres >/dev/null 2>&1 || die "no 'postgres' user (the postgresql package makes it)"
        chown postgres: "$POSTGRES_PEER_DIR"
        POSTGRES_AS_USER=(setpriv --reuid=postgres --regid=postgres --init-groups --)
    fi
    chmod 700 "$POSTGRES_PEER_DIR"
    log "initdb into $POSTGRES_PEER_DIR/data ($bin)"
    "${POSTGRES_AS_USER[@]}" "$bin/initdb" --pgdata="$POSTGRES_PEER_DIR/data" --username=transferd \
        --auth=trust --encoding=UTF8 --locale=C.UTF-8 --no-instructions >>"$log_file" 2>&1 \
        || { tail -n 30 "$log_file" >&2; die "initdb failed; see $log_file"; }
    for attempt in 1 2 3; do
        port="$(free_port)"
        log "starting postgres on 127.0.0.1:$port (attempt $attempt), log $log_file"
        "${POSTGRES_AS_USER[@]}" "$bin/postgres" -D "$POSTGRES_PEER_DIR/data" -p "$port" \
            -c listen_addresses=127.0.0.1 -c unix_socket_directories="$POSTGRES_PEER_DIR" \
            -c fsync=off -c max_connections=200 "${settings[@]}" >>"$log_file" 2>&1 </dev/null &
        pid=$!
        record_peer postgres "$pid"
        if wait_for_command postgres "$pid" 30 "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" -U transferd -d postgres; then
            "$bin/psql" -q -h 127.0.0.1 -p "$port" -U transferd -d postgres -v ON_ERROR_STOP=1 \
                -c "CREATE DATABASE transferd" >>"$log_file" 2>&1 || die "CREATE DATABASE failed; see $log_file"
            export TRANSFERD_TEST_POSTGRES="postgresql://transferd@127.0.0.1:$port/transferd"
            log "postgres ready at $TRANSFERD_TEST_POSTGRES (pid $pid)"
            return 0
        fi
        stop_peer postgres "$pid"
    done
    tail -n 30 "$log_file" >&2 || true
    die "postgres did not start; see $log_file"
}

# Deletes this run's cluster folder (after stop_peers stopped the server).
remove_postgres_peer_files() {
    if [ -n "$POSTGRES_PEER_DIR" ]; then rm -rf "$POSTGRES_PEER_DIR"; fi
}
