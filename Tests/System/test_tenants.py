"""Two tenants and an admin on one daemon (issue 16): every object and store one tenant makes is
invisible to the other and untouchable by it, and the daemon-wide controls need the admin.
Driven from outside, over the public API only, against the built daemon and nginx.

Each store is walked the same way: tenant A makes the object, B tries to see, use, change and
delete it and is refused (404, or an answer without A's part), and A's object is then unchanged."""
from __future__ import annotations

import base64
import secrets

import pytest

from conftest import required_environment
from daemon import Daemon

A, B, ADMIN = (secrets.token_hex(16) for _ in range(3))


def as_(daemon: Daemon, token: str) -> Daemon:
    """The same daemon, spoken to with another token."""
    view = object.__new__(Daemon)
    view.__dict__.update(daemon.__dict__)
    view.token = token
    return view


def completed(daemon: Daemon, task_id: int) -> dict:
    return daemon.wait_until(lambda: (t := daemon.json("GET", f"/v1/tasks/{task_id}"))["state"] == "completed" and t,
                             timeout=30, what=f"task {task_id} to complete")


def run(daemon: Daemon, session: str, task: dict) -> dict:
    created = daemon.json("POST", f"/v1/sessions/{session}/tasks", task)
    return completed(daemon, created["id"])


@pytest.fixture
def tenants(start_daemon):
    # One transfer at a time, so a tenant's second task waits in the queue.
    daemon = start_daemon(arguments=["--token", f"alpha:{A}", "--token", f"beta:{B}", "--token", f"root:{ADMIN}:admin",
                                     "--max-transfers", "1"])
    return as_(daemon, A), as_(daemon, B), as_(daemon, ADMIN)


def refused(daemon: Daemon, method: str, path: str, body: object | None = None) -> None:
    status, _, payload = daemon.request(method, path, body)
    assert status == 404, f"{method} {path} as the other tenant: {status} {payload[:300]!r}"


def test_sessions_tasks_bodies_files_events_and_blobs_are_invisible_to_another_tenant(tenants, nginx_url):
    a, b, _ = tenants
    sid = a.json("POST", "/v1/sessions", {})["id"]
    data = run(a, sid, {"kind": "data", "request": {"url": nginx_url + "/files/hello.txt"}})
    download = run(a, sid, {"kind": "download", "request": {"url": nginx_url + "/files/1MiB.bin"}})
    assert data["error"] is None and download["error"] is None
    blob = a.json("POST", "/v1/blobs", b"alpha's blob")["id"]

    for method, path in [
        ("GET", f"/v1/sessions/{sid}"), ("GET", f"/v1/sessions/{sid}/events"), ("GET", f"/v1/sessions/{sid}/tasks"),
        ("GET", f"/v1/sessions/{sid}/cookies"), ("GET", f"/v1/sessions/{sid}/credentials"),
        ("POST", f"/v1/sessions/{sid}/reset"), ("POST", f"/v1/sessions/{sid}/invalidate"), ("DELETE", f"/v1/sessions/{sid}/cache"),
        ("GET", f"/v1/tasks/{data['id']}"), ("GET", f"/v1/tasks/{data['id']}/body"), ("GET", f"/v1/tasks/{data['id']}/progress"),
        ("GET", f"/v1/tasks/{data['id']}/metrics"), ("GET", f"/v1/tasks/{download['id']}/file"),
        ("POST", f"/v1/tasks/{download['id']}/cancel"), ("POST", f"/v1/tasks/{download['id']}/suspend"),
        ("DELETE", f"/v1/tasks/{download['id']}"), ("GET", f"/v1/blobs/{blob}"), ("DELETE", f"/v1/blobs/{blob}"),
    ]:
        refused(b, method, path)
    refused(b, "POST", f"/v1/sessions/{sid}/tasks", {"kind": "data", "request": {"url": nginx_url + "/files/hello.txt"}})
    # An upload naming A's blob is refused as if the blob did not exist.
    status, _, payload = b.request("POST", "/v1/sessions/shared/tasks",
                                   {"kind": "upload", "request": {"url": nginx_url + "/files/x", "method": "PUT", "body": {"blob": blob}}})
    assert status in (400, 404, 422) and b"blob" in payload, (status, payload)
    # Lists show only one's own.
    assert sid not in [s["id"] for s in b.json("GET", "/v1/sessions")["items"]]
    assert not {data["id"], download["id"]} & {t["id"] for t in b.json("GET", "/v1/tasks")["tasks"]}
    # A's objects are all still there and A's own.
    assert a.json("GET", f"/v1/tasks/{download['id']}")["state"] == "completed"
    status, _, body = a.request("GET", f"/v1/tasks/{download['id']}/file")
    assert status == 200 and len(body) == 1 << 20
    assert a.json("GET", f"/v1/blobs/{blob}")["size"] == len(b"alpha's blob")


