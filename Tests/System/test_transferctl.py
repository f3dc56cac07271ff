"""transferctl as people and scripts meet it: a progress bar in a real terminal (tmux), plain lines
in a pipe, JSON for scripts, its exit statuses, the suspend/resume/cancel/resume-from cycle, Ctrl-C,
and uploads, all against a real transferd and the nginx and httpbin peers."""
from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import time
from pathlib import Path
from urllib.parse import quote

import pytest

from conftest import required_environment
from daemon import executable

BIG_NAME = "transferctl-100MiB.bin"
BIG_SIZE = 100 * 1024 * 1024
# The bar as ProgressLine draws it: "NAME  45% [====>   ]  45.0 MiB / 100.0 MiB  10.0 MiB/s  ETA 0:06".
BAR = re.compile(r"(\d+)% \[[=> ]+\]  [\d.]+ (?:B|KiB|MiB) / 100\.0 MiB  [\d.]+ (?:B|KiB|MiB|GiB)/s  ETA \d+:\d\d")
# A plain line: "NAME: 45% 7.2 MiB / 16.0 MiB, 4.0 MiB/s, ETA 0:03" (no percent or total while unknown).
PLAIN = re.compile(r"^[\w.-]+: (?:(\d+)% )?[\d.]+ (?:B|KiB|MiB)(?: / [\d.]+ MiB)?, [\d.]+ (?:B|KiB|MiB|GiB)/s, (?:ETA [\d:-]+|done)$")


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def big_file(nginx_root: Path) -> Path:
    """A 100 MiB random file nginx serves, written once (atomically: other tests may read it)."""
    path = nginx_root / BIG_NAME
    if not path.exists() or path.stat().st_size != BIG_SIZE:
        partial = nginx_root / f".{BIG_NAME}.{os.getpid()}"
        with open(partial, "wb") as file:
            for _ in range(BIG_SIZE // (1 << 20)):
                file.write(os.urandom(1 << 20))
        partial.rename(path)
    return path


def ctl(daemon, *arguments: str, token: str | None = None, server: str | None = None, timeout: float = 60,
        cwd: Path | None = None) -> subprocess.CompletedProcess:
    """transferctl with the daemon's address and token in its environment, stdout and stderr captured
    (stderr is not a terminal: plain progress lines)."""
    env = dict(os.environ)
    env["TRANSFERD_SERVER"] = server or daemon.url
    env["TRANSFERD_TOKEN"] = token if token is not None else daemon.token
    return subprocess.run([str(executable("transferctl")), *arguments], env=env, capture_output=True,
                          timeout=timeout, cwd=cwd, stdin=subprocess.DEVNULL)


def ctl_json(daemon, *arguments: str, **options) -> object:
    result = ctl(daemon, *arguments, "--json", **options)
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    return json.loads(result.stdout)


def wait_for_bytes(daemon, task_id: int, at_least: int, timeout: float = 30) -> dict:
    def received():
        task = ctl_json(daemon, "show", str(task_id))
        return task if task["progress"]["bytesReceived"] >= at_least else None
    return daemon.wait_until(received, timeout=timeout, interval=0.2, what=f"task {task_id} to receive {at_least} bytes")


def test_get_draws_a_bar_in_a_terminal_and_saves_the_file_byte_identical(daemon, nginx_url, nginx_root, tmp_path, artifacts):
    source = big_file(nginx_root)
    output = tmp_path / "out.bin"
    status_file = tmp_path / "status"
    socket_name = f"transferctl-test-{os.getpid()}"
    # 20 MiB/s: about five seconds for 100 MiB, long enough to see the bar move.
    command = " ".join([
        "env", f"TRANSFERD_SERVER={shlex.quote(daemon.url)}", f"TRANSFERD_TOKEN={shlex.quote(daemon.token)}",
        shlex.quote(str(executable("transferctl"))), "get", shlex.quote(f"{nginx_url}/files/{BIG_NAME}"),
        "-o", shlex.quote(str(output)), "--limit-rate", "20M",
        f"; echo $? > {shlex.quote(str(status_file))}; sleep 60",
    ])
    tmux = ["tmux", "-L", socket_name]
    subprocess.run([*tmux, "new-session", "-d", "-x", "120", "-y", "30", "-s", "ctl", command], check=True, timeout=10)
    captures: list[str] = []
    try:
        deadline = time.monotonic() + 90
        while not status_file.exists() and time.monotonic() < deadline:
            pane = subprocess.run([*tmux, "capture-pane", "-p", "-t", "ctl"], capture_output=True, timeout=10, check=True).stdout.decode()
            captures.append(pane)
            time.sleep(0.25)
        final = subprocess.run([*tmux, "capture-pane", "-p", "-t", "ctl"], capture_output=True, timeout=10, check=True).stdout.decode()
    finally:
        subprocess.run([*tmux, "kill-server"], timeout=10)
    (artifacts / "transferctl-tmux-captures.txt").write_text("\n----\n".join(captures + [final]))

    assert status_file.exists(), f"transferctl get did not end within 90 s; last screen:\n{final}"
    assert status_file.read_text().strip() == "0", final
    # Mid-transfer screens: the bar (percent, bytes, speed, ETA) redrawn in place on one line.
    percents = []
    for pane in captures:
        lines = [line for line in pane.splitlines() if line.strip()]
        matches = [BAR.search(line) for line in lines]
        found = [int(match.group(1)) for match in matches if match]
        assert len(found) <= 1, f"the bar took more than one line:\n{pane}"
        if found and 0 < found[0] < 100:
            percents.append(found[0])
    assert len(set(percents)) >= 2, f"expected two mid-transfer bars, got percents {percents}; last screen:\n{final}"
    assert percents == sorted(percents)
    # The bar fits the 120-column terminal (the closing "saved PATH" line may wrap: pytest's
    # temporary path grows with its run counter, pytest-101 made it exactly 120 wide).
    assert all(len(line) < 120 for pane in captures for line in pane.splitlines() if BAR.search(line))
    assert "100% [" in final and "done" in final, final
    assert f"saved {output}" in final
    assert daemon.token not in final
    assert output.stat().st_size == BIG_SIZE
    assert sha256(output) == sha256(source)


def test_get_without_a_terminal_prints_plain_lines(daemon, nginx_url, nginx_root, tmp_path):
    source = nginx_root / "16MiB.bin"
    output = tmp_path / "16.bin"
    started = time.monotonic()
    result = ctl(daemon, "get", f"{nginx_url}/files/16MiB.bin", "-o", str(output), "--limit-rate", "4M")
    elapsed = time.monotonic() - started
    stderr = result.stderr.decode()
    assert result.returncode == 0, stderr
    assert "\r" not in stderr and "\x1b" not in stderr
    lines = stderr.splitlines()
    progress = [PLAIN.match(line) for line in lines]
    assert all(progress[:-1]), f"not all lines are progress lines:\n{stderr}"
    # The daemon runs on this host: its file is moved into place, not copied over HTTP.
    assert lines[-1] == f"saved {output} (16.0 MiB; moved from the daemon's folder, not copied)"
    percents = [int(match.group(1)) for match in progress[:-1] if match.group(1)]
    assert len(percents) >= 3 and percents[-1] == 100 and percents == sorted(percents), stderr
    # At most about one line a second, plus the first and the last.
    assert len(percents) <= elapsed + 3, f"{len(percents)} lines in {elapsed:.1f} s"
    assert result.stdout == b""
    assert sha256(output) == sha256(source)


def test_json_output_and_exit_statuses(daemon, nginx_url, nginx_root, tmp_path):
    task = ctl_json(daemon, "get", f"{nginx_url}/files/1MiB.bin", "-o", str(tmp_path / "a.bin"), "--keep-task", "-s")
    assert task["state"] == "completed" and task["error"] is None
    assert (tmp_path / "a.bin").read_bytes() == (nginx_root / "1MiB.bin").read_bytes()
    shown = ctl_json(daemon, "show", str(task["id"]))
    assert shown["id"] == task["id"] and shown["progress"]["bytesReceived"] == 1024 * 1024
    sessions = ctl_json(daemon, "sessions")
    assert task["sessionId"] in [session["id"] for session in sessions["items"]]
    listed = ctl_json(daemon, "ls", "--session", task["sessionId"])
    assert task["id"] in [item["id"] for item in listed["items"]]
    assert task["id"] in [item["id"] for item in ctl_json(daemon, "ls")["items"]]
    events = ctl(daemon, "events", task["sessionId"], "--json")
    assert events.returncode == 0, events.stderr
    decoded = [json.loads(line) for line in events.stdout.decode().splitlines()]
    types = [event["type"] for event in decoded if event["taskId"] == task["id"]]
    assert "didWriteData" in types, types
    # The story ends with the file, the task's metrics (URLSession's order), the completion.
    assert types[-3:] == ["didFinishDownloadingTo", "didFinishCollectingMetrics", "didCompleteWithError"], types
    text_events = [line for line in ctl(daemon, "events", task["sessionId"]).stdout.decode().splitlines()
                   if re.match(rf"\d+ \S+ task {task['id']} ", line)]
    assert re.match(rf"\d+ \S+ task {task['id']} didCompleteWithError", text_events[-1]), text_events
    assert re.match(rf"\d+ \S+ task {task['id']} didFinishCollectingMetrics \{{.*\"transactionCount\":1[,}}]", text_events[-2]), text_events
    # The text forms carry the same task.
    assert f"task:      {task['id']} (download)" in ctl(daemon, "show", str(task["id"])).stdout.decode()
    assert re.search(rf"^{task['id']} +{task['sessionId']} +download +completed +done +100% ", ctl(daemon, "ls").stdout.decode(), re.M)
    # A second get reuses transferctl's session rather than making one per run.
    again = ctl_json(daemon, "get", f"{nginx_url}/files/hello.txt", "-o", str(tmp_path / "h.txt"), "-s")
    assert again["sessionId"] == task["sessionId"]

    # Exit statuses: 4 for a refused token, 3 for no daemon, 5 for an unknown task, 2 for bad
    # arguments, 1 for a failed transfer, 6 for a refused request.
    refused = ctl(daemon, "sessions", token="not-the-token")
    assert refused.returncode == 4, refused.stderr
    assert b"unauthorized" in refused.stderr and b"not-the-token" not in refused.stderr + refused.stdout
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]
    unreachable = ctl(daemon, "ls", server=f"http://127.0.0.1:{closed_port}")
    assert unreachable.returncode == 3, unreachable.stderr
    assert b"cannot reach the daemon" in unreachable.stderr
    missing = ctl(daemon, "show", "987654321")
    assert missing.returncode == 5 and b"not_found" in missing.stderr
    assert ctl(daemon, "show", "not-a-number").returncode == 2
    assert ctl(daemon, "get", "http://x/", "-o", "-", "--json").returncode == 2
    failed = ctl(daemon, "get", f"{nginx_url}/files/no-such-file", "-o", str(tmp_path / "none"))
    assert failed.returncode == 1, failed.stderr
    assert b"fileDoesNotExist" in failed.stderr and not (tmp_path / "none").exists()
    again_cancel = ctl(daemon, "cancel", str(task["id"]))
    assert again_cancel.returncode == 6 and b"task_completed" in again_cancel.stderr


