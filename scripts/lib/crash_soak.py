#!/usr/bin/env python3
"""The crash soak: kill -9 the real transferd over and over while a background session moves
bytes, and check after every kill that nothing acknowledged was lost and nothing wrong was kept.

One script, two uses: the system test (Tests/System/test_crash_soak.py, 20 kills) and the
benchmark-style command (bench/crash-soak.sh, 100 kills). Standard library only; the origins are
in soak_origins.py, the daemon's process in soak_daemon.py.

What it does:
  1. serves its own origins on 127.0.0.1, throttled per connection so kills land mid-transfer:
     files with strong ETags and Range/If-Range (downloads), an upload sink that keeps every body
     as far as it arrived and the sha256 of the whole ones, and a minimal tus 1.0.0 server
     (creation, HEAD offsets, PATCH appended as it arrives);
  2. starts the built transferd (port 0, its own data folder, a token), posts blobs, a background
     session, and in the first cycles its tasks: downloads, blob- and file-body uploads, tus
     uploads (blob and file bodies);
  3. loops --kills times: post a small blob, sleep a random short time (one time in five almost
     none, so the kill follows an acknowledged write), SIGKILL the daemon by the PID it started,
     check the stopped data folder (PRAGMA integrity_check; every partial file belongs to a task
     that is stored and not completed; every acknowledged task, session and blob is stored),
     restart on the same folder, check the API (every acknowledged write is served; no task is
     suspended or failed; every completed task's bytes are right);
  4. lifts the throttle, waits (bounded) for every task to complete, and checks each download's
     sha256, each upload's body at the sink, each tus upload, that no partial file is left and
     that no task failed.
The last line reports the counts; the exit status is 1 on any violation (2 on a setup failure).
Only processes it started are signalled, by PID; all traffic stays on 127.0.0.1.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import random
import re
import secrets
import shutil
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from soak_daemon import Daemon, SetupFailure
from soak_origins import Origins, Pace, start_origins


def log(message: str) -> None:
    print(f"crash soak: {message}", file=sys.stderr, flush=True)


class Soak:
    """One soak run: its temporary folder, origins, daemon, and what was acknowledged."""

    def __init__(self, options: argparse.Namespace):
        self.options = options
        self.random = random.Random(options.seed)
        self.violations: list[str] = []
        self.root = Path(tempfile.mkdtemp(prefix="transferd-crash-soak-", dir=options.workdir))
        self.data_dir = self.root / "data"
        self.uploads_dir = self.root / "uploads"
        self.uploads_dir.mkdir()
        self.pace = Pace(options.rate)
        self.origins = Origins(self.pace)
        self.server, self.origin_url = start_origins(self.origins)
        self.token = secrets.token_hex(16)
        self.daemon: Daemon | None = None
        self.session_id: str | None = None
        self.blobs: dict[str, str] = {}        # blob id -> sha256
        self.tasks: dict[int, dict] = {}       # acknowledged task id -> what it is and expects
        self.pending: list[dict] = []          # specs not posted yet
        self.verified: set[int] = set()     # completed tasks checked once
        self.bad: set[int] = set()          # of those, the ones that failed or hold wrong bytes

    # ---- bookkeeping ----------------------------------------------------------------------------------

    def violation(self, message: str) -> None:
        self.violations.append(message)
        log(f"VIOLATION: {message}")

    def start_daemon(self) -> None:
        self.daemon = Daemon(self.options.binary, self.data_dir, self.uploads_dir, self.token, self.root / "transferd.log")

    def body(self, size: int) -> bytes:
        return self.random.randbytes(size)

    def size(self, low: int, high: int) -> int:
        return self.random.randint(low, high)

    # ---- setup ----------------------------------------------------------------------------------------

    def prepare(self) -> None:
        o = self.options
        self.start_daemon()
        status, session = self.daemon.request("POST", "/v1/sessions", {
            "kind": "background", "identifier": f"crash-soak-{o.seed}",
            "configuration": {"httpMaximumConnectionsPerHost": 64}})
        if status != 201:
            raise SetupFailure(f"POST /v1/sessions answered {status}: {session}")
        self.session_id = session["id"]
        for index in range(o.downloads):
            name = f"d{index}.bin"
            data = self.body(self.size(o.size // 2, o.size))
            self.origins.files[name] = data
            self.pending.append({"kind": "download", "sha256": hashlib.sha256(data).hexdigest(), "size": len(data),
                                 "spec": {"kind": "download", "request": {"url": f"{self.origin_url}/files/{name}"}}})
        for index in range(o.uploads + o.tus):
            tus = index >= o.uploads
            data = self.body(self.size(o.size // 8, o.size // 4))
            digest = hashlib.sha256(data).hexdigest()
            if index % 2 == 0:
                status, blob = self.daemon.request("POST", "/v1/blobs", data)
                if status != 201 or blob.get("sha256") != digest:
                    raise SetupFailure(f"POST /v1/blobs answered {status}: {blob}")
                self.blobs[blob["id"]] = digest
                body = {"blob": blob["id"]}
            else:
                name = f"u{index}.bin"
                (self.uploads_dir / name).write_bytes(data)
                body = {"file": name}
            if tus:
                request = {"url": f"{self.origin_url}/tus/", "method": "POST", "body": body}
                spec = {"kind": "upload", "resumable": "tus", "request": request}
            else:
                request = {"url": f"{self.origin_url}/sink/u{index}", "method": "PUT", "body": body}
                spec = {"kind": "upload", "request": request}
            self.pending.append({"kind": "tus" if tus else "upload", "sha256": digest, "size": len(data),
                                 "path": f"/sink/u{index}", "spec": spec})
        self.random.shuffle(self.pending)

    def post_some(self, count: int) -> None:
        """Posts up to `count` pending tasks; each 201 is an acknowledged write from then on."""
        for _ in range(min(count, len(self.pending))):
            item = self.pending.pop(0)
            status, task = self.daemon.request("POST", f"/v1/sessions/{self.session_id}/tasks", item["spec"])
            if status != 201:
                raise SetupFailure(f"POST tasks answered {status}: {task}")
            self.tasks[task["id"]] = item

    def post_probe_blob(self) -> None:
        """A small blob posted just before the kill: its 201 says it is stored."""
        data = self.body(4096)
        status, blob = self.daemon.request("POST", "/v1/blobs", data)
        if status != 201:
            raise SetupFailure(f"POST /v1/blobs answered {status}: {blob}")
        self.blobs[blob["id"]] = hashlib.sha256(data).hexdigest()

    # ---- invariants -----------------------------------------------------------------------------------

    def check_stopped_folder(self, kill: int) -> None:
        """On the data folder of a dead daemon: the database is sound and holds every
        acknowledged write; every partial file belongs to a stored task that is not completed."""
        database = self.data_dir / "transferd.sqlite3"
        try:
            connection = sqlite3.connect(f"file:{database}?mode=rw", uri=True, timeout=5)
            try:
                result = [row[0] for row in connection.execute("PRAGMA integrity_check")]
                if result != ["ok"]:
                    self.violation(f"kill {kill}: integrity_check says {result[:5]}")
                states = dict(connection.execute("SELECT id, state FROM tasks"))
                sessions = {row[0] for row in connection.execute("SELECT id FROM sessions")}
                blobs = {row[0]: row[1] for row in connection.execute("SELECT id, sha256 FROM blobs")}
            finally:
                connection.close()
        except sqlite3.Error as error:
            self.violation(f"kill {kill}: the database cannot be read: {error}")
            return
        if self.session_id not in sessions:
            self.violation(f"kill {kill}: session {self.session_id} (answered 201) is not in the database")
        for blob_id, digest in self.blobs.items():
            if blobs.get(blob_id) != digest:
                self.violation(f"kill {kill}: blob {blob_id} (answered 201) is stored as {blobs.get(blob_id)!r}")
        for task_id in self.tasks:
            if task_id not in states:
                self.violation(f"kill {kill}: task {task_id} (answered 201) is not in the database")
        for path in sorted((self.data_dir / "partial").glob("*")):
            match = re.fullmatch(r"(\d+)\.part", path.name)
            task_id = int(match.group(1)) if match else None
            if task_id is None or states.get(task_id) in (None, "completed"):
                self.violation(f"kill {kill}: orphan partial file {path.name} (task state {states.get(task_id)!r})")

    def check_api(self, kill: int) -> None:
        """On the restarted daemon: every acknowledged write is served; no task is suspended,
        canceling or failed; every completed task's bytes are the source's."""
        status, session = self.daemon.request("GET", f"/v1/sessions/{self.session_id}")
        if status != 200:
            self.violation(f"kill {kill}: GET session answered {status}")
        for blob_id in self.blobs:
            status, blob = self.daemon.request("GET", f"/v1/blobs/{blob_id}")
            if status != 200 or blob.get("sha256") != self.blobs[blob_id]:
                self.violation(f"kill {kill}: GET blob {blob_id} answered {status}: {blob}")
        for task_id, item in self.tasks.items():
            status, task = self.daemon.request("GET", f"/v1/tasks/{task_id}")
            if status != 200:
                self.violation(f"kill {kill}: GET task {task_id} (answered 201) answered {status}")
                continue
            if task["state"] not in ("running", "completed"):
                self.violation(f"kill {kill}: task {task_id} is {task['state']} after the restart")
            if task["state"] == "completed":
                if task_id in self.verified and item["kind"] == "download" and task_id not in self.bad:
                    # A completed file must stay whole across every later restart too.
                    location = task.get("location")
                    digest = sha256_of_file(location) if location and os.path.isfile(location) else None
                    if digest != item["sha256"]:
                        self.bad.add(task_id)
                        self.violation(f"kill {kill}: completed download {task_id}'s file {location} changed: sha256 {digest}")
                self.check_completed(task_id, item, task, f"kill {kill}")
            elif task_id in self.verified:
                self.violation(f"kill {kill}: task {task_id} was completed and runs again")

    def check_completed(self, task_id: int, item: dict, task: dict, when: str) -> bool:
        """A completed task: no error, and the bytes at the far end are the source's."""
        if task_id in self.verified:
            return True
        if task.get("error") is not None:
            self.violation(f"{when}: {item['kind']} task {task_id} failed: {task['error']}")
            self.verified.add(task_id)
            self.bad.add(task_id)
            return False
        ok = True
        if item["kind"] == "download":
            location = task.get("location")
            digest = sha256_of_file(location) if location and os.path.isfile(location) else None
            if digest != item["sha256"]:
                ok = False
                self.violation(f"{when}: download {task_id}'s file {location} has sha256 {digest}, the origin's is {item['sha256']}")
        elif item["kind"] == "upload":
            with self.origins.lock:
                attempts = [dict(a) for a in self.origins.sink.get(item["path"], [])]
            whole = [a for a in attempts if a["complete"]]
            if not whole or whole[-1]["sha256"] != item["sha256"] or any(a["sha256"] != item["sha256"] for a in whole):
                ok = False
                self.violation(f"{when}: upload {task_id}: the sink's bodies {attempts} are not the source ({item['size']} bytes, {item['sha256']})")
        else:
            url = (task.get("resumable") or {}).get("uploadURL") or ""
            with self.origins.lock:
                upload = self.origins.tus.get(url.rsplit("/", 1)[-1])
                data = bytes(upload["data"]) if upload else b""
            if hashlib.sha256(data).hexdigest() != item["sha256"]:
                ok = False
                self.violation(f"{when}: tus upload {task_id} at {url}: the server holds {len(data)} bytes that are not the source ({item['size']} bytes)")
        self.verified.add(task_id)
        if not ok:
            self.bad.add(task_id)
        return ok

    # ---- the run --------------------------------------------------------------------------------------

    def run(self) -> int:
        o = self.options
        began = time.monotonic()
        deadline = began + o.timeout
        self.prepare()
        # The tasks go in over the first cycles, so acknowledged writes meet kills too.
        per_cycle = max(1, -(-len(self.pending) // 4))
        kills = 0
        for kill in range(1, o.kills + 1):
            if time.monotonic() > deadline:
                self.violation(f"the soak ran out of time after {kills} kills")
                break
            self.post_some(per_cycle)
            self.post_probe_blob()
            # One kill in five comes right after an acknowledged write; the others mid-transfer.
            if self.random.random() < 0.2:
                time.sleep(self.random.uniform(0, 0.02))
            else:
                time.sleep(self.random.uniform(o.min_gap, o.max_gap))
            self.daemon.kill()
            kills += 1
            self.check_stopped_folder(kill)
            self.start_daemon()
            self.check_api(kill)
            if kill % 10 == 0 or kill == o.kills:
                log(f"{kill} kills, {len(self.verified)} of {len(self.tasks)} tasks completed, {len(self.violations)} violations")
        self.post_some(len(self.pending))
        self.pace.rate = None
        completed = self.wait_for_all(deadline)
        leftovers = sorted(p.name for p in (self.data_dir / "partial").glob("*")) if (self.data_dir / "partial").exists() else []
        if leftovers:
            self.violation(f"partial files left after every task completed: {leftovers[:10]}")
        status = self.daemon.terminate()
        if status != 0:
            self.violation(f"transferd exited with {status} on SIGTERM")
        self.check_stopped_folder(kills + 1)
        identical = len(completed)
        failed = len(self.bad)
        with self.origins.lock:
            cut_bodies = sum(1 for attempts in self.origins.sink.values() for a in attempts if not a["complete"])
            cut = f"{cut_bodies} upload bodies, {self.origins.cut_patches} tus PATCHes cut, {self.origins.ranged_gets} downloads resumed with Range"
        print(f"crash soak: {kills} kills, {len(self.tasks)} tasks, {identical} completed byte-identical, "
              f"{failed} failed, {len(self.violations)} invariant violations; {cut} (seed {o.seed}, {time.monotonic() - began:.0f} s)", flush=True)
        return 1 if self.violations or identical != len(self.tasks) else 0

    def wait_for_all(self, deadline: float) -> set[int]:
        """Waits until every task completed; a task still running at the deadline is stuck.
        Returns the ids that completed without error and with the right bytes."""
        remaining = set(self.tasks)
        last: dict[int, dict] = {}
        while remaining and time.monotonic() < deadline:
            for task_id in sorted(remaining):
                status, task = self.daemon.request("GET", f"/v1/tasks/{task_id}")
                if status != 200:
                    self.violation(f"GET task {task_id} answered {status}")
                    remaining.discard(task_id)
                    continue
                last[task_id] = task
                if task["state"] == "completed":
                    remaining.discard(task_id)
                    self.check_completed(task_id, self.tasks[task_id], task, "at the end")
            if remaining:
                time.sleep(0.25)
        for task_id in sorted(remaining):
            task = last.get(task_id, {})
            self.violation(f"task {task_id} ({self.tasks[task_id]['kind']}) is stuck: {task.get('state')}/{task.get('phase')}, progress {task.get('progress')}")
        return self.verified - self.bad

    def cleanup(self) -> None:
        if self.daemon and self.daemon.process.poll() is None:
            self.daemon.kill()
        self.server.shutdown()
        self.server.server_close()
        if not self.options.keep:
            shutil.rmtree(self.root, ignore_errors=True)
        else:
            log(f"kept {self.root}")


def sha256_of_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while piece := handle.read(1 << 20):
            digest.update(piece)
    return digest.hexdigest()


def main() -> int:
    parser = argparse.ArgumentParser(description="kill -9 transferd over a background session and check nothing is lost")
    parser.add_argument("--binary", type=Path, required=True, help="the transferd executable")
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=None, help="default: random, printed")
    parser.add_argument("--downloads", type=int, default=16)
    parser.add_argument("--uploads", type=int, default=8, help="plain uploads (blob and file bodies alternate)")
    parser.add_argument("--tus", type=int, default=4, help="tus uploads (blob and file bodies alternate)")
    parser.add_argument("--size", type=int, default=2 << 20, help="largest download in bytes (uploads: an eighth to a quarter)")
    parser.add_argument("--rate", type=int, default=256 * 1024, help="bytes per second per connection while killing")
    parser.add_argument("--min-gap", type=float, default=0.3, help="shortest wait before a kill, seconds")
    parser.add_argument("--max-gap", type=float, default=1.5, help="longest wait before a kill, seconds")
    parser.add_argument("--timeout", type=float, default=300, help="the whole run's limit, seconds")
    parser.add_argument("--workdir", default=None, help="where the temporary folder goes")
    parser.add_argument("--keep", action="store_true", help="keep the data folder and log")
    options = parser.parse_args()
    if options.seed is None:
        options.seed = random.SystemRandom().randrange(1 << 31)
    if not options.binary.is_file():
        print(f"crash soak: {options.binary} does not exist: build it first", file=sys.stderr)
        return 2
    log(f"seed {options.seed}: {options.kills} kills, {options.downloads} downloads, {options.uploads} uploads, {options.tus} tus uploads (replay with --seed {options.seed})")
    soak = Soak(options)
    try:
        return soak.run()
    except SetupFailure as failure:
        log(f"setup failed: {failure}")
        print(f"crash soak: setup failed: {failure}", flush=True)
        return 2
    finally:
        if soak.violations and not options.keep:
            log(f"transferd log tail:\n{(soak.root / 'transferd.log').read_text(errors='replace')[-3000:] if (soak.root / 'transferd.log').exists() else ''}")
        soak.cleanup()


if __name__ == "__main__":
    sys.exit(main())
