"""A transferd process for the system tests: the built executable, started on a free port with a
data folder of its own, driven over its public HTTP API only, and stopped by its PID.

The daemon reports the port it bound in its "transferd listening" log line (`http.port=N`).
"""
from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

# The log follower the crash soak uses too (scripts/lib/daemon_log.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "lib"))
import daemon_log  # noqa: E402

BIN_DIR = Path(os.environ.get("TRANSFERD_TEST_BIN_DIR", ""))


def executable(name: str) -> Path:
    """A built executable (transferd, transferctl); the test command sets TRANSFERD_TEST_BIN_DIR."""
    if not os.environ.get("TRANSFERD_TEST_BIN_DIR"):
        raise RuntimeError("TRANSFERD_TEST_BIN_DIR is not set: run the system tests with bash scripts/test.sh --system")
    path = BIN_DIR / name
    if not path.is_file():
        raise RuntimeError(f"{path} does not exist: build it first (swift build)")
    return path


class APIError(Exception):
    def __init__(self, status: int, body: bytes):
        super().__init__(f"HTTP {status}: {body[:500]!r}")
        self.status = status
        self.body = body


class Daemon:
    """One running transferd. `request` speaks its API; `stop` ends it with SIGTERM and returns its
    exit status."""

    def __init__(self, data_dir: Path, token: str | None = None, arguments: list[str] | None = None,
                 environment: dict[str, str] | None = None, max_open_files: int | None = None, log_path: Path | None = None):
        self.data_dir = data_dir
        self.token = token
        # Its own log file: several daemons may share one data folder (a cluster).
        self.log_path = log_path or data_dir / "transferd.log"
        data_dir.mkdir(parents=True, exist_ok=True)
        command = [str(executable("transferd")), "--listen", "127.0.0.1:0", "--data-dir", str(data_dir)]
        if token:
            command += ["--token", token]
        command += arguments or []
        env = dict(os.environ)
        env.update(environment or {})
        self._log = open(self.log_path, "ab")
        # As `ulimit -n N` would: soft and hard, so the daemon cannot raise it.
        limit = None if max_open_files is None else (lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (max_open_files, max_open_files)))
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env,
                                        preexec_fn=limit)
        self.port = self._wait_for_port(timeout=30)
        self.url = f"http://127.0.0.1:{self.port}"

    def _wait_for_port(self, timeout: float) -> int:
        port, _ = daemon_log.follow(self.process, self._log, timeout)
        if port is None:
            self.process.kill()
            self.process.wait(10)
            raise RuntimeError(f"transferd did not report a port within {timeout}s; log: {self.log_text()[-2000:]}")
        return port

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        headers.update(extra or {})
        return headers

    def request(self, method: str, path: str, body: object | bytes | None = None, headers: dict[str, str] | None = None,
                timeout: float = 30) -> tuple[int, dict[str, str], bytes]:
        """Any request; returns (status, headers, body) whatever the status."""
        data = None
        extra = dict(headers or {})
        if isinstance(body, (bytes, bytearray)):
            data = bytes(body)
        elif body is not None:
            data = json.dumps(body).encode()
            extra.setdefault("Content-Type", "application/json")
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=self.headers(extra))
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, dict(response.headers.items()), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers.items()), error.read()

    def json(self, method: str, path: str, body: object | None = None, expect: int | tuple[int, ...] = (200, 201, 202)) -> object:
        """A JSON request that must succeed with one of `expect`; returns the decoded body."""
        status, _, payload = self.request(method, path, body)
        wanted = (expect,) if isinstance(expect, int) else expect
        if status not in wanted:
            raise APIError(status, payload)
        return json.loads(payload) if payload else None

    def wait_until(self, predicate, timeout: float = 30, interval: float = 0.1, what: str = "condition"):
        """Polls `predicate()` until it returns something truthy; fails after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            time.sleep(interval)
        raise AssertionError(f"timed out after {timeout}s waiting for {what}")

    def stop(self, timeout: float = 30) -> int:
        """SIGTERM, then the exit status; SIGKILL (and a failure) if it does not stop in time."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
                raise AssertionError(f"transferd (pid {self.process.pid}) ignored SIGTERM for {timeout}s")
        self._log.close()
        return self.process.returncode
