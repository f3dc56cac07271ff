"""Stream tasks (URLSessionStreamTask) against real peers on 127.0.0.1, started by
scripts/lib/peers-stream.sh: a socat echo server (TRANSFERD_TEST_ECHO), aiosmtpd with STARTTLS
(TRANSFERD_TEST_STARTTLS, and _UNTRUSTED with a leaf of a CA nobody trusts), and the TLS nginx of
network-peers.sh for TLS from the start. Everything goes through the daemon's REST API."""
from __future__ import annotations

import hashlib
import http.client
import json
import random
import threading
import time
from urllib.parse import urlsplit

import pytest

from conftest import required_environment

MiB = 1 << 20


def endpoint(variable: str) -> tuple[str, int]:
    host, port = required_environment(variable).rsplit(":", 1)
    return host, int(port)


def ca_bundle() -> str:
    with open(required_environment("TRANSFERD_TEST_TLS_CA")) as file:
        return file.read()


def tls_session(daemon) -> str:
    """An ephemeral session that trusts the test CA."""
    return daemon.json("POST", "/v1/sessions", {"kind": "ephemeral", "configuration": {"tlsCABundle": ca_bundle()}})["id"]


def open_stream(daemon, variable: str, session: str = "shared", tls: bool = False) -> int:
    host, port = endpoint(variable)
    task = daemon.json("POST", f"/v1/sessions/{session}/tasks", {"kind": "stream", "host": host, "port": port, "tls": tls})
    assert task["kind"] == "stream" and task["originalRequest"]["url"] == f"{'tls' if tls else 'tcp'}://{host}:{port}"
    return task["id"]


