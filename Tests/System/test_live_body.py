"""A running data task's body read as it arrives (issue 21): GET /v1/tasks/{tid}/body streams
what has arrived and then the rest, for several readers at once, with Range; didReceiveData
events carry the bytes when the task asks. The origin is an in-process server on 127.0.0.1 that
trickles its body in steps the test releases, so a reader is shown to get bytes before the
task completes."""
from __future__ import annotations

import base64
import hashlib
import http.client
import http.server
import os
import threading
import time

import pytest

CHUNK = 32 * 1024
CHUNKS = 8


class TrickleOrigin:
    """Serves /body: CHUNKS chunks of CHUNK bytes, each sent when the test releases it (a
    semaphore), with a Content-Length; /chunked the same without one. Stops by itself."""

    def __init__(self) -> None:
        self.body = os.urandom(CHUNK * CHUNKS)
        self.release = threading.Semaphore(0)
        origin = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/x-test")
                if self.path == "/body":
                    self.send_header("Content-Length", str(len(origin.body)))
                else:
                    self.send_header("Connection", "close")
                self.end_headers()
                for start in range(0, len(origin.body), CHUNK):
                    if not origin.release.acquire(timeout=30):
                        return
                    self.wfile.write(origin.body[start:start + CHUNK])
                    self.wfile.flush()

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        for _ in range(CHUNKS):
            self.release.release()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def origin():
    running = TrickleOrigin()
    yield running
    running.close()


def get_body(daemon, tid: int, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=60)
    connection.request("GET", f"/v1/tasks/{tid}/body", headers=daemon.headers(headers or {}))
    return connection.getresponse()


def test_three_readers_follow_a_trickled_body(daemon, origin):
    task = daemon.json("POST", "/v1/sessions/shared/tasks", {"kind": "data", "request": {"url": f"{origin.url}/body"}})
    origin.release.release()  # the first chunk: the response is there, the rest is not
    daemon.wait_until(lambda: daemon.json("GET", f"/v1/tasks/{task['id']}")["progress"]["bytesReceived"] >= CHUNK,
                      what="the first chunk")
    results: dict[int, bytes] = {}
    statuses: dict[int, tuple[int, dict[str, str]]] = {}
    first_read = threading.Barrier(4)

    def reader(index: int) -> None:
        response = get_body(daemon, task["id"])
        statuses[index] = (response.status, {k.lower(): v for k, v in response.getheaders()})
        # What had arrived before the reader came (the body's last byte so far waits: a reader
        # of the whole body gets the last byte only once the task succeeded).
        head = response.read(CHUNK - 1)
        first_read.wait(timeout=30)
        results[index] = head + response.read()

    readers = [threading.Thread(target=reader, args=(i,)) for i in range(3)]
    for thread in readers:
        thread.start()
    first_read.wait(timeout=30)
    # Every reader has the first chunk while the task still runs.
    assert daemon.json("GET", f"/v1/tasks/{task['id']}")["state"] == "running"
    for _ in range(CHUNKS - 1):
        origin.release.release()
        time.sleep(0.05)
    for thread in readers:
        thread.join(timeout=60)
    for index in range(3):
        status, headers = statuses[index]
        assert status == 200
        assert headers["content-type"] == "application/x-test"
        assert headers.get("content-length") == str(len(origin.body))
        assert hashlib.sha256(results[index]).hexdigest() == hashlib.sha256(origin.body).hexdigest()
    done = daemon.wait_until(lambda: (t := daemon.json("GET", f"/v1/tasks/{task['id']}"))["state"] == "completed" and t)
    assert done["error"] is None
    # A reader after the end gets the whole body as before.
    assert get_body(daemon, task["id"]).read() == origin.body


