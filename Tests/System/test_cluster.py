"""Three transferd daemons on one PostgreSQL database and one shared data folder (issue 19,
docs/cluster.md): any node answers for any task (read, long-polled and cancelled through nodes
that do not run it), the per-host cap holds across the cluster, a node killed with SIGKILL
mid-run leaves no task behind, and a node stopped past its lease (SIGSTOP) is fenced when it
comes back (SIGCONT): its late completions change nothing, every file ends byte-identical.

The origin is in this process: it serves deterministic files at a fixed rate per request, with
an ETag and ranges, and counts the requests it serves at once and the bytes it sent."""
from __future__ import annotations

import hashlib
import json
import os
import secrets
import signal
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from daemon import Daemon
from test_postgres import database_url, rows  # noqa: F401  (the fixture, and psql)

LEASE = 3  # --lease-timeout: short, so take-overs happen within the test's seconds


def content(name: str, size: int) -> bytes:
    """The bytes of /files/<name>: a function of the name, so a mixed file is detected."""
    seed = hashlib.sha256(name.encode()).digest()
    return (seed * (size // len(seed) + 1))[:size]


class Origin:
    """Serves /files/<name>?size=N at `rate` bytes/s per request, with ETag and Range."""

    def __init__(self, rate: int):
        self.rate = rate
        self.lock = threading.Lock()
        self.active = 0
        self.most = 0
        self.sent = 0
        self.requests = 0
        origin = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                path, _, query = self.path.partition("?")
                size = int(dict(part.split("=") for part in query.split("&") if "=" in part).get("size", "0"))
                name = path.rsplit("/", 1)[-1]
                body = content(name, size)
                etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
                start, status = 0, 200
                wanted = self.headers.get("Range")
                if wanted and wanted.startswith("bytes=") and self.headers.get("If-Range", etag) == etag:
                    first = wanted[6:].split("-")[0]
                    if first.isdigit() and int(first) < size:
                        start, status = int(first), 206
                with origin.lock:
                    origin.active += 1
                    origin.requests += 1
                    origin.most = max(origin.most, origin.active)
                try:
                    self.send_response(status)
                    self.send_header("ETag", etag)
                    self.send_header("Content-Type", "application/octet-stream")
                    self.send_header("Content-Length", str(size - start))
                    if status == 206:
                        self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
                    self.end_headers()
                    chunk = max(1024, origin.rate // 20)
                    for offset in range(start, size, chunk):
                        piece = body[offset:offset + chunk]
                        self.wfile.write(piece)
                        self.wfile.flush()
                        with origin.lock:
                            origin.sent += len(piece)
                        time.sleep(len(piece) / origin.rate)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    with origin.lock:
                        origin.active -= 1

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def cluster(tmp_path, database_url):  # noqa: F811
    """Three nodes on one database and one data folder, each with its own log; stopped after."""
    token = secrets.token_hex(16)
    shared = tmp_path / "shared"
    nodes: list[Daemon] = []
    try:
        for name in ("n1", "n2", "n3"):
            nodes.append(Daemon(shared, token=token, log_path=tmp_path / f"{name}.log",
                                arguments=["--database-url", database_url, "--node-id", name, "--lease-timeout", str(LEASE)]))
        yield nodes
    finally:
        for node in nodes:
            if node.process.poll() is None:
                os.kill(node.process.pid, signal.SIGCONT)  # one a test left stopped
                node.stop()


@pytest.fixture
def origin():
    served = Origin(rate=256 * 1024)
    yield served
    served.close()


def holder_of(database_url: str, task: int) -> str:  # noqa: F811
    found = rows(database_url, f"SELECT node FROM tasks WHERE id = {task}")
    return found[0] if found else ""


def create_downloads(node: Daemon, sid: str, origin: Origin, prefix: str, count: int, size: int) -> dict[int, str]:
    """`count` downloads of the origin's files PREFIX0... made through `node`: {task id: file name}."""
    names = {}
    for index in range(count):
        task = node.json("POST", f"/v1/sessions/{sid}/tasks",
                         {"kind": "download", "request": {"url": f"{origin.url}/files/{prefix}{index}?size={size}"}})
        names[task["id"]] = f"{prefix}{index}"
    return names


def wait_all_completed(node: Daemon, ids: list[int], timeout: float) -> list[dict]:
    def done():
        tasks = [node.json("GET", f"/v1/tasks/{task}") for task in ids]
        return tasks if all(task["state"] == "completed" for task in tasks) else None
    return node.wait_until(done, timeout=timeout, interval=0.5, what=f"{len(ids)} tasks complete")


def assert_identical(tasks: list[dict], names: dict[int, str], size: int):
    for task in tasks:
        assert task.get("error") is None, task
        data = Path(task["location"]).read_bytes()
        assert data == content(names[task["id"]], size), f"task {task['id']} is not its resource"


def test_any_node_answers_for_any_task(cluster, origin, database_url):  # noqa: F811
    a, b, c = cluster
    listed = c.json("GET", "/v1/cluster")
    assert sorted(node["id"] for node in listed["nodes"]) == ["n1", "n2", "n3"], listed
    sid = a.json("POST", "/v1/sessions", {"kind": "background", "identifier": "cluster-any-node"})["id"]
    size = 768 * 1024  # three seconds each
    names = create_downloads(a, sid, origin, "any", 3, size)
    ids = sorted(names)

    # Read through the other nodes, the session's feed long-polled through a third.
    for node in (b, c):
        assert [task["id"] for task in node.json("GET", f"/v1/sessions/{sid}/tasks")["items"]] == ids
    started = b.wait_until(lambda: (t := b.json("GET", f"/v1/tasks/{ids[0]}"))["state"] == "running" and holder_of(database_url, ids[0]) and t,
                           what="the first task runs on a node")
    status, _, body = c.request("GET", f"/v1/sessions/{sid}/events?after=0&wait=10", timeout=20)
    assert status == 200 and json.loads(body)["events"], body[:500]

    # The task's progress long-polled, and the task cancelled, through nodes that do not run it.
    runner = holder_of(database_url, ids[0])
    others = [node for node, name in zip(cluster, ("n1", "n2", "n3")) if name != runner]
    assert others[0].json("GET", f"/v1/tasks/{ids[0]}")["node"] == runner
    status, _, metrics = cluster[("n1", "n2", "n3").index(runner)].request("GET", "/metrics", headers={"Accept": "text/plain"})
    assert status == 200 and any(line.startswith("transferd_cluster_leases ") and float(line.split()[1]) >= 1
                                 for line in metrics.decode().splitlines()), metrics[-2000:]
    status, _, body = others[0].request("GET", f"/v1/tasks/{ids[0]}/progress?after={started['version']}&wait=10", timeout=20)
    assert status == 200 and json.loads(body)["version"] > started["version"], body[:500]
    cancelled = others[1].json("POST", f"/v1/tasks/{ids[0]}/cancel", {})
    assert cancelled["state"] in ("canceling", "completed"), cancelled
    done = others[0].wait_until(lambda: (t := others[0].json("GET", f"/v1/tasks/{ids[0]}"))["state"] == "completed" and t,
                                what="the cancelled task completes")
    assert done["error"]["code"] == -999, done
    assert "node" not in done, done  # no node runs a completed task

    # The others end byte-identical, the feed read on any node the same, each task completed once.
    assert_identical(wait_all_completed(c, ids[1:], timeout=30), names, size)
    feeds = [node.json("GET", f"/v1/sessions/{sid}/events?after=0&limit=1000")["events"] for node in cluster]
    assert feeds[0] == feeds[1] == feeds[2]
    completions = [event["taskId"] for event in feeds[0] if event["type"] == "didCompleteWithError"]
    assert sorted(completions) == ids, completions
    assert [event["seq"] for event in feeds[0]] == sorted(event["seq"] for event in feeds[0])


def test_the_host_cap_holds_across_nodes_and_a_killed_nodes_tasks_finish(cluster, origin, database_url):  # noqa: F811
    a, b, c = cluster
    sid = b.json("POST", "/v1/sessions", {"kind": "background", "identifier": "cluster-cap",
                                          "configuration": {"httpMaximumConnectionsPerHost": 4}})["id"]
    size = 192 * 1024  # 0.75 s each at the origin's rate
    created = b.json("POST", f"/v1/sessions/{sid}/tasks:batch", {"tasks": [
        {"kind": "download", "request": {"url": f"{origin.url}/files/cap{index}?size={size}"}} for index in range(60)]})
    names = {task["id"]: f"cap{index}" for index, task in enumerate(created["tasks"])}
    ids = sorted(names)

    # Mid-run, a node that runs some of them is killed.
    def running_elsewhere():
        holders = set(rows(database_url, "SELECT DISTINCT node FROM tasks WHERE node IS NOT NULL"))
        return next((node for node, name in ((a, "n1"), (c, "n3")) if name in holders), None)
    victim = b.wait_until(running_elsewhere, what="a node other than the maker runs tasks")
    time.sleep(0.5)
    victim.process.kill()
    victim.process.wait(10)

    survivor = a if victim is c else c
    tasks = wait_all_completed(survivor, ids, timeout=120)
    assert_identical(tasks, names, size)
    assert origin.most <= 4, f"the origin served {origin.most} requests at once across the cluster (cap 4)"
    assert origin.sent <= 2 * 60 * size, f"{origin.sent} bytes sent for {60 * size}: some byte went more than twice"
    assert rows(database_url, "SELECT count(*) FROM tasks WHERE node IS NOT NULL OR queued") == ["0"]


def test_a_node_stopped_past_its_lease_is_fenced_when_it_comes_back(cluster, origin, database_url):  # noqa: F811
    a, b, c = cluster
    sid = a.json("POST", "/v1/sessions", {"kind": "background", "identifier": "cluster-fence"})["id"]
    size = 768 * 1024  # three seconds each
    names = create_downloads(a, sid, origin, "fence", 6, size)
    ids = sorted(names)
    by_name = dict(zip(("n1", "n2", "n3"), cluster))
    held = a.wait_until(lambda: [n for n in rows(database_url, "SELECT node FROM tasks WHERE node IS NOT NULL")], what="tasks are leased")
    name = held[0]
    paused = by_name[name]
    mine = [int(i) for i in rows(database_url, f"SELECT id FROM tasks WHERE node = '{name}'")]
    epochs = {int(i): int(e) for i, e in (line.split("|") for line in rows(database_url, "SELECT id, lease_epoch FROM tasks"))}

    # Partitioned: stopped well past its lease; the others take its tasks over meanwhile.
    os.kill(paused.process.pid, signal.SIGSTOP)
    try:
        other = next(node for node in cluster if node is not paused)
        other.wait_until(lambda: all(holder_of(database_url, task) not in ("", name) or
                                     rows(database_url, f"SELECT state FROM tasks WHERE id = {task}") == ["completed"] for task in mine),
                         timeout=LEASE * 4, what="the stopped node's tasks are taken over")
    finally:
        os.kill(paused.process.pid, signal.SIGCONT)

    tasks = wait_all_completed(other, ids, timeout=60)
    assert_identical(tasks, names, size)
    after = {int(i): int(e) for i, e in (line.split("|") for line in rows(database_url, "SELECT id, lease_epoch FROM tasks"))}
    assert all(after[task] > epochs[task] for task in mine), (mine, epochs, after)
    # Its late writes were refused: it let the tasks go, and the feed has one completion each.
    paused.wait_until(lambda: "lost the lease of a task" in paused.log_text(), timeout=LEASE * 2, what="the node sees its leases lost")
    feed = other.json("GET", f"/v1/sessions/{sid}/events?after=0&limit=1000")["events"]
    completions = sorted(event["taskId"] for event in feed if event["type"] == "didCompleteWithError")
    assert completions == ids, completions


def test_a_decision_is_answered_through_a_node_that_does_not_run_the_task(cluster, origin, database_url):  # noqa: F811
    a, b, c = cluster
    sid = a.json("POST", "/v1/sessions", {"description": "cluster decisions"})["id"]
    size = 64 * 1024
    task = a.json("POST", f"/v1/sessions/{sid}/tasks", {"kind": "data", "decisions": ["response"],
                                                      "request": {"url": f"{origin.url}/files/decided?size={size}"}})
    # The pending decision is in the task's row: any node shows it.
    pending = b.wait_until(lambda: (t := b.json("GET", f"/v1/tasks/{task['id']}"))["decision"] and t,
                           what="the response decision")
    runner = holder_of(database_url, task["id"])
    other = next(node for node, name in zip(cluster, ("n1", "n2", "n3")) if name != runner)
    # A wrong kind is refused through the other node too; the right one is carried out.
    status, _, body = other.request("POST", f"/v1/tasks/{task['id']}/decisions/{pending['decision']['id']}", {"answer": "follow"})
    assert status == 422, body
    answered = other.json("POST", f"/v1/tasks/{task['id']}/decisions/{pending['decision']['id']}", {"answer": "allow"})
    assert answered["id"] == task["id"]
    done = c.wait_until(lambda: (t := c.json("GET", f"/v1/tasks/{task['id']}"))["state"] == "completed" and t,
                        what="the decided task completes")
    assert done["error"] is None and done["decision"] is None
    status, _, payload = c.request("GET", f"/v1/tasks/{task['id']}/body")
    assert status == 200 and payload == content("decided", size)


def test_an_ephemeral_session_is_answered_through_any_node_and_stays_off_the_store(tmp_path, origin, database_url):  # noqa: F811
    """An ephemeral session lives only in the memory of the node that made it (never stored, the
    shared database included); the other nodes pass requests for it and its tasks on to that node,
    which checks the token as for its own clients."""
    alpha, beta = secrets.token_hex(16), secrets.token_hex(16)
    shared = tmp_path / "shared"
    nodes: list[Daemon] = []
    try:
        for name in ("e1", "e2"):
            node = Daemon(shared, log_path=tmp_path / f"{name}.log",
                          arguments=["--database-url", database_url, "--node-id", name, "--lease-timeout", str(LEASE),
                                     "--token", f"alpha:{alpha}", "--token", f"beta:{beta}"])
            node.token = alpha
            nodes.append(node)
        maker, other = nodes
        sid = maker.json("POST", "/v1/sessions", {"kind": "ephemeral", "description": "memory only"})["id"]
        assert other.json("GET", f"/v1/sessions/{sid}")["kind"] == "ephemeral"

        # A task created through the other node lives with its session; a body with a query string,
        # an events long-poll and a cancel all go through the node that does not hold it.
        size = 64 * 1024
        task = other.json("POST", f"/v1/sessions/{sid}/tasks", {"kind": "data", "request": {"url": f"{origin.url}/files/eph?size={size}"}})
        done = other.wait_until(lambda: (t := other.json("GET", f"/v1/tasks/{task['id']}"))["state"] == "completed" and t,
                                what="the ephemeral task completes")
        assert done["error"] is None and done["sessionId"] == sid
        status, _, payload = other.request("GET", f"/v1/tasks/{task['id']}/body")
        assert status == 200 and payload == content("eph", size)
        status, headers, payload = other.request("GET", f"/v1/tasks/{task['id']}/body", headers={"Range": "bytes=10-19"})
        assert status == 206 and payload == content("eph", size)[10:20], (status, headers)
        status, _, body = other.request("GET", f"/v1/sessions/{sid}/events?after=0&wait=5&limit=100", timeout=30)
        assert status == 200, body[:300]
        assert "didCompleteWithError" in [event["type"] for event in json.loads(body)["events"]]
        slow = other.json("POST", f"/v1/sessions/{sid}/tasks", {"kind": "download", "request": {"url": f"{origin.url}/files/slow?size={768 * 1024}"}})
        assert other.json("GET", f"/v1/tasks/{slow['id']}").get("node") == "e1"  # where it runs, through either node
        cancelled = other.json("POST", f"/v1/tasks/{slow['id']}/cancel", {})
        assert cancelled["id"] == slow["id"] and cancelled["state"] in ("canceling", "completed"), cancelled
        ended = other.wait_until(lambda: (t := other.json("GET", f"/v1/tasks/{slow['id']}"))["state"] == "completed" and t,
                                 what="the cancelled ephemeral task completes")
        assert ended["error"]["code"] == -999

        # A download's file, streamed through the node that does not hold it (a 2 MiB answer,
        # more than the 1 MiB the passing node buffers).
        big = 2 * 1024 * 1024
        fetched = other.json("POST", f"/v1/sessions/{sid}/tasks", {"kind": "download", "request": {"url": f"{origin.url}/files/big?size={big}"}})
        other.wait_until(lambda: other.json("GET", f"/v1/tasks/{fetched['id']}")["state"] == "completed", timeout=60,
                         what="the ephemeral download completes")
        status, headers, payload = other.request("GET", f"/v1/tasks/{fetched['id']}/file", timeout=60)
        assert status == 200 and payload == content("big", big), (status, len(payload))
        assert int({k.lower(): v for k, v in headers.items()}["content-length"]) == big

        # Nothing of it is in the shared database but where it lives.
        assert rows(database_url, f"SELECT count(*) FROM sessions WHERE id = '{sid}'") == ["0"]
        assert rows(database_url, f"SELECT count(*) FROM tasks WHERE id IN ({task['id']}, {slow['id']})") == ["0"]
        assert rows(database_url, f"SELECT count(*) FROM events WHERE session_id = '{sid}'") == ["0"]
        routes = [f"s {sid} e1", f"t {task['id']} e1", f"t {slow['id']} e1", f"t {fetched['id']} e1"]
        assert sorted(rows(database_url, "SELECT key || ' ' || node FROM ephemeral_routes")) == sorted(routes)

        # Both nodes list it among the sessions (the other node asks the holder), paged with one
        # cursor through this node's sessions and the holder's; a second ephemeral session of the
        # other tenant is listed to that tenant only.
        as_beta = {"Authorization": f"Bearer {beta}"}
        stored = other.json("POST", "/v1/sessions", {"description": "stored"})["id"]
        betas = maker.request("POST", "/v1/sessions", {"kind": "ephemeral"}, headers=as_beta)
        assert betas[0] == 201, betas
        beta_sid = json.loads(betas[2])["id"]
        for node in nodes:
            # (A session made through one node reaches the others' lists with its signal.)
            def listing(node=node):
                ids = [s["id"] for s in node.json("GET", "/v1/sessions?limit=1000")["items"]]
                return ids if stored in ids else None
            listed = node.wait_until(listing, what="the stored session is listed")
            assert sid in listed and stored in listed and beta_sid not in listed, (node.url, listed)
            paged, cursor = [], None
            for _ in range(20):
                page = node.json("GET", "/v1/sessions?limit=1" + (f"&cursor={cursor}" if cursor else ""))
                paged += [s["id"] for s in page["items"]]
                cursor = page["next"]
                if cursor is None:
                    break
            assert paged == listed, (node.url, paged, listed)
            assert [s["id"] for s in node.json("GET", "/v1/sessions?kind=ephemeral")["items"]] == [sid]
            status, _, payload = node.request("GET", "/v1/sessions?limit=1000", headers=as_beta)
            assert status == 200 and beta_sid in [s["id"] for s in json.loads(payload)["items"]], payload[:300]
            assert sid not in [s["id"] for s in json.loads(payload)["items"]]
        status, _, payload = other.request("GET", "/v1/sessions?kind=weekly")
        assert status == 400 and json.loads(payload)["error"]["code"] == "invalid_query", payload[:300]

        # Another tenant gets the holder's 404 through either node, and a name no node holds is 404.
        for node in nodes:
            for method, path in (("GET", f"/v1/sessions/{sid}"), ("GET", f"/v1/tasks/{task['id']}"),
                                 ("GET", f"/v1/tasks/{task['id']}/body"), ("POST", f"/v1/tasks/{task['id']}/cancel")):
                status, _, payload = node.request(method, path, {} if method == "POST" else None, headers=as_beta)
                assert status == 404, f"{method} {path} as beta through {node.url}: {status} {payload[:200]!r}"
        status, _, _ = other.request("GET", "/v1/sessions/no-such-session")
        assert status == 404

        # The holder stops: its routes go with it, and the other node answers 404 at once and
        # lists none of its sessions.
        maker.stop()
        assert rows(database_url, "SELECT count(*) FROM ephemeral_routes") == ["0"]
        status, _, payload = other.request("GET", f"/v1/tasks/{task['id']}")
        assert status == 404, payload[:300]
        assert sid not in [s["id"] for s in other.json("GET", "/v1/sessions?limit=1000")["items"]]
    finally:
        for node in nodes:
            if node.process.poll() is None:
                node.stop()
