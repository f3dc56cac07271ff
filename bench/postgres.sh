#!/usr/bin/env bash
# The PostgreSQL write rate on this machine (issue 19's capacity model): bash bench/postgres.sh
#
# Starts the test command's PostgreSQL server (scripts/lib/peers-postgres.sh: initdb in a
# temporary folder of $TMPDIR or /tmp, 127.0.0.1) twice, with fsync off as for the tests and
# with fsync on as a cluster runs, and each time runs pgbench, PostgreSQL's own benchmark:
#   write    pgbench -N (per transaction: one UPDATE of a row, one SELECT, one INSERT), with
#            1, 4 and 16 clients: transactions/s, the rate a cluster's task writes compete for
#   claim    scripts of ours, 4 clients, from a queue of 300,000 rows: one task claimed (UPDATE
#            ... WHERE id = (SELECT ... ORDER BY ... LIMIT 1 FOR UPDATE SKIP LOCKED)) and
#            completed (UPDATE of its 1 KB record) per transaction; then 16 tasks claimed and
#            completed per transaction (a node claims for its free slots at once, and its store
#            writer commits many completions together): tasks/s
# and prints each figure; the last line is the one to quote. docs/cluster.md reads them into
# the model of how many nodes one PostgreSQL carries. The server is stopped by PID and its
# folder removed however the script exits.
#
# Environment:
#   BENCH_SECONDS=10    seconds each pgbench run lasts
set -euo pipefail
SCRIPT_NAME="bench-postgres"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/common.sh
source scripts/lib/common.sh
# shellcheck source=scripts/lib/peers.sh
source scripts/lib/peers.sh
# shellcheck source=scripts/lib/network-peers.sh
source scripts/lib/network-peers.sh
# shellcheck source=scripts/lib/peers-postgres.sh
source scripts/lib/peers-postgres.sh

SECONDS_EACH="${BENCH_SECONDS:-10}"
[[ "$SECONDS_EACH" =~ ^[1-9][0-9]*$ ]] || die "BENCH_SECONDS must be a positive integer, got '$SECONDS_EACH'"

ensure_apt_packages "${POSTGRES_PACKAGES[@]}"
ensure_python
trap 'stop_peers; remove_postgres_peer_files' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

BIN="$(postgres_bin_dir)"
CLAIM_SQL="$(mktemp "${TMPDIR:-/tmp}/transferd-claim.XXXXXX.sql")"
CLAIM16_SQL="$(mktemp "${TMPDIR:-/tmp}/transferd-claim16.XXXXXX.sql")"
trap 'stop_peers; remove_postgres_peer_files; rm -f "$CLAIM_SQL" "$CLAIM16_SQL"' EXIT
cat >"$CLAIM16_SQL" <<'SQL'
BEGIN;
WITH claimed AS (
  UPDATE queue SET queued = false, node = 'n' || :client_id, lease_epoch = lease_epoch + 1
   WHERE id IN (SELECT id FROM queue WHERE queued ORDER BY rank, priority DESC, queue_order LIMIT 16 FOR UPDATE SKIP LOCKED)
   RETURNING id)
SELECT min(id) AS low, max(id) AS high FROM claimed \gset
UPDATE queue SET record = repeat('x', 1000), node = NULL WHERE node = 'n' || :client_id AND id BETWEEN :low AND :high;
COMMIT;
SQL
cat >"$CLAIM_SQL" <<'SQL'
BEGIN;
UPDATE queue SET queued = false, node = 'n', lease_epoch = lease_epoch + 1
 WHERE id = (SELECT id FROM queue WHERE queued ORDER BY rank, priority DESC, queue_order LIMIT 1 FOR UPDATE SKIP LOCKED)
 RETURNING id \gset
UPDATE queue SET record = repeat('x', 1000), node = NULL WHERE id = :id;
COMMIT;
SQL

# pgbench_tps ARGS...: the "tps = N" figure of one pgbench run (dies with its output if none).
pgbench_tps() {
    local output tps
    output="$("$BIN/pgbench" -h 127.0.0.1 -p "$PORT" -U transferd "$@" transferd 2>&1)" || true
    tps="$(awk '/^tps = / { printf "%.0f", $3 }' <<<"$output")"
    [ -n "$tps" ] || { printf '%s\n' "$output" | tail -n 20 >&2; die "pgbench $* gave no figure"; }
    printf '%s\n' "$tps"
}

run_suite() {
    local label="$1" clients results=()
    "$BIN/pgbench" -q -h 127.0.0.1 -p "$PORT" -U transferd -i -s 10 transferd >/dev/null 2>&1 || die "pgbench -i failed"
    for clients in 1 4 16; do
        results+=("$clients clients $(pgbench_tps -N -c "$clients" -j 2 -T "$SECONDS_EACH") tx/s")
    done
    "$BIN/psql" -q -h 127.0.0.1 -p "$PORT" -U transferd -d transferd -v ON_ERROR_STOP=1 >/dev/null <<'SQL' || die "making the queue failed"
DROP TABLE IF EXISTS queue;
CREATE TABLE queue (id bigint PRIMARY KEY, queued boolean NOT NULL, rank smallint NOT NULL, priority double precision NOT NULL,
                    queue_order bigint NOT NULL, node text, lease_epoch bigint NOT NULL DEFAULT 0, record text NOT NULL);
INSERT INTO queue SELECT g, true, g % 4, 0.5, g, NULL, 0, repeat('y', 100) FROM generate_series(1, 300000) g;
CREATE INDEX queue_order_index ON queue (rank, priority DESC, queue_order) WHERE queued;
VACUUM ANALYZE queue;
SQL
    local claims batches left
    claims="$(pgbench_tps -n -f "$CLAIM_SQL" -c 4 -j 2 -T "$SECONDS_EACH")"
    batches="$(pgbench_tps -n -f "$CLAIM16_SQL" -c 4 -j 2 -T "$SECONDS_EACH")"
    left="$("$BIN/psql" -qtA -h 127.0.0.1 -p "$PORT" -U transferd -d transferd -c "SELECT count(*) FROM queue WHERE queued")"
    [ "$left" -gt 0 ] || log "the queue ran out during the run: the 16-per-transaction figure is too high"
    echo "RESULT $label: pgbench -N ${results[*]}; claim+complete, 4 clients: one per transaction $claims tasks/s, 16 per transaction $((batches * 16)) tasks/s"
}

for fsync in off on; do
    start_postgres_peer "fsync=$fsync"
    PORT="${TRANSFERD_TEST_POSTGRES##*:}"
    PORT="${PORT%%/*}"
    run_suite "fsync $fsync"
    stop_peers
    remove_postgres_peer_files
done
