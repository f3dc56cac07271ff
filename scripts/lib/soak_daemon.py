"""One life of transferd for the crash soak (scripts/lib/crash_soak.py): started on port 0 with
the soak's data folder and a token, its port read from its "transferd listening" line, spoken to
over its HTTP API, and ended by the PID it was started with. Standard library only.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import daemon_log


class SetupFailure(Exception):
    """The soak could not get going (the daemon did not start, a setup request failed)."""


class Daemon:
    """One life of transferd on the soak's data folder; its log appended to one file."""

    def __init__(self, binary: Path, data_dir: Path, uploads_dir: Path, token: str, log_path: Path):
        command = [str(binary), "--listen", "127.0.0.1:0", "--data-dir", str(data_dir), "--token", token,
                   "--uploads-dir", str(uploads_dir), "--max-transfers", "64", "--retry-backoff", "0.2:2"]
        env = {key: value for key, value in os.environ.items() if not key.startswith("TRANSFERD_")}
        self.token = token
        self.log = open(log_path, "ab")
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
        self.port = self._wait_for_port(20)
        self.url = f"http://127.0.0.1:{self.port}"

    def _wait_for_port(self, timeout: float) -> int:
        port, self.pump = daemon_log.follow(self.process, self.log, timeout)
        if port is None:
            self.kill()
            raise SetupFailure(f"transferd did not report a port within {timeout} s")
        return port

    def request(self, method: str, path: str, body: object | bytes | None = None, timeout: float = 30) -> tuple[int, object]:
        data, headers = None, {"Authorization": f"Bearer {self.token}", "Accept": "application/json"}
        if isinstance(body, (bytes, bytearray)):
            data = bytes(body)
            headers["Content-Type"] = "application/octet-stream"
        elif body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                payload = response.read()
                return response.status, json.loads(payload) if payload else None
        except urllib.error.HTTPError as error:
            payload = error.read()
            try:
                return error.code, json.loads(payload)
            except ValueError:
                return error.code, payload

    def kill(self) -> None:
        """SIGKILL by the PID this object started, then reap it."""
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(10)
        self.close_log()

    def terminate(self) -> int:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
        self.close_log()
        return self.process.returncode

    def close_log(self) -> None:
        # The pump copies what the dead process left in its pipe before the file closes.
        self.pump.join(5)
        self.log.close()