def test_suspend_resume_cancel_with_resume_data_and_resume_from(daemon, nginx_url, nginx_root, tmp_path):
    # /slow/ is 256 KiB/s: the 1 MiB file takes about four seconds.
    created = ctl_json(daemon, "get", f"{nginx_url}/slow/1MiB.bin", "--detach")
    task_id = created["id"]
    assert created["kind"] == "download"
    wait_for_bytes(daemon, task_id, 64 * 1024)

    suspended = ctl_json(daemon, "suspend", str(task_id))
    assert suspended["state"] == "suspended"
    assert ctl(daemon, "suspend", str(task_id)).stdout.decode().strip() == f"task {task_id}: suspended"
    resumed = ctl_json(daemon, "resume", str(task_id))
    assert resumed["state"] == "running"
    assert ctl_json(daemon, "priority", str(task_id), "high")["priority"] == 0.75
    assert ctl_json(daemon, "priority", str(task_id), "0.2")["priority"] == 0.2
    wait_for_bytes(daemon, task_id, 256 * 1024)

    resume_file = tmp_path / "download.resume"
    cancelled = ctl(daemon, "cancel", str(task_id), "--resume-data", str(resume_file))
    assert cancelled.returncode == 0, cancelled.stderr
    assert cancelled.stdout.decode().strip() == f"task {task_id}: cancelled, resume data saved to {resume_file}"
    assert resume_file.stat().st_size > 0
    shown = ctl_json(daemon, "show", str(task_id))
    assert shown["state"] == "completed" and shown["error"]["name"] == "cancelled"
    received_before = shown["progress"]["bytesReceived"]
    assert 0 < received_before < 1024 * 1024

    output = tmp_path / "resumed.bin"
    finished = ctl(daemon, "resume-from", str(resume_file), "-o", str(output), "--keep-task", "--json", timeout=60)
    assert finished.returncode == 0, finished.stderr
    task = json.loads(finished.stdout)
    assert task["state"] == "completed" and task["error"] is None
    lines = ctl(daemon, "events", task["sessionId"], "--json").stdout.decode().splitlines()
    offsets = [json.loads(line)["fileOffset"] for line in lines
               if json.loads(line)["type"] == "didResumeAtOffset" and json.loads(line)["taskId"] == task["id"]]
    assert offsets and offsets[0] > 0, "the new task should continue from the partial file"
    assert sha256(output) == sha256(nginx_root / "1MiB.bin")


