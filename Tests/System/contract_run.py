"""The API contract run, inside a network namespace that has only loopback (test_contract.py starts
it with `unshare --net`): a transferd with bounded settings, then schemathesis against it with
openapi.yaml and contract.toml. Generated requests create tasks, webhooks and proxies for
arbitrary hosts; here every one of them goes nowhere.

    python contract_run.py --report-dir DIR --outside-url URL

Exits 0 when schemathesis passed and transferd stayed up and stopped cleanly; prints what it saw.
"""
from __future__ import annotations

import argparse
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

from daemon import Daemon

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parent.parent
SPEC = REPOSITORY / "openapi.yaml"
CONFIG = HERE / "contract.toml"

# Settings that keep a fuzz run small: response bodies, request bodies and blobs of at most
# 64 KiB/1 MiB, retries and webhook deliveries that give up fast, files only in a temp folder.
DAEMON_ARGUMENTS = [
    "--max-body-size", "65536",
    "--max-request-size", "1048576",
    "--max-blob-size", "1048576",
    "--retry-backoff", "1:2",
    "--connectivity-backoff", "1:2",
    "--webhook-retry", "1:1",
    "--webhook-attempts", "1",
    "--task-retention", "60",
    "--url-cache-disk", "0",
    "--max-download-rate", "1048576",
]


def check_isolated(outside_url: str) -> None:
    """Fails unless this namespace has no interface but loopback and cannot reach the test
    peers' address outside it (a connection to the host's nginx must fail)."""
    interfaces = sorted(name for _, name in socket.if_nameindex())
    if interfaces != ["lo"]:
        sys.exit(f"contract run: expected a network namespace with only lo, found {interfaces}")
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    outside = urllib.parse.urlsplit(outside_url)
    try:
        socket.create_connection((outside.hostname, outside.port), timeout=2).close()
    except OSError as error:
        print(f"contract run: isolated (only lo; {outside.hostname}:{outside.port} outside is unreachable: {error.strerror})")
    else:
        sys.exit(f"contract run: {outside_url} is reachable: this is not an isolated network namespace")


def run_schemathesis(daemon: Daemon, report_dir: Path, seed: int) -> int:
    command = [
        str(Path(sys.executable).with_name("schemathesis")), "--config-file", str(CONFIG), "--no-color",
        "run", str(SPEC),
        "--url", daemon.url,
        "--header", f"Authorization: Bearer {daemon.token}",
        "--seed", str(seed),
        "--report", "junit,ndjson",
        "--report-dir", str(report_dir),
    ]
    print("contract run:", " ".join(c if daemon.token not in c else "Authorization: Bearer ***" for c in command), flush=True)
    # No Hypothesis example database in the repository: each run starts from the seed alone.
    environment = dict(os.environ, HYPOTHESIS_STORAGE_DIRECTORY=tempfile.mkdtemp(prefix="hypothesis-"))
    # Run in the report folder, where schemathesis keeps its cache (.schemathesis/).
    return subprocess.run(command, env=environment, stdin=subprocess.DEVNULL, cwd=report_dir).returncode


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--report-dir", type=Path, required=True)
    parser.add_argument("--outside-url", required=True, help="an address outside the namespace that must be unreachable")
    parser.add_argument("--seed", type=int, default=20260611)
    options = parser.parse_args()

    check_isolated(options.outside_url)
    options.report_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="transferd-contract-") as folder:
        daemon = Daemon(Path(folder) / "data", token=secrets.token_hex(16), arguments=DAEMON_ARGUMENTS)
        started = time.monotonic()
        status = run_schemathesis(daemon, options.report_dir, options.seed)
        print(f"contract run: schemathesis exited with {status} after {time.monotonic() - started:.1f}s", flush=True)
        alive = daemon.process.poll() is None
        health = daemon.request("GET", "/healthz")[0] if alive else None
        exit_status = daemon.stop()
        (options.report_dir / "transferd.log").write_text(daemon.log_text())
        print(f"contract run: transferd alive after the run: {alive}, /healthz {health}, exit status {exit_status}", flush=True)
    if status != 0:
        return 1
    if not alive or health != 200 or exit_status != 0:
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
