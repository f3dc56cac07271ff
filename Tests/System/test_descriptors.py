"""The API under descriptor exhaustion (issue 16, "The API server under abuse"): a daemon limited to
256 descriptors, as `ulimit -n 256`, flooded with idle connections from one client address still
answers another address at once, still runs a transfer, and frees the flood after its idle
timeout. Loopback only: the flood comes from 127.0.0.1, the other client binds 127.0.0.2."""
from __future__ import annotations

import http.client
import json
import socket
import time

FLOOD = 400  # more connections than the daemon has descriptors


def request_from(address: str, port: int, method: str, path: str, body: object | None = None, timeout: float = 3) -> tuple[int, bytes]:
    """A request over a connection whose source address is `address` (all of 127/8 is loopback)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(address, 0))
    try:
        payload = None if body is None else json.dumps(body).encode()
        connection.request(method, path, body=payload, headers={"Content-Type": "application/json"} if payload else {})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def json_from(address: str, port: int, method: str, path: str, body: object | None = None) -> dict:
    status, payload = request_from(address, port, method, path, body)
    assert status in (200, 201), (status, payload)
    return json.loads(payload)


def open_idle(port: int, count: int) -> list[socket.socket]:
    """`count` TCP connections from 127.0.0.1 that never send a byte (those the daemon refuses
    are closed by it; they stay in the list, harmlessly)."""
    sockets = []
    for _ in range(count):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(2)
        try:
            s.connect(("127.0.0.1", port))
        except OSError:
            s.close()
            continue
        sockets.append(s)
    return sockets


def alive(s: socket.socket) -> bool:
    """Whether the daemon still holds `s` open (a closed one reads EOF or a reset)."""
    s.setblocking(False)
    try:
        return s.recv(1) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False


def test_idle_connections_from_one_address_neither_starve_others_nor_stay(start_daemon, nginx_url):
    daemon = start_daemon(arguments=["--idle-connection-timeout", "3"], max_open_files=256)
    flood = open_idle(daemon.port, FLOOD)
    try:
        time.sleep(0.5)  # the daemon accepts (and refuses past the per-client cap) in its own time
        held = [s for s in flood if alive(s)]
        # 256 descriptors: 64 reserved, 96 API connections, 24 per client address.
        assert 0 < len(held) <= 24, f"one address holds {len(held)} connections"

        # Another address is answered at once, and a transfer still finds descriptors.
        started = time.monotonic()
        status, body = request_from("127.0.0.2", daemon.port, "GET", "/healthz")
        assert status == 200 and time.monotonic() - started < 2, (status, body)
        task = json_from("127.0.0.2", daemon.port, "POST", "/v1/sessions/shared/tasks",
                         {"kind": "download", "request": {"url": nginx_url + "/files/1MiB.bin"}})
        done = daemon.wait_until(
            lambda: (t := json_from("127.0.0.2", daemon.port, "GET", f"/v1/tasks/{task['id']}"))["state"] == "completed" and t,
            timeout=30, what="the download")
        assert done["error"] is None, done["error"]
        assert done["progress"]["bytesReceived"] == 1 << 20

        # The flood's connections are closed after the idle timeout; the address is served again.
        daemon.wait_until(lambda: not any(alive(s) for s in held), timeout=15, what="the idle connections to be closed")
        status, _ = request_from("127.0.0.1", daemon.port, "GET", "/healthz")
        assert status == 200
        assert "descriptor limit lowers the daemon's caps" in daemon.log_text()
    finally:
        for s in flood:
            s.close()