def test_ranges_of_a_running_body_and_a_failed_end(daemon, origin):
    task = daemon.json("POST", "/v1/sessions/shared/tasks", {"kind": "data", "request": {"url": f"{origin.url}/body"}})
    origin.release.release()
    daemon.wait_until(lambda: daemon.json("GET", f"/v1/tasks/{task['id']}")["progress"]["bytesReceived"] >= CHUNK,
                      what="the first chunk")
    # A range of what is there is answered at once.
    part = get_body(daemon, task["id"], {"Range": "bytes=100-199"})
    assert part.status == 206 and part.getheader("Content-Range") == f"bytes 100-199/{len(origin.body)}"
    assert part.read() == origin.body[100:200]
    # A range past what arrived waits for it.
    later: list[bytes] = []
    tail = threading.Thread(target=lambda: later.append(get_body(daemon, task["id"], {"Range": f"bytes={3 * CHUNK}-"}).read()))
    tail.start()
    time.sleep(0.3)
    assert tail.is_alive()
    for _ in range(CHUNKS - 1):
        origin.release.release()
    tail.join(timeout=30)
    assert later == [origin.body[3 * CHUNK:]]
    unsatisfiable = get_body(daemon, task["id"], {"Range": f"bytes={len(origin.body)}-"})
    assert unsatisfiable.status == 416


def test_a_cancelled_task_cuts_its_readers_off(daemon, origin):
    task = daemon.json("POST", "/v1/sessions/shared/tasks", {"kind": "data", "request": {"url": f"{origin.url}/chunked"}})
    origin.release.release()
    daemon.wait_until(lambda: daemon.json("GET", f"/v1/tasks/{task['id']}")["progress"]["bytesReceived"] >= CHUNK,
                      what="the first chunk")
    response = get_body(daemon, task["id"])
    assert response.status == 200 and response.getheader("Transfer-Encoding") == "chunked"
    assert response.read(CHUNK - 1) == origin.body[:CHUNK - 1]
    daemon.json("POST", f"/v1/tasks/{task['id']}/cancel", {})
    with pytest.raises(http.client.IncompleteRead):
        response.read()


def test_data_in_events(daemon, origin):
    task = daemon.json("POST", "/v1/sessions/shared/tasks", {"kind": "data", "dataInEvents": True,
                                                               "request": {"url": f"{origin.url}/body"}})
    assert task["dataInEvents"] is True
    for _ in range(CHUNKS):
        origin.release.release()
    daemon.wait_until(lambda: daemon.json("GET", f"/v1/tasks/{task['id']}")["state"] == "completed")
    events = daemon.json("GET", f"/v1/sessions/shared/events?after=0&task={task['id']}")["events"]
    received = [e for e in events if e["type"] == "didReceiveData"]
    assert received and all(len(base64.b64decode(e["data"])) == e["bytesReceived"] <= 65536 for e in received)
    assert [e["offset"] for e in received] == [sum(r["bytesReceived"] for r in received[:i]) for i in range(len(received))]
    assert b"".join(base64.b64decode(e["data"]) for e in received) == origin.body
    with pytest.raises(Exception) as refused:
        daemon.json("POST", "/v1/sessions/shared/tasks", {"kind": "download", "dataInEvents": True,
                                                           "request": {"url": f"{origin.url}/body"}})
    assert "dataInEvents" in str(refused.value)


def test_a_body_that_fails_its_checksum_never_ends_cleanly(daemon, origin):
    task = daemon.json("POST", "/v1/sessions/shared/tasks", {"kind": "data", "checksum": "sha-256=" + "00" * 32,
                                                               "request": {"url": f"{origin.url}/body"}})
    origin.release.release()
    daemon.wait_until(lambda: daemon.json("GET", f"/v1/tasks/{task['id']}")["progress"]["bytesReceived"] >= CHUNK,
                      what="the first chunk")
    response = get_body(daemon, task["id"])
    assert response.status == 200 and response.getheader("Content-Length") == str(len(origin.body))
    for _ in range(CHUNKS - 1):
        origin.release.release()
    # Every byte but the last arrives; the task fails its checksum, so the answer is cut short.
    with pytest.raises(http.client.IncompleteRead) as cut:
        response.read()
    assert len(cut.value.partial) == len(origin.body) - 1
    failed = daemon.wait_until(lambda: (t := daemon.json("GET", f"/v1/tasks/{task['id']}"))["state"] == "completed" and t)
    assert failed["error"] is not None
