"""The daemon on PostgreSQL (`--database-url`, issue 19): the same API with its state in the
test PostgreSQL server instead of SQLite, kept across a SIGKILL (a download resumes from its
checkpoint and ends byte-identical), and the daemon in the nodes' registry (`GET /v1/cluster`)
until it stops. Several daemons on one database: test_cluster.py."""
from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import required_environment
from daemon import Daemon


def psql() -> str:
    """The PostgreSQL client the test command installed (Debian keeps the server's own out of PATH)."""
    found = shutil.which("psql") or next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin/psql"))), None)
    if not found:
        pytest.fail("no psql: the test command installs the postgresql package")
    return str(found)


@pytest.fixture
def database_url():
    """A database of this test's own on the test server, dropped afterwards."""
    server = required_environment("TRANSFERD_TEST_POSTGRES")
    name = f"sys_{secrets.token_hex(6)}"
    subprocess.run([psql(), "-q", "-v", "ON_ERROR_STOP=1", "-d", server, "-c", f"CREATE DATABASE {name}"], check=True, timeout=30)
    yield server.rsplit("/", 1)[0] + "/" + name
    subprocess.run([psql(), "-q", "-d", server, "-c", f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"], timeout=30)


def rows(url: str, query: str) -> list[str]:
    out = subprocess.run([psql(), "-qAt", "-v", "ON_ERROR_STOP=1", "-d", url, "-c", query], check=True, timeout=30,
                         capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line]


def test_the_state_lives_in_postgresql_and_survives_a_kill(tmp_path, database_url, nginx_url, nginx_root):
    token = secrets.token_hex(16)
    arguments = ["--database-url", database_url, "--node-id", "pg-node-1"]
    first = Daemon(tmp_path / "data", token=token, arguments=arguments)
    try:
        session = first.json("POST", "/v1/sessions", {"kind": "background", "identifier": "postgres-system"})
        sid = session["id"]
        fast = first.json("POST", f"/v1/sessions/{sid}/tasks", {"kind": "download", "request": {"url": f"{nginx_url}/files/1MiB.bin"}})
        data = first.json("POST", f"/v1/sessions/{sid}/tasks", {"kind": "data", "request": {"url": f"{nginx_url}/files/1MiB.bin"}})
        slow = first.json("POST", f"/v1/sessions/{sid}/tasks", {"kind": "download", "request": {"url": f"{nginx_url}/slow/1MiB.bin"}})
        for task in (fast, data):
            first.wait_until(lambda: first.json("GET", f"/v1/tasks/{task['id']}")["state"] == "completed", what=f"task {task['id']} completes")
        # The rows are PostgreSQL's: the data folder holds no SQLite database.
        assert sorted(rows(database_url, "SELECT id FROM tasks WHERE state = 'completed' ORDER BY id")) == sorted([str(fast["id"]), str(data["id"])])
        assert not (tmp_path / "data" / "transferd.sqlite3").exists()
        # The daemon registered itself among the database's nodes.
        cluster = first.json("GET", "/v1/cluster")
        assert cluster["database"] == "postgresql" and cluster["node"] == "pg-node-1", cluster
        assert [(node["id"], node["address"]) for node in cluster["nodes"]] == [("pg-node-1", f"127.0.0.1:{first.port}")]

        # SIGKILL while the slow download runs, once a checkpoint recorded some of its bytes.
        first.wait_until(lambda: int((rows(database_url, f"SELECT record::json->'progress'->>'bytesReceived' FROM tasks WHERE id = {slow['id']}") or ['0'])[0] or 0) > 0,
                         timeout=20, what="a checkpoint of the slow download")
    finally:
        first.process.kill()
        first.process.wait(10)

    again = Daemon(tmp_path / "data", token=token, arguments=arguments)
    try:
        done = again.wait_until(lambda: (t := again.json("GET", f"/v1/tasks/{slow['id']}"))["state"] == "completed" and t, timeout=60,
                                what="the slow download completes after the restart")
        assert done.get("error") is None, done
        expected = hashlib.sha256((nginx_root / "1MiB.bin").read_bytes()).hexdigest()
        assert hashlib.sha256(Path(done["location"]).read_bytes()).hexdigest() == expected
        status, _, body = again.request("GET", f"/v1/tasks/{data['id']}/body")
        assert status == 200 and hashlib.sha256(body).hexdigest() == expected
        listed = [task["id"] for task in again.json("GET", f"/v1/sessions/{sid}/tasks")["items"]]
        assert listed == sorted([fast["id"], data["id"], slow["id"]])
        events = again.json("GET", f"/v1/sessions/{sid}/events?after=0")["events"]
        assert any(event["type"] == "didCompleteWithError" and event.get("taskId") == fast["id"] for event in events)
    finally:
        assert again.stop() == 0
    # A clean stop leaves the nodes' registry at once.
    assert rows(database_url, "SELECT id FROM cluster_nodes") == []