def test_shared_stores_of_the_shared_session_are_per_tenant(tenants, nginx_url):
    a, b, _ = tenants
    # Cookies: A's jar is not B's.
    a.json("PUT", "/v1/sessions/shared/cookies", {"cookies": [{"name": "who", "value": "alpha", "domain": "127.0.0.1"}]})
    assert b.json("GET", "/v1/sessions/shared/cookies")["cookies"] == []
    assert [c["value"] for c in a.json("GET", "/v1/sessions/shared/cookies")["cookies"]] == ["alpha"]
    b.json("POST", "/v1/sessions/shared/reset")
    assert [c["value"] for c in a.json("GET", "/v1/sessions/shared/cookies")["cookies"]] == ["alpha"], "B's reset emptied A's jar"
    # Credentials: A's permanent credential is not listed, used or deletable by B.
    space = {"host": "127.0.0.1", "port": 1, "protocol": "http", "realm": "r", "authenticationMethod": "HTTPBasic"}
    a.json("PUT", "/v1/sessions/shared/credentials", {"protectionSpace": space, "user": "alpha", "password": "secret-a", "persistence": "permanent"})
    assert b.json("GET", "/v1/sessions/shared/credentials")["items"] == []
    b.request("DELETE", "/v1/sessions/shared/credentials?user=alpha")
    assert [c["user"] for c in a.json("GET", "/v1/sessions/shared/credentials")["items"]] == ["alpha"]
    # ...nor answers B's challenge: httpbin's Basic realm, A's credential stored for it.
    httpbin = required_environment("TRANSFERD_TEST_HTTPBIN")
    host, port = httpbin.removeprefix("http://").split(":")
    a.json("PUT", "/v1/sessions/shared/credentials", {
        "protectionSpace": {"host": host, "port": int(port), "protocol": "http", "realm": "Fake Realm", "authenticationMethod": "HTTPBasic"},
        "user": "alpha", "password": "secret-a", "persistence": "permanent"})
    protected = {"kind": "data", "request": {"url": httpbin + "/basic-auth/alpha/secret-a"}}
    assert run(a, "shared", protected)["response"]["statusCode"] == 200
    assert run(b, "shared", protected)["response"]["statusCode"] == 401
    # URL cache: B's request is not answered with A's stored response.
    url = nginx_url + "/files/hello.txt?tenants"
    policy = {"url": url, "cachePolicy": "returnCacheDataElseLoad"}
    assert run(a, "shared", {"kind": "data", "request": policy})["cacheStatus"] == "network"
    assert run(a, "shared", {"kind": "data", "request": policy})["cacheStatus"] == "cache"
    assert run(b, "shared", {"kind": "data", "request": policy})["cacheStatus"] == "network"
    # Destinations: the same relative destination is two files, one per tenant.
    mine = run(a, "shared", {"kind": "download", "request": {"url": nginx_url + "/files/hello.txt"}, "destination": "t/a.bin"})
    theirs = run(b, "shared", {"kind": "download", "request": {"url": nginx_url + "/files/1MiB.bin"}, "destination": "t/a.bin"})
    assert mine["error"] is None and theirs["error"] is None, (mine["error"], theirs["error"])
    assert mine["location"] != theirs["location"]
    status, _, body = a.request("GET", f"/v1/tasks/{mine['id']}/file")
    assert status == 200 and body == b"hello from nginx\n"


