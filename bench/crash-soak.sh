#!/usr/bin/env bash
# The crash soak as a benchmark-style command: bash bench/crash-soak.sh
#
# Kills the real transferd with SIGKILL BENCH_KILLS times (default 100) while a background
# session runs downloads, blob- and file-body uploads and tus uploads against throttled origins
# on 127.0.0.1, and checks after every kill and restart that nothing acknowledged was lost and
# nothing wrong was kept (scripts/lib/crash_soak.py, the same script the system test runs with 20
# kills; its header says exactly what it checks):
#   1. builds the release binary (swift build -c release --product transferd, the same build as
#      scripts/run.sh and the other benchmarks, so it is reused),
#   2. runs the soak; its last line is the result to quote:
#      'crash soak: 100 kills, 28 tasks, 28 completed byte-identical, 0 failed, 0 invariant violations; ... (seed N, T s)'.
# Exits non-zero on any violation. The script starts and stops its own origins and daemon, by PID.
#
# Environment:
#   BENCH_KILLS=100          kills
#   BENCH_SEED=N             replay a run (default: a new seed, printed)
#   BENCH_TIMEOUT=900        seconds the whole soak may take
#   BENCH_BINARY=PATH        use this transferd binary instead of building one; no build step
#   BENCH_TMPDIR=DIR         where the temporary folder goes (default: $TMPDIR or /tmp)
set -euo pipefail

SCRIPT_NAME="bench-crash-soak"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=scripts/lib/common.sh
source scripts/lib/common.sh
# shellcheck source=scripts/lib/bench.sh
source scripts/lib/bench.sh

KILLS="${BENCH_KILLS:-100}"
TIMEOUT="${BENCH_TIMEOUT:-900}"
[[ "$KILLS" =~ ^[1-9][0-9]*$ ]] || die "BENCH_KILLS must be a positive integer, got '$KILLS'"
[[ "$TIMEOUT" =~ ^[1-9][0-9]*$ ]] || die "BENCH_TIMEOUT must be a positive integer, got '$TIMEOUT'"

bench_binary
echo "transferd: $BINARY ($(bench_commit))" >&2

arguments=(--binary "$BINARY" --kills "$KILLS" --timeout "$TIMEOUT" --workdir "${BENCH_TMPDIR:-${TMPDIR:-/tmp}}")
[ -n "${BENCH_SEED:-}" ] && arguments+=(--seed "$BENCH_SEED")
log "python3 scripts/lib/crash_soak.py ${arguments[*]}"
exec python3 scripts/lib/crash_soak.py "${arguments[@]}"
