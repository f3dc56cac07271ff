"""Following a transferd process's log: its standard error is copied line by line to a log file
for as long as it runs, and the port it bound is read from its "transferd listening" line
(`http.port=N`). Shared by the system tests (Tests/System/daemon.py) and the crash soak
(scripts/lib/soak_daemon.py). Standard library only.
"""
from __future__ import annotations

import re
import subprocess
import threading
from typing import BinaryIO

PORT_PATTERN = re.compile(r"http\.port[=:]\s*\"?(\d+)")


def follow(process: subprocess.Popen, log: BinaryIO, timeout: float) -> tuple[int | None, threading.Thread]:
    """Starts copying `process`'s standard error to `log`; returns the port it reported within
    `timeout` seconds (None if it did not, or ended first) and the copying thread, which ends
    once the process's standard error closes."""
    found: list[int] = []
    ready = threading.Event()

    def pump() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            log.write(line)
            log.flush()
            if not found and b"transferd listening" in line:
                match = PORT_PATTERN.search(line.decode(errors="replace"))
                if match:
                    found.append(int(match.group(1)))
                    ready.set()
        ready.set()

    thread = threading.Thread(target=pump, daemon=True)
    thread.start()
    ready.wait(timeout)
    return (found[0] if found else None), thread
