"""The daemon's log as an operator reads it: one logfmt line per event, an access line per request
with its id, the level from --log-level (an unknown level refused), and no secret ever written."""
from __future__ import annotations

import base64
import re
import signal
import socket
import subprocess
import time
import urllib.request
from urllib.parse import urlsplit

from daemon import executable

LINE = re.compile(r'^ts=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z level=(trace|debug|info|notice|warning|error|critical) '
                  r'label=\S+ msg=("([^"\\]|\\.)*"|\S+)( [A-Za-z0-9._-]+=("([^"\\]|\\.)*"|\S*))*$')


def test_logs_are_logfmt_with_request_ids_and_no_secrets(start_daemon, nginx_url):
    token = "tok-SECRET-4f1c9a"
    daemon = start_daemon(token=token, arguments=["--log-level", "trace"])
    secrets = {
        "token": token,
        "wrong token": "wrong-SECRET-77aa",
        "credential password": "credpass-SECRET-91",
        "url password": "urlpass-SECRET-35",
        "basic header": "basicpass-SECRET-12",
        "cookie": "cookie-SECRET-5e",
        "body": "body-SECRET-c3",
    }
    port = urlsplit(nginx_url).port
    assert daemon.request("GET", "/v1/sessions", headers={"Authorization": "Bearer " + secrets["wrong token"]})[0] == 401
    status, headers, _ = daemon.request("GET", "/v1/sessions", headers={"X-Request-Id": "sys-test-req-1"})
    assert status == 200 and headers["X-Request-Id"] == "sys-test-req-1"
    daemon.json("PUT", "/v1/sessions/shared/credentials", {
        "protectionSpace": {"host": "127.0.0.1", "port": port, "protocol": "http", "realm": "r"},
        "user": "alice", "password": secrets["credential password"], "persistence": "forSession"})
    basic = base64.b64encode(("bob:" + secrets["basic header"]).encode()).decode()
    task = daemon.json("POST", "/v1/sessions/shared/tasks", {
        "kind": "data",
        "request": {"url": f"http://carol:{secrets['url password']}@127.0.0.1:{port}/files/hello.txt",
                    "method": "POST", "headers": {"Authorization": "Basic " + basic, "Cookie": "sid=" + secrets["cookie"]},
                    "body": {"text": secrets["body"]}}})
    daemon.wait_until(lambda: daemon.json("GET", f"/v1/tasks/{task['id']}")["state"] == "completed", timeout=30,
                      what="the data task to complete")
    assert daemon.stop() == 0

    log = daemon.log_text()
    for what, secret in secrets.items():
        assert secret not in log, f"the log holds the {what}"
    assert basic not in log
    lines = log.splitlines()
    assert lines, "the daemon logged nothing"
    for line in lines:
        assert LINE.match(line), f"not a logfmt event line: {line!r}"
    assert any("transferd listening" in line and re.search(r"http\.port=\d+", line) for line in lines)
    access = [line for line in lines if "http.request.id=sys-test-req-1" in line]
    assert len(access) == 1, access
    assert "http.method=GET" in access[0] and "http.route=/v1/sessions" in access[0] and "http.status=200" in access[0]
    assert re.search(r"http\.duration=\d+\.\d{6}", access[0])
    assert any("http.status=401" in line for line in lines), "the refused request has its access line"


def test_the_log_level_is_honoured_and_an_unknown_one_refused(tmp_path):
    # At warning even the listening line (info) is silent, so the port is chosen here.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log_path = tmp_path / "quiet.log"
    with open(log_path, "wb") as log:
        process = subprocess.Popen([str(executable("transferd")), "--listen", f"127.0.0.1:{port}", "--data-dir", str(tmp_path / "quiet"),
                                    "--log-level", "warning"], stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while True:
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as response:
                        assert response.status == 200
                        break
                except OSError:
                    assert time.monotonic() < deadline, "transferd did not answer /healthz in 30 s"
                    time.sleep(0.1)
        finally:
            process.send_signal(signal.SIGTERM)
            assert process.wait(30) == 0
    quiet = log_path.read_text()
    assert "msg=request" not in quiet and "transferd listening" not in quiet, quiet

    result = subprocess.run([str(executable("transferd")), "--log-level", "verbose", "--data-dir", str(tmp_path / "never")],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode != 0
    assert "TRANSFERD_LOG_LEVEL" in result.stderr and "verbose" in result.stderr, result.stderr