def test_resume_data_is_the_tenants_own(tenants, nginx_url):
    a, b, _ = tenants
    created = a.json("POST", "/v1/sessions/shared/tasks", {"kind": "download", "request": {"url": nginx_url + "/slow/16MiB.bin"}})
    a.wait_until(lambda: a.json("GET", f"/v1/tasks/{created['id']}")["progress"]["bytesReceived"] > 0, what="bytes to arrive")
    cancelled = a.json("POST", f"/v1/tasks/{created['id']}/cancel", {"produceResumeData": True})
    resume = cancelled["error"]["resumeData"]
    # Sealed: the URL it carries cannot be read from it.
    sealed = resume.split(".", 1)[-1]
    assert b"/slow/16MiB.bin" not in base64.urlsafe_b64decode(sealed + "=" * (-len(sealed) % 4))
    status, _, payload = b.request("POST", "/v1/sessions/shared/tasks", {"kind": "download", "resumeData": resume})
    assert status == 400 and b"invalid_resume_data" in payload, (status, payload)
    # A can still use it.
    status, _, _ = a.request("POST", "/v1/sessions/shared/tasks", {"kind": "download", "resumeData": resume})
    assert status == 201


def test_daemon_wide_controls_need_the_admin(tenants):
    a, b, admin = tenants
    for tenant in (a, b):
        status, _, payload = tenant.request("PATCH", "/v1/limits", {"downloadBytesPerSecond": 1})
        assert status == 403 and b"forbidden" in payload, (status, payload)
    assert admin.json("PATCH", "/v1/limits", {"downloadBytesPerSecond": 1 << 30})["downloadBytesPerSecond"] == 1 << 30
    admin.json("PATCH", "/v1/limits", {"downloadBytesPerSecond": None})
    # Everyone may read the limits in force.
    assert "downloadBytesPerSecond" in a.json("GET", "/v1/limits")
    # Daemon-wide figures and the whole cache are the admin's.
    for method, path in [("GET", "/v1/stats"), ("GET", "/metrics"), ("DELETE", "/v1/cache")]:
        status, _, payload = a.request(method, path)
        assert status == 403 and b"forbidden" in payload, (method, path, status, payload)
        status, _, payload = admin.request(method, path)
        assert status in (200, 204), (method, path, status, payload)


def test_queue_and_quota_show_only_the_tenants_own(tenants, nginx_url):
    a, b, _ = tenants
    slow = {"kind": "download", "request": {"url": nginx_url + "/slow/16MiB.bin"}}
    for _ in range(3):
        a.json("POST", "/v1/sessions/shared/tasks", slow)
    assert b.json("GET", "/v1/quota")["tasks"] == 0
    assert a.json("GET", "/v1/quota")["tasks"] == 3
    assert a.json("GET", "/v1/queue")["total"] == 2
    assert b.json("GET", "/v1/queue")["total"] == 0


def test_decisions_and_followed_bodies_are_the_tenants_own(tenants):
    """Issue 21: another tenant can neither see nor answer a pending decision, nor follow a
    running body or read it as a stream; the owner's decision is still pending and answerable."""
    alpha, beta, _ = tenants
    httpbin = required_environment("TRANSFERD_TEST_HTTPBIN")
    task = alpha.json("POST", "/v1/sessions/shared/tasks", {"kind": "data", "decisions": ["response"],
                                                          "request": {"url": f"{httpbin}/bytes/1000"}})
    pending = alpha.wait_until(lambda: alpha.json("GET", f"/v1/tasks/{task['id']}")["decision"], what="the decision")
    refused(beta, "POST", f"/v1/tasks/{task['id']}/decisions/{pending['id']}", {"answer": "cancel"})
    refused(beta, "GET", f"/v1/tasks/{task['id']}/body")
    refused(beta, "GET", f"/v1/tasks/{task['id']}/read?min=1&max=10&wait=0")
    assert alpha.json("GET", f"/v1/tasks/{task['id']}")["decision"]["id"] == pending["id"]
    alpha.json("POST", f"/v1/tasks/{task['id']}/decisions/{pending['id']}", {"answer": "allow"})
    done = completed(alpha, task["id"])
    assert done["error"] is None and done["response"]["statusCode"] == 200