class Client:
    """One keep-alive connection to the daemon (each thread of a test uses its own)."""

    def __init__(self, daemon):
        self.headers = daemon.headers()
        self.connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=90)

    def call(self, method: str, path: str, body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
        headers = dict(self.headers)
        if body is not None:
            headers["Content-Type"] = "application/octet-stream"
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()

    def write(self, task: int, data: bytes, timeout: float = 30) -> None:
        """Writes all of `data`, posting again what a timed-out write did not take."""
        while data:
            status, _, body = self.call("POST", f"/v1/tasks/{task}/write?timeout={timeout}", data)
            assert status == 200, body
            answer = json.loads(body)
            assert 0 <= answer["accepted"] <= len(data)
            assert answer["timedOut"] == (answer["accepted"] < len(data))
            data = data[answer["accepted"]:]

    def read(self, task: int, min: int = 1, max: int = 65536, wait: float = 10) -> tuple[bytes, bool]:
        status, headers, body = self.call("GET", f"/v1/tasks/{task}/read?min={min}&max={max}&wait={wait}")
        assert status == 200, body
        assert headers["content-type"] == "application/octet-stream"
        return body, headers["x-stream-end"] == "true"

    def read_line(self, task: int, ending: bytes) -> bytes:
        """Reads until the bytes end with `ending` (an SMTP reply's last line)."""
        data = b""
        deadline = time.monotonic() + 20
        while not data.endswith(ending):
            assert time.monotonic() < deadline, f"no {ending!r} in {data!r}"
            chunk, ended = self.read(task, wait=5)
            assert not ended, data + chunk
            data += chunk
        return data


def events(daemon, session: str, task: int) -> list[dict]:
    page = daemon.json("GET", f"/v1/sessions/{session}/events?after=0&limit=1000")
    return [event for event in page["events"] if event.get("taskId") == task]


def completed(daemon, task: int) -> dict:
    return daemon.wait_until(lambda: (lambda t: t if t["state"] == "completed" else None)(daemon.json("GET", f"/v1/tasks/{task}")),
                             timeout=30, what=f"task {task} to complete")


def test_echo_moves_100_MiB_each_way_byte_identical_with_concurrent_writes_and_reads(daemon):
    task = open_stream(daemon, "TRANSFERD_TEST_ECHO")
    total = 100 * MiB
    sent_digest, received_digest = hashlib.sha256(), hashlib.sha256()
    received = {"bytes": 0, "ended": False, "reads": 0}
    failures: list[BaseException] = []

    def writer() -> None:
        try:
            client = Client(daemon)
            generator = random.Random(7)
            for _ in range(total // MiB):
                chunk = generator.randbytes(MiB)
                sent_digest.update(chunk)
                client.write(task, chunk)
            status, _, body = client.call("POST", f"/v1/tasks/{task}/close-write")
            assert status == 204, body
        except BaseException as error:  # reported by the main thread
            failures.append(error)

    def reader() -> None:
        try:
            client = Client(daemon)
            while not received["ended"]:
                chunk, ended = client.read(task, min=1, max=4 * MiB, wait=30)
                received_digest.update(chunk)
                received["bytes"] += len(chunk)
                received["reads"] += 1
                received["ended"] = ended
                assert chunk or ended, "a read with wait=30 answered nothing while the echo was flowing"
        except BaseException as error:
            failures.append(error)

    started = time.monotonic()
    threads = [threading.Thread(target=writer), threading.Thread(target=reader)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(300)
    elapsed = time.monotonic() - started
    assert not failures, failures
    assert not any(thread.is_alive() for thread in threads), "the exchange did not finish within 300 s"
    assert received["bytes"] == total
    assert received_digest.hexdigest() == sent_digest.hexdigest()
    print(f"\nstream echo: {total // MiB} MiB each way in {elapsed:.1f} s = {total / MiB / elapsed:.1f} MiB/s each way, "
          f"{received['reads']} reads")

    task_record = completed(daemon, task)
    assert task_record["error"] is None
    assert task_record["progress"]["bytesSent"] == total and task_record["progress"]["bytesReceived"] == total
    kinds = [event["type"] for event in events(daemon, "shared", task)]
    assert set(kinds) == {"writeClosed", "readClosed", "didFinishCollectingMetrics", "didCompleteWithError"}, kinds
    assert kinds.index("writeClosed") < kinds.index("readClosed")  # the echo closes after our FIN
    assert kinds[-2:] == ["didFinishCollectingMetrics", "didCompleteWithError"]
    metrics = daemon.json("GET", f"/v1/tasks/{task}/metrics")["transactionMetrics"]
    assert len(metrics) == 1 and metrics[0]["request"] == {"url": task_record["originalRequest"]["url"], "method": "CONNECT"}
    assert metrics[0]["countOfRequestBodyBytesSent"] == total and metrics[0]["countOfResponseBodyBytesReceived"] == total
    assert metrics[0]["connectEndDate"] is not None and metrics[0]["secureConnectionStartDate"] is None


def test_a_read_that_times_out_returns_what_arrived_and_nothing_without_an_end(daemon):
    task = open_stream(daemon, "TRANSFERD_TEST_ECHO")
    client = Client(daemon)
    client.write(task, b"abc")
    started = time.monotonic()
    data, ended = client.read(task, min=10, max=100, wait=1)
    assert (data, ended) == (b"abc", False)
    assert time.monotonic() - started >= 0.9  # it waited for min=10 until its timeout
    started = time.monotonic()
    data, ended = client.read(task, min=1, max=100, wait=0.5)
    assert (data, ended) == (b"", False)
    assert time.monotonic() - started >= 0.45
    # max splits what arrived; the rest stays, in order.
    client.write(task, b"0123456789")
    assert client.read(task, min=4, max=4) == (b"0123", False)
    assert client.read(task, min=6, max=100) == (b"456789", False)
    assert client.call("POST", f"/v1/tasks/{task}/cancel")[0] == 200


def test_starttls_upgrades_the_connection_in_place_against_a_real_smtp_server(daemon):
    session = tls_session(daemon)
    task = open_stream(daemon, "TRANSFERD_TEST_STARTTLS", session)
    client = Client(daemon)
    assert client.read_line(task, b"\r\n").startswith(b"220 ")
    client.write(task, b"EHLO transferd\r\n")
    plain = client.read_line(task, b"250 HELP\r\n")
    assert b"250-STARTTLS" in plain and b"AUTH" not in plain
    client.write(task, b"STARTTLS\r\n")
    assert client.read_line(task, b"\r\n").startswith(b"220 ")
    status, _, body = client.call("POST", f"/v1/tasks/{task}/start-tls")
    assert status == 204, body
    client.write(task, b"EHLO transferd\r\n")
    secure = client.read_line(task, b"250 HELP\r\n")
    # aiosmtpd offers AUTH only over TLS, and STARTTLS no more.
    assert b"250-AUTH" in secure and b"STARTTLS" not in secure, secure
    record = daemon.json("GET", f"/v1/tasks/{task}")
    assert record["currentRequest"]["url"].startswith("tls://")
    status, _, body = client.call("POST", f"/v1/tasks/{task}/start-tls")
    assert status == 409 and json.loads(body)["error"]["code"] == "tls_already_started"
    client.write(task, b"QUIT\r\n")
    answer, ended = b"", False
    while not ended:  # the server answers and closes the connection: the end comes with it
        chunk, ended = client.read(task, wait=10)
        answer += chunk
    assert answer.startswith(b"221 "), answer
    assert client.call("POST", f"/v1/tasks/{task}/close-write")[0] == 204
    assert completed(daemon, task)["error"] is None
    metrics = daemon.json("GET", f"/v1/tasks/{task}/metrics")["transactionMetrics"]
    assert [m["request"]["method"] for m in metrics] == ["CONNECT", "STARTTLS"]
    assert metrics[0]["secureConnectionEndDate"] is None and metrics[1]["secureConnectionEndDate"] is not None
    assert metrics[1]["isReusedConnection"] and metrics[1]["localPort"] == metrics[0]["localPort"]


def test_starttls_against_an_untrusted_certificate_fails_the_task_with_a_tls_error(daemon):
    session = tls_session(daemon)
    task = open_stream(daemon, "TRANSFERD_TEST_STARTTLS_UNTRUSTED", session)
    client = Client(daemon)
    client.read_line(task, b"\r\n")
    client.write(task, b"STARTTLS\r\n")
    assert client.read_line(task, b"\r\n").startswith(b"220 ")
    status, _, body = client.call("POST", f"/v1/tasks/{task}/start-tls")
    error = json.loads(body)["error"]
    assert status == 502 and error["code"] == "stream_failed" and error["urlErrorCode"] == -1202, body
    record = completed(daemon, task)
    assert record["error"]["code"] == -1202 and record["error"]["name"] == "serverCertificateUntrusted"


def test_tls_from_the_start_speaks_to_an_https_server(daemon):
    session = tls_session(daemon)
    url = urlsplit(required_environment("TRANSFERD_TEST_TLS_VALID"))
    task = daemon.json("POST", f"/v1/sessions/{session}/tasks", {"kind": "stream", "host": url.hostname, "port": url.port, "tls": True})["id"]
    client = Client(daemon)
    client.write(task, b"GET /files/hello.txt HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
    answer, ended = b"", False
    while not ended:
        chunk, ended = client.read(task, wait=10)
        answer += chunk
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n"), answer[:200]
    assert client.call("POST", f"/v1/tasks/{task}/close-write")[0] == 204
    assert completed(daemon, task)["error"] is None
    metrics = daemon.json("GET", f"/v1/tasks/{task}/metrics")["transactionMetrics"]
    assert metrics[0]["secureConnectionEndDate"] is not None


def test_cancel_ends_the_stream_and_answers_a_waiting_read(daemon):
    task = open_stream(daemon, "TRANSFERD_TEST_ECHO")
    answers: list[tuple[int, bytes]] = []
    waiting = threading.Thread(target=lambda: answers.append(Client(daemon).call("GET", f"/v1/tasks/{task}/read?wait=20")[::2]))
    waiting.start()
    time.sleep(0.5)
    started = time.monotonic()
    daemon.json("POST", f"/v1/tasks/{task}/cancel", {})
    waiting.join(10)
    assert answers and answers[0][0] == 409 and json.loads(answers[0][1])["error"]["code"] == "task_completed"
    assert time.monotonic() - started < 5
    record = completed(daemon, task)
    assert record["error"]["code"] == -999
    kinds = [event["type"] for event in events(daemon, "shared", task)]
    assert kinds[-2:] == ["didFinishCollectingMetrics", "didCompleteWithError"]


def test_bad_stream_input_gets_clear_errors(daemon):
    host, port = endpoint("TRANSFERD_TEST_ECHO")

    def create(body: dict, status: int, code: str) -> None:
        got, _, payload = daemon.request("POST", "/v1/sessions/shared/tasks", body)
        assert got == status and json.loads(payload)["error"]["code"] == code, payload

    create({"kind": "stream", "host": host, "port": 0}, 422, "invalid_value")
    create({"kind": "stream", "host": "a/b", "port": port}, 422, "invalid_value")
    create({"kind": "stream", "port": port}, 400, "missing_field")
    create({"kind": "stream", "host": host, "port": port, "request": {"url": "http://127.0.0.1/"}}, 422, "invalid_value")
    create({"kind": "data", "host": host, "request": {"url": "http://127.0.0.1/"}}, 422, "invalid_value")
    background = daemon.json("POST", "/v1/sessions", {"kind": "background", "identifier": "stream-refused"})["id"]
    got, _, payload = daemon.request("POST", f"/v1/sessions/{background}/tasks", {"kind": "stream", "host": host, "port": port})
    assert got == 422, payload

    task = open_stream(daemon, "TRANSFERD_TEST_ECHO")
    client = Client(daemon)
    for query, field in (("min=5&max=2", "min"), ("max=0", "max"), (f"max={64 * MiB}", "max"), ("wait=-1", "wait")):
        status, _, body = client.call("GET", f"/v1/tasks/{task}/read?{query}")
        assert status == 400 and json.loads(body)["error"]["field"] == field, body
    status, _, body = client.call("POST", f"/v1/tasks/{task}/write", b"")
    assert status == 400 and json.loads(body)["error"]["code"] == "empty_write"
    status, _, body = client.call("POST", f"/v1/tasks/{task}/suspend")
    assert status == 409 and json.loads(body)["error"]["code"] == "stream_not_suspendable"
    assert client.call("POST", f"/v1/tasks/{task}/close-write")[0] == 204
    status, _, body = client.call("POST", f"/v1/tasks/{task}/write", b"late")
    assert status == 409 and json.loads(body)["error"]["code"] == "write_closed"
    status, _, body = client.call("POST", f"/v1/tasks/{task}/start-tls")
    assert status == 409 and json.loads(body)["error"]["code"] == "write_closed"
    data, ended = client.read(task, wait=10)
    assert (data, ended) == (b"", True)
    # The stream completed cleanly: a late read still hears the end.
    completed(daemon, task)
    assert client.read(task, wait=1) == (b"", True)

    data_task = daemon.json("POST", "/v1/sessions/shared/tasks", {"kind": "data", "request": {"url": "data:,x"}})["id"]
    status, _, body = client.call("GET", f"/v1/tasks/{data_task}/read")
    assert status == 409 and json.loads(body)["error"]["code"] == "not_a_stream"
    status, _, body = client.call("GET", "/v1/tasks/999999/read")
    assert status == 404, body


def test_a_stream_task_ends_with_network_connection_lost_after_a_restart(start_daemon):
    first = start_daemon(token="stream-restart")
    task = open_stream(first, "TRANSFERD_TEST_ECHO")
    first.wait_until(lambda: first.json("GET", f"/v1/tasks/{task}")["phase"] == "transferring", what="the stream to connect")
    assert first.stop() == 0
    second = start_daemon(token="stream-restart")
    record = second.json("GET", f"/v1/tasks/{task}")
    assert record["state"] == "completed" and record["error"]["code"] == -1005, record
    status, _, body = second.request("GET", f"/v1/tasks/{task}/read")
    assert status == 409 and json.loads(body)["error"]["code"] == "task_completed"