def test_ctrl_c_cancels_with_resume_data_that_resume_from_continues(daemon, nginx_url, nginx_root, tmp_path):
    env = dict(os.environ, TRANSFERD_SERVER=daemon.url, TRANSFERD_TOKEN=daemon.token)
    output = tmp_path / "slow.bin"
    process = subprocess.Popen([str(executable("transferctl")), "get", f"{nginx_url}/slow/1MiB.bin", "-o", str(output)],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        assert process.stderr is not None
        first = process.stderr.readline().decode()
        assert PLAIN.match(first.strip()), first
        time.sleep(1.5)
        process.send_signal(signal.SIGINT)
        _, rest = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
    assert process.returncode == 130, rest
    resume_file = tmp_path / "slow.bin.resume"
    # The hint keeps the -o name: following it continues into the same file.
    assert f"transferctl resume-from {resume_file} -o {output}".encode() in rest
    assert not output.exists() and not (tmp_path / "slow.bin.part").exists()
    finished = ctl(daemon, "resume-from", str(resume_file), "-o", str(output), timeout=60)
    assert finished.returncode == 0, finished.stderr
    assert sha256(output) == sha256(nginx_root / "1MiB.bin")


def test_post_and_put_upload_through_the_daemon(daemon, tmp_path):
    httpbin = required_environment("TRANSFERD_TEST_HTTPBIN")
    body = os.urandom(48 * 1024).hex()  # 96 KiB of text: httpbin echoes it as "data"
    upload = tmp_path / "upload.txt"
    upload.write_text(body)
    posted = ctl(daemon, "post", f"{httpbin}/post", "--file", str(upload), "-H", "Content-Type: text/plain")
    assert posted.returncode == 0, posted.stderr
    assert posted.stderr.decode().splitlines()[-1] == "HTTP 200"
    echoed = json.loads(posted.stdout)
    assert echoed["data"] == body
    assert echoed["headers"]["Content-Type"] == "text/plain"

    put = ctl(daemon, "put", f"{httpbin}/put", "--data", "hello transferctl", "--json")
    assert put.returncode == 0, put.stderr
    task = json.loads(put.stdout)
    assert task["kind"] == "upload" and task["response"]["statusCode"] == 200
    assert task["originalRequest"]["method"] == "PUT"

    failing = ctl(daemon, "post", f"{httpbin}/status/418", "--data", "x", "--fail")
    assert failing.returncode == 1 and b"HTTP 418" in failing.stderr
    assert ctl(daemon, "post", f"{httpbin}/status/418", "--data", "x").returncode == 0


def test_curl_options_user_agent_login_remote_name_and_global_options_first(daemon, tmp_path):
    httpbin = required_environment("TRANSFERD_TEST_HTTPBIN")
    work = tmp_path / "curlish"
    work.mkdir()
    # -u answers the server's Basic challenge; a password with @, : and a space is encoded, not split.
    secret = "p@ss:w rd"
    got = ctl(daemon, "get", f"{httpbin}/basic-auth/alice/{quote(secret, safe='@:')}", "-u", f"alice:{secret}", "-o", str(work / "auth.json"))
    assert got.returncode == 0, got.stderr
    assert json.loads((work / "auth.json").read_text()) == {"authenticated": True, "user": "alice"}
    assert secret.encode() not in got.stderr and secret.encode() not in got.stdout
    # -A sets the User-Agent; -O saves under the URL's name (in the working folder).
    agent = subprocess.run([str(executable("transferctl")), "--server", daemon.url, "--token", daemon.token, "get", f"{httpbin}/user-agent", "-A", "probe/1.0", "-O"],
                           cwd=work, capture_output=True, timeout=60)
    assert agent.returncode == 0, agent.stderr
    assert json.loads((work / "user-agent").read_text()) == {"user-agent": "probe/1.0"}
    version = subprocess.run([str(executable("transferctl")), "--version"], capture_output=True, text=True, timeout=30)
    assert version.returncode == 0 and re.match(r"^\d+\.\d+\.\d+ \(commit ([0-9a-f]{7,}|unknown)\)$", version.stdout.strip()), version.stdout


def test_rm_wait_limits_and_stats(daemon, nginx_url, tmp_path):
    ok = ctl_json(daemon, "get", f"{nginx_url}/files/hello.txt", "--detach", "--keep-task")
    stall = ctl_json(daemon, "get", f"{nginx_url}/slow/16MiB.bin", "--detach")
    waited = ctl(daemon, "wait", str(ok["id"]), "--timeout", "30")
    assert waited.returncode == 0 and f"task {ok['id']}: " in waited.stdout.decode(), waited.stderr
    assert ctl(daemon, "wait", str(stall["id"]), "--timeout", "0.5").returncode == 6, "still running: gave up waiting"
    assert ctl(daemon, "cancel", str(stall["id"])).returncode == 0
    assert ctl(daemon, "wait", str(ok["id"]), str(stall["id"])).returncode == 1, "a cancelled task is not a success"

    removed = ctl(daemon, "rm", str(ok["id"]), str(stall["id"]))
    assert removed.returncode == 0, removed.stderr
    assert removed.stdout.decode().splitlines() == [f"task {ok['id']}: removed", f"task {stall['id']}: removed"]
    assert ctl(daemon, "show", str(ok["id"])).returncode == 5
    assert ctl(daemon, "rm", str(ok["id"])).returncode == 5

    changed = ctl(daemon, "limits", "--download", "2M", "--upload", "unlimited")
    assert changed.returncode == 0 and changed.stdout.decode().strip() == "download 2.0 MiB/s, upload unlimited", changed.stdout
    assert ctl_json(daemon, "limits")["downloadBytesPerSecond"] == 2 * 1024 * 1024
    assert ctl(daemon, "limits", "--download", "unlimited").returncode == 0
    stats = ctl(daemon, "stats")
    assert stats.returncode == 0 and re.match(r"^running \d+ of \d+, queued \d+, waiting \d+$", stats.stdout.decode().strip()), stats.stdout


def test_an_output_into_a_missing_folder_is_refused_before_any_task(daemon, nginx_url, tmp_path):
    before = len(ctl_json(daemon, "ls")["items"])
    refused = ctl(daemon, "get", f"{nginx_url}/files/1MiB.bin", "-o", str(tmp_path / "missing" / "x.bin"))
    assert refused.returncode == 7, refused.stderr
    assert b"does not exist" in refused.stderr
    assert len(ctl_json(daemon, "ls")["items"]) == before, "no task was made"


def test_several_urls_and_an_input_file_fail_only_what_fails(daemon, nginx_url, nginx_root, tmp_path):
    """Several URLs run at once and are saved in turn; a failed one is drawn as failed (never
    "done"), the rest are saved, and the exit status says one failed. An aria2-style -i list sets
    names, folders, headers, connections and a checksum per URL."""
    result = ctl(daemon, "get", f"{nginx_url}/files/1MiB.bin", f"{nginx_url}/files/16MiB.bin",
                 f"{nginx_url}/files/no-such-file.bin", cwd=tmp_path, timeout=120)
    stderr = result.stderr.decode()
    assert result.returncode == 1, stderr
    assert sha256(tmp_path / "1MiB.bin") == sha256(nginx_root / "1MiB.bin")
    assert sha256(tmp_path / "16MiB.bin") == sha256(nginx_root / "16MiB.bin")
    assert not (tmp_path / "no-such-file.bin").exists()
    failed_lines = [line for line in stderr.splitlines() if line.startswith("no-such-file.bin (3/3)")]
    assert failed_lines and failed_lines[-1].endswith("FAILED") and "done" not in "".join(failed_lines), stderr
    assert "fileDoesNotExist (-1100, HTTP 404)" in stderr and stderr.rstrip().endswith("1 of 3 downloads failed"), stderr
    # The saved ones were deleted; the failed one stays for `show`, with its error.
    left = ctl_json(daemon, "ls")["items"]
    assert [task["originalRequest"]["url"].rsplit("/", 1)[1] for task in left] == ["no-such-file.bin"]
    assert left[0]["error"]["code"] == -1100

    digest = hashlib.sha256((nginx_root / "1MiB.bin").read_bytes()).hexdigest()
    (tmp_path / "into").mkdir()
    listing = tmp_path / "list.txt"
    listing.write_text(
        "# two downloads, aria2's format\n"
        f"{nginx_url}/files/1MiB.bin\t{nginx_url}/files/1MiB.bin?mirror=1\n"
        "  out=first.bin\n"
        f"  dir={tmp_path / 'into'}\n"
        f"  checksum=sha-256={digest}\n"
        "  header=X-Listed: yes\n"
        "\n"
        f"{nginx_url}/files/16MiB.bin\n"
        "  split=4\n"
        "  max-download-limit=64M\n")
    listed = ctl(daemon, "get", "-i", str(listing), "--keep-task", "--json", cwd=tmp_path, timeout=120)
    assert listed.returncode == 0, listed.stderr.decode()
    assert sha256(tmp_path / "into" / "first.bin") == sha256(nginx_root / "1MiB.bin")
    tasks = [json.loads(line) for line in listed.stdout.decode().splitlines()]
    assert [task["checksum"] for task in tasks] == [f"sha-256={digest}", None]
    assert tasks[0]["mirrors"] == [f"{nginx_url}/files/1MiB.bin?mirror=1"] and tasks[1]["segments"] == 4
    assert tasks[0]["originalRequest"]["headers"]["X-Listed"] == "yes"
    assert tasks[1]["bandwidthLimit"]["downloadBytesPerSecond"] == 64 * 1024 * 1024
    # --keep-task: the daemon's copy stays, so the file was copied, not moved.
    assert "moved" not in listed.stderr.decode()
    assert daemon.request("GET", f"/v1/tasks/{tasks[0]['id']}/file")[0] == 200

    listing.write_text(f"{nginx_url}/files/1MiB.bin\n  segments=2\n")
    refused = ctl(daemon, "get", "-i", str(listing), cwd=tmp_path)
    assert refused.returncode == 2 and f"{listing}:2: unknown option segments" in refused.stderr.decode()
    several = ctl(daemon, "get", f"{nginx_url}/files/1MiB.bin", f"{nginx_url}/files/16MiB.bin", "-o", "x.bin", cwd=tmp_path)
    assert several.returncode == 2 and "-o names one file" in several.stderr.decode()


def test_retry_max_time_checksum_and_proxy(daemon, nginx_url, nginx_root, tmp_path):
    # --retry: a refused connection is tried again, then reported.
    started = time.monotonic()
    retried = ctl(daemon, "get", "--retry", "2", "http://127.0.0.1:9/nothing.bin", cwd=tmp_path)
    stderr = retried.stderr.decode()
    assert retried.returncode == 1, stderr
    assert "trying again in 1 s (1 of 2)" in stderr and "trying again in 2 s (2 of 2)" in stderr, stderr
    assert time.monotonic() - started >= 3
    assert "cannotConnectToHost (-1004)" in stderr.splitlines()[-1]

    # --max-time: cancelled at the bound, exit 28, nothing saved.
    timed = ctl(daemon, "get", "--max-time", "1", "--limit-rate", "256K", f"{nginx_url}/files/16MiB.bin", cwd=tmp_path)
    assert timed.returncode == 28, timed.stderr.decode()
    assert "not done within --max-time 1.0 s; cancelled" in timed.stderr.decode()
    assert not (tmp_path / "16MiB.bin").exists() and not (tmp_path / "16MiB.bin.part").exists()
    cancelled = [task for task in ctl_json(daemon, "ls")["items"] if task["originalRequest"]["url"].endswith("/files/16MiB.bin")]
    assert cancelled and cancelled[-1]["error"]["code"] == -999

    # --checksum: a mismatch fails the download; the right digest saves it.
    wrong = ctl(daemon, "get", "--checksum", "sha-256=" + "0" * 64, f"{nginx_url}/files/1MiB.bin", cwd=tmp_path)
    assert wrong.returncode == 1 and "checksum mismatch" in wrong.stderr.decode(), wrong.stderr.decode()
    assert not (tmp_path / "1MiB.bin").exists()
    right = ctl(daemon, "get", "--checksum", "sha-256=" + hashlib.sha256((nginx_root / "1MiB.bin").read_bytes()).hexdigest(),
                "-x", "2", f"{nginx_url}/files/1MiB.bin", cwd=tmp_path)
    assert right.returncode == 0, right.stderr.decode()
    assert sha256(tmp_path / "1MiB.bin") == sha256(nginx_root / "1MiB.bin")

    # --proxy: the daemon goes through the HTTP proxy peer, in a session of the run's own that
    # is invalidated at its end.
    proxy = required_environment("TRANSFERD_TEST_HTTP_PROXY")
    proxy_log = Path(required_environment("TRANSFERD_TEST_HTTP_PROXY_LOG"))
    before = proxy_log.read_text(errors="replace") if proxy_log.exists() else ""
    proxied = ctl(daemon, "get", "--proxy", f"http://{proxy}", f"{nginx_url}/files/1MiB.bin?via=proxy", "-o", "proxied.bin", cwd=tmp_path)
    assert proxied.returncode == 0, proxied.stderr.decode()
    assert sha256(tmp_path / "proxied.bin") == sha256(nginx_root / "1MiB.bin")
    after = proxy_log.read_text(errors="replace")
    assert "via=proxy" in after[len(before):], after[len(before):][-2000:]
    own = [session for session in ctl_json(daemon, "sessions")["items"] if session["description"] == "transferctl (one run)"]
    assert own and all(session["state"] == "invalidated" for session in own)
    assert ctl(daemon, "get", "--proxy", "ftp://x", f"{nginx_url}/files/1MiB.bin").returncode == 2


def test_continue_at_appends_only_to_the_same_version(daemon, nginx_url, nginx_root, tmp_path):
    """-C - asks for the rest of the local file (Range from its size) with If-Range set to the
    file's time: nginx answers 206 only when that is its Last-Modified, and the rest is appended;
    a file of another version is replaced whole, never mixed; a complete one is left alone."""
    source = nginx_root / "16MiB.bin"
    output = tmp_path / "16MiB.bin"
    saved = ctl(daemon, "get", "-R", f"{nginx_url}/files/16MiB.bin", cwd=tmp_path, timeout=120)
    assert saved.returncode == 0, saved.stderr.decode()
    assert int(output.stat().st_mtime) == int(source.stat().st_mtime), "-R gives the server's Last-Modified"

    data = source.read_bytes()
    output.write_bytes(data[: 5 * 1024 * 1024])
    os.utime(output, (source.stat().st_mtime, source.stat().st_mtime))
    continued = ctl(daemon, "get", "-C", "-", f"{nginx_url}/files/16MiB.bin", cwd=tmp_path, timeout=120)
    assert continued.returncode == 0, continued.stderr.decode()
    assert "(11.0 MiB appended to 5.0 MiB)" in continued.stderr.decode(), continued.stderr.decode()
    assert sha256(output) == sha256(source)

    again = ctl(daemon, "get", "-C", "-", f"{nginx_url}/files/16MiB.bin", cwd=tmp_path)
    assert again.returncode == 0 and "is complete already (16.0 MiB)" in again.stderr.decode(), again.stderr.decode()
    assert sha256(output) == sha256(source)

    # Another version (other bytes, another time): the whole file replaces it.
    output.write_bytes(b"x" * (3 * 1024 * 1024))
    replaced = ctl(daemon, "get", "-C", "-", f"{nginx_url}/files/16MiB.bin", cwd=tmp_path, timeout=120)
    assert replaced.returncode == 0, replaced.stderr.decode()
    assert "replacing it" in replaced.stderr.decode()
    assert sha256(output) == sha256(source)
    assert ctl(daemon, "get", "-C", "100", f"{nginx_url}/files/16MiB.bin", cwd=tmp_path).returncode == 2


def test_insecure_downloads_from_an_untrusted_server_and_says_so(daemon, nginx_root, tmp_path):
    """-k: the daemon's session for the run has tlsVerifiesServerCertificate false, transferctl
    warns on stderr, and the session is invalidated at the end; without -k the same server is
    refused (serverCertificateUntrusted)."""
    untrusted = required_environment("TRANSFERD_TEST_TLS_UNTRUSTED")
    refused = ctl(daemon, "get", f"{untrusted}/files/1MiB.bin", "-o", "strict.bin", cwd=tmp_path)
    assert refused.returncode == 1 and "serverCertificateUntrusted (-1202)" in refused.stderr.decode(), refused.stderr.decode()
    assert not (tmp_path / "strict.bin").exists()
    insecure = ctl(daemon, "get", "-k", f"{untrusted}/files/1MiB.bin", "-o", "insecure.bin", "--keep-task", "--json", cwd=tmp_path)
    assert insecure.returncode == 0, insecure.stderr.decode()
    assert "WARNING: -k: the server's TLS certificate is not verified" in insecure.stderr.decode()
    assert sha256(tmp_path / "insecure.bin") == sha256(nginx_root / "1MiB.bin")
    task = json.loads(insecure.stdout)
    session = daemon.json("GET", f"/v1/sessions/{task['sessionId']}")
    assert session["configuration"]["tlsVerifiesServerCertificate"] is False
    assert session["description"] == "transferctl (one run)"
