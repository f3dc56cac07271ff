"""Every curl example of the documentation runs against a real daemon (issue 20).

Which examples. Every fenced code block of README.md and docs/*.md marked as shell (```sh,
```bash, ```shell, ```console; the docs use sh, and bash once) with a curl command in it (a
line, comments aside, whose command is curl, also inside `$(...)` or after `|`, `;`, `&&`,
`until`, ...). Such a block runs unless SKIPPED_BLOCKS names it, by file and first line, with the
reason: a new example runs by default, and an entry that names no block any more fails
`test_the_lists_name_what_the_docs_hold` (stale). A curl command in any other code block (not
fenced, or fenced without a shell language) fails that test too: fence it as ```sh so it runs.
In a ```console block, lines starting with `$ ` are the commands and the rest is output.

How they run. A document's blocks run in order in one `bash` process with `set -euo pipefail`,
against a daemon of its own (a temporary data folder, a bearer token): a page's examples build on
each other (SID, TID, files written by an earlier block), and different pages do not. A page that
uses a variable it never sets (it was set on an earlier page, README's SID) gets it from PROVIDED,
made before its script starts. T is always the daemon's token (the docs send `Authorization:
Bearer $T`). A line that is not an API example (starting a second transferd, the test command)
is replaced by `:` through NOT_RUN_LINES, with the reason. The working folder and HOME are
temporary.

Where they connect. Nothing leaves 127.0.0.0/8: REWRITES turn the docs' daemon address
(localhost:8080, 127.0.0.1:8080) into the test daemon's, and the docs' example origins
(example.com, files.example, README's web server on port 8000 serving /tmp/site) into the test
peers (nginx, the SFTP and SMTP peers) or temporary folders; each rewrite must still match
something. Then every URL, every JSON "host" and every proxy name left in the script must be a
loopback address, or the test fails before the script starts. At run time the `curl` of the
script is Tests/System/doc_curl.py, which refuses (exit 97, recorded, failing the test) any URL
off loopback before sending it, and the daemon itself runs with `--deny-networks 0.0.0.0/0,::/0
--allow-networks 127.0.0.0/8`.

What is checked. The script exits 0; every curl call to the daemon answered, with a status below
400 unless EXPECTED_STATUSES names the line (file and text) and the status: an example that
deliberately shows an error answer (doc_curl.py fails the call otherwise, as --fail-with-body
does, and a call swallowed by `|| true` is caught from its log). Bounds: each curl call has
--max-time 20; held long-polls' `wait` above 5 s is cut to 5 s (the examples' 10 and 30 s would
only make the test wait for nothing); each block must finish within BLOCK_SECONDS, or the
document's processes are killed and the test fails naming the block.

When an example fails, fix the example in the docs, not these lists.

Each document's script, output and curl calls are in test-artifacts/doc-examples/.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import required_environment

REPO = Path(__file__).resolve().parents[2]
DOCUMENTS = ["README.md", *sorted(str(path.relative_to(REPO)) for path in (REPO / "docs").glob("*.md"))]
SHELL_LANGUAGES = {"sh", "bash", "shell", "console"}
SHIM = Path(__file__).resolve().parent / "doc_curl.py"

BLOCK_SECONDS = 20
MAX_WAIT = 5

# Blocks with a curl command that are not run: (file, first line) -> why. Keep it small.
SKIPPED_BLOCKS: dict[tuple[str, str], str] = {}

# Lines of run blocks replaced by ':': (file, the line as written, stripped) -> why.
NOT_RUN_LINES: dict[tuple[str, str], str] = {
    ("docs/schemes.md", "transferd --file-url-roots /srv/export    # then \"url\": \"file:///srv/export/report.pdf\""):
        "starts a second daemon to show a flag; the examples run against the test's daemon",
    ("docs/schemes.md", "transferd --ssh-known-hosts /etc/transferd/known_hosts &"):
        "starts the daemon: the test's daemon is started with --ssh-known-hosts (the SFTP peer's known_hosts)",
    ("docs/schemes.md", "bash scripts/test.sh --filter RemoteFileSchemeTests   # against pyftpdlib (FTP, FTPS) and asyncssh (SFTP) on 127.0.0.1"):
        "the test command itself",
    ("docs/schemes.md", "bash scripts/test.sh --filter HTTP2Tests   # nginx with h2 over TLS and h2c, five tasks on one connection"):
        "the test command itself",
}


@dataclass(frozen=True)
class Rewrite:
    file: str | None  # None: every document
    pattern: str  # a regular expression
    replacement: str  # str.format fields: the Peers' attributes
    reason: str


REWRITES = [
    Rewrite(None, r"\b(?:localhost|127\.0\.0\.1):8080\b", "127.0.0.1:{daemon_port}", "the docs' daemon is the test's daemon"),
    Rewrite("README.md", r"(?<=[ :])8000\b", "{site_port}", "the quick start's own web server, on a free port"),
    Rewrite("README.md", r"/tmp/site\b", "{work}/site", "the quick start's files, in the test's folder"),
    Rewrite("docs/tasks.md", r"https://example\.com/media/latest", "{nginx}/files/16MiB.bin",
            "the 16 MiB answer the example's comment describes, from nginx"),
    Rewrite("docs/tasks.md", r"https://example\.com/q3\.pdf", "{nginx}/files/1MiB.bin", "a file from nginx"),
    Rewrite("docs/tasks.md", r"https://example\.com/debian\.iso", "{nginx}/files/1MiB.bin",
            "a file from nginx (not the example's checksum: the task fails its check, after the block)"),
    Rewrite("docs/schemes.md", r"sftp://files\.example", "{sftp}", "the SFTP peer"),
    Rewrite("docs/schemes.md", r'"host":"files\.example"', '"host":"127.0.0.1"', "the SFTP peer's host"),
    Rewrite("docs/schemes.md", r"\binternal-ca\.pem\b", "{tls_ca}", "the test CA stands for the reader's own CA file"),
    Rewrite("docs/schemes.md", r'"HTTPSProxy": "proxy\.internal"', '"HTTPSProxy": "127.0.0.1"',
            "a proxy name that resolves nowhere (the block makes no task)"),
    Rewrite("docs/sessions.md", r'"host": "api\.example\.com"', '"host": "127.0.0.1"',
            "a credential's protection space (the block makes no task)"),
    Rewrite("docs/streams.md", r'"host": "127\.0\.0\.1", "port": 2525', '"host": "{smtp_host}", "port": {smtp_port}',
            "the SMTP peer with STARTTLS (aiosmtpd)"),
    Rewrite("docs/streams.md", r"/v1/sessions/shared/tasks", "/v1/sessions/{tls_session}/tasks",
            "the SMTP peer's certificate is from the test CA: a session trusting it stands in for the shared one"),
]

# Variables a page uses without setting them (a reader has them from an earlier page):
# (file, name) -> (what the test makes, why).
PROVIDED: dict[tuple[str, str], tuple[str, str]] = {
    ("docs/sessions.md", "SID"): ("session", "a session, as README's quick start made one"),
    ("docs/scheduling.md", "TID"): ("running download", "a task that runs while its limit is PATCHed (nginx /slow/)"),
    ("docs/tasks.md", "TID"): ("completed download", "a completed task, whose metrics are read"),
}

# Calls that deliberately show an error answer: (file, the curl line as written, stripped) ->
# (status, why).
EXPECTED_STATUSES: dict[tuple[str, str], tuple[int, str]] = {
    ("docs/walkthrough.md", "curl -s -X POST localhost:8080/v1/tasks/$T2/suspend"):
        (409, "the comment above it: a completed task answers 409 task_completed"),
    ("docs/walkthrough.md", "curl -s -X POST localhost:8080/v1/tasks/$T2/cancel"):
        (409, "the comment above it: a completed task answers 409 task_completed"),
}

COMMAND_START = r"(?:^|[;&|(!{]|\$\(|\b(?:then|do|else|until|while|if|time|exec)\s)"
CURL_COMMAND = re.compile(COMMAND_START + r"\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*curl(?=\s|$)")


@dataclass(frozen=True)
class Block:
    file: str
    line: int  # of the opening fence
    language: str
    text: str

    @property
    def fingerprint(self) -> str:
        return next(line.strip() for line in self.text.splitlines() if line.strip())

    @property
    def name(self) -> str:
        return f"{self.file}:{self.line}"

    def commands(self) -> str:
        """The text bash runs: a console block's commands without prompts and output."""
        if self.language != "console":
            return self.text
        lines, continued = [], False
        for line in self.text.splitlines():
            if continued or line.startswith("$ "):
                lines.append(line[2:] if not continued else line)
                continued = line.endswith("\\")
        return "\n".join(lines) + "\n"


def has_curl_command(text: str) -> bool:
    return any(CURL_COMMAND.search(line) for line in text.splitlines() if not line.lstrip().startswith("#"))


def code_blocks(file: str) -> tuple[list[Block], list[tuple[int, str]]]:
    """The fenced blocks of a Markdown file, and its indented code lines (outside fences)."""
    blocks: list[Block] = []
    indented: list[tuple[int, str]] = []
    lines = (REPO / file).read_text().splitlines()
    index = 0
    while index < len(lines):
        opening = re.match(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)", lines[index])
        if not opening:
            if re.match(r"^( {4,}|\t)\S", lines[index]) and (index == 0 or not lines[index - 1].strip()
                                                              or (indented and indented[-1][0] == index)):
                indented.append((index + 1, lines[index]))
            index += 1
            continue
        indent, fence, language = opening.groups()
        body, index = [], index + 1
        start = index
        while index < len(lines) and not re.match(rf"^\s*{re.escape(fence)}\s*$", lines[index]):
            body.append(lines[index][len(indent):] if lines[index].startswith(indent) else lines[index].lstrip())
            index += 1
        blocks.append(Block(file, start, language.lower(), "\n".join(body) + "\n"))
        index += 1
    return blocks, indented


def example_blocks(file: str) -> list[Block]:
    return [block for block in code_blocks(file)[0] if block.language in SHELL_LANGUAGES and has_curl_command(block.commands())]


EXAMPLES = {file: example_blocks(file) for file in DOCUMENTS}


def runs(block: Block) -> bool:
    return (block.file, block.fingerprint) not in SKIPPED_BLOCKS


@pytest.fixture(scope="module", autouse=True)
def fresh_artifact_folder():
    """test-artifacts/doc-examples/ holds this run's documents only."""
    shutil.rmtree(Path(os.environ.get("TRANSFERD_TEST_ARTIFACTS", "test-artifacts")) / "doc-examples", ignore_errors=True)


def run_documents() -> list[str]:
    return [file for file, blocks in EXAMPLES.items() if any(runs(block) for block in blocks)]


def used_variables(text: str) -> set[str]:
    return set(re.findall(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)", text))


# ---- The lists ------------------------------------------------------------------------------

def test_the_lists_name_what_the_docs_hold():
    """No stale entry, no curl example outside a shell fence, a reason for every entry."""
    problems: list[str] = []
    every = {(block.file, block.fingerprint) for blocks in EXAMPLES.values() for block in blocks}
    for key in SKIPPED_BLOCKS:
        if key not in every:
            problems.append(f"stale: no example block of {key[0]} starts with {key[1]!r}")
    run_lines = {(block.file, line.strip()) for blocks in EXAMPLES.values() for block in blocks if runs(block)
                 for line in block.commands().splitlines()}
    for key in [*NOT_RUN_LINES, *EXPECTED_STATUSES]:
        if key not in run_lines:
            problems.append(f"stale: no line of a run example of {key[0]} reads {key[1]!r}")
    for rewrite in REWRITES:
        files = [rewrite.file] if rewrite.file else DOCUMENTS
        if not any(re.search(rewrite.pattern, block.commands()) for file in files for block in EXAMPLES.get(file, []) if runs(block)):
            problems.append(f"stale rewrite: {rewrite.pattern!r} matches no run example of {rewrite.file or 'the docs'}")
    for (file, name) in PROVIDED:
        if not any(name in used_variables(block.commands()) for block in EXAMPLES.get(file, []) if runs(block)):
            problems.append(f"stale: no run example of {file} uses ${name}")
    for reason in [*SKIPPED_BLOCKS.values(), *NOT_RUN_LINES.values(), *(r.reason for r in REWRITES),
                   *(why for _, why in PROVIDED.values()), *(why for _, why in EXPECTED_STATUSES.values())]:
        if not reason.strip():
            problems.append("an entry without a reason")
    for file in DOCUMENTS:
        blocks, indented = code_blocks(file)
        for block in blocks:
            if block.language not in SHELL_LANGUAGES and has_curl_command(block.text):
                problems.append(f"{block.name}: a curl example in a block fenced as {block.language or 'nothing'!r}: fence it as ```sh")
        for number, line in indented:
            if has_curl_command(line.strip()):
                problems.append(f"{file}:{number}: a curl example in an indented code block: fence it as ```sh")
    assert not problems, "\n".join(problems)
    assert sum(len(blocks) for blocks in EXAMPLES.values()) > 10, "the extraction found almost no examples"


# ---- Running them ---------------------------------------------------------------------------

class Peers:
    """What the rewrites' replacements name; each made on first use."""

    def __init__(self, daemon, work: Path):
        self.daemon = daemon
        self.work = work
        self._site_port = None
        self._tls_session = None

    @property
    def daemon_port(self) -> int:
        return self.daemon.port

    @property
    def site_port(self) -> int:
        if self._site_port is None:
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                self._site_port = probe.getsockname()[1]
        return self._site_port

    @property
    def nginx(self) -> str:
        return required_environment("TRANSFERD_TEST_NGINX")

    @property
    def tls_ca(self) -> str:
        return required_environment("TRANSFERD_TEST_TLS_CA")

    @property
    def sftp(self) -> str:
        return required_environment("TRANSFERD_TEST_SFTP")

    @property
    def smtp_host(self) -> str:
        return required_environment("TRANSFERD_TEST_STARTTLS").rsplit(":", 1)[0]

    @property
    def smtp_port(self) -> str:
        return required_environment("TRANSFERD_TEST_STARTTLS").rsplit(":", 1)[1]

    @property
    def tls_session(self) -> str:
        if self._tls_session is None:
            bundle = Path(required_environment("TRANSFERD_TEST_TLS_CA")).read_text()
            self._tls_session = self.daemon.json("POST", "/v1/sessions", {
                "description": "doc examples: trusts the test CA", "configuration": {"tlsCABundle": bundle}})["id"]
        return self._tls_session


def provide(kind: str, peers: Peers) -> str:
    daemon = peers.daemon
    if kind == "session":
        return str(daemon.json("POST", "/v1/sessions", {"description": "doc examples"})["id"])
    if kind == "running download":
        task = daemon.json("POST", "/v1/sessions/shared/tasks", {"kind": "download", "request": {"url": f"{peers.nginx}/slow/16MiB.bin"}})
        return str(task["id"])
    if kind == "completed download":
        task = daemon.json("POST", "/v1/sessions/shared/tasks", {"kind": "download", "request": {"url": f"{peers.nginx}/files/1MiB.bin"}})
        daemon.wait_until(lambda: daemon.json("GET", f"/v1/tasks/{task['id']}")["state"] == "completed", timeout=20,
                          what="the provided download to complete")
        return str(task["id"])
    raise AssertionError(f"unknown kind {kind!r}")


def off_loopback(script: str) -> list[str]:
    """URLs, JSON hosts and proxy names in the script that are not loopback addresses."""
    def loopback(host: str) -> bool:
        return host == "localhost" or bool(re.fullmatch(r"127(?:\.\d{1,3}){3}|\[?::1\]?", host))

    found = []
    for scheme, host in re.findall(r"\b([A-Za-z][A-Za-z0-9+.-]*)://(\[[^\]]*\]|[^/\s\"'`:?#]*)", script):
        if not (loopback(host) or (scheme == "file" and host == "")):
            found.append(f"{scheme}://{host}")
    for key, host in re.findall(r'"(host|\w*Proxy)"\s*:\s*"([^"]*)"', script):
        if not loopback(host):
            found.append(f'"{key}": "{host}"')
    return found


def prepare(file: str, blocks: list[Block], peers: Peers, token: str) -> str:
    """The bash script of a document's run blocks, rewritten; fails on anything off loopback."""
    parts = ["set -euo pipefail", f"T={token}"]
    for block in blocks:
        lines = []
        for line in block.commands().splitlines():
            key = (file, line.strip())
            if key in NOT_RUN_LINES:
                line = ":  # not run by the test: " + NOT_RUN_LINES[key]
            elif key in EXPECTED_STATUSES:
                status = EXPECTED_STATUSES[key][0]
                assert "curl " in line
                line = line.replace("curl ", f"DOC_EXPECT_STATUS={status} curl ", 1)
            lines.append(line)
        text = "\n".join(lines) + "\n"
        for rewrite in REWRITES:
            if rewrite.file in (None, file):
                replacement = re.sub(r"\{(\w+)\}", lambda match: str(getattr(peers, match.group(1))), rewrite.replacement)
                text = re.sub(rewrite.pattern, lambda _, value=replacement: value, text)
        parts += [f"export DOC_BLOCK={block.name}",
                  'printf "start %s %s\\n" "$DOC_BLOCK" "$EPOCHREALTIME" >>"$DOC_PROGRESS"',
                  text.rstrip("\n"),
                  'printf "end %s %s\\n" "$DOC_BLOCK" "$EPOCHREALTIME" >>"$DOC_PROGRESS"']
    outside = off_loopback("\n".join(parts))
    assert not outside, f"{file}: the examples would reach beyond 127.0.0.0/8: {outside}; add a rewrite to a test peer"
    for (provided_file, name), (kind, _) in PROVIDED.items():
        if provided_file == file:
            parts.insert(2, f"{name}={provide(kind, peers)}")
    return "\n".join(parts) + "\n"


@dataclass
class Run:
    status: int | None
    timed_out: str | None
    durations: dict[str, float]
    unfinished: list[str]
    calls: list[dict]
    output: str
    seconds: float


def run_script(script: str, blocks: list[Block], work: Path, daemon, token: str) -> Run:
    real_curl = shutil.which("curl")
    assert real_curl, "curl is not installed"
    bin_dir = work / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    shim = bin_dir / "curl"
    shim.write_text(f"#!/bin/sh\nexec '{sys.executable}' '{SHIM}' \"$@\"\n")
    shim.chmod(0o755)
    (work / "home").mkdir(exist_ok=True)
    script_path, progress, calls, out = work / "examples.sh", work / "progress", work / "calls.jsonl", work / "output"
    script_path.write_text(script)
    environment = {name: value for name, value in os.environ.items() if "proxy" not in name.lower()}
    environment.update(PATH=f"{bin_dir}:{os.environ['PATH']}", HOME=str(work / "home"), DOC_REAL_CURL=real_curl,
                       DOC_DAEMON=f"127.0.0.1:{daemon.port}", DOC_TOKEN=token, DOC_CALL_LOG=str(calls),
                       DOC_PROGRESS=str(progress), DOC_MAX_WAIT=str(MAX_WAIT), DOC_MAX_TIME="20", LC_ALL="C")
    progress.touch()
    calls.touch()
    started = time.monotonic()
    timed_out = None
    with open(out, "wb") as output:
        process = subprocess.Popen(["bash", str(script_path)], cwd=work, env=environment, stdin=subprocess.DEVNULL,
                                   stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            while process.poll() is None:
                time.sleep(0.1)
                marks = progress.read_text().split()
                current = [marks[i + 1] for i in range(0, len(marks) - 2, 3) if marks[i] == "start"]
                ended = {marks[i + 1] for i in range(0, len(marks) - 2, 3) if marks[i] == "end"}
                running = [name for name in current if name not in ended]
                if running:
                    begun = float(marks[marks.index(running[-1]) + 1])
                    if time.time() - begun > BLOCK_SECONDS:
                        timed_out = running[-1]
                        break
        finally:
            for signal_number in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(process.pid, signal_number)
                except ProcessLookupError:
                    break
                time.sleep(0.3)
            process.wait(10)
    seconds = time.monotonic() - started
    marks = progress.read_text().split()
    times: dict[tuple[str, str], float] = {(marks[i], marks[i + 1]): float(marks[i + 2]) for i in range(0, len(marks) - 2, 3)}
    durations = {block.name: times[("end", block.name)] - times[("start", block.name)]
                 for block in blocks if ("end", block.name) in times}
    unfinished = [block.name for block in blocks if block.name not in durations]
    entries = [json.loads(line) for line in calls.read_text().splitlines() if line.strip()]
    return Run(None if timed_out else process.returncode, timed_out, durations, unfinished, entries,
               out.read_text(errors="replace"), seconds)


def report(file: str, script: str, blocks: list[Block], run: Run, artifacts: Path) -> str:
    """Writes the document's artifact; returns a summary for a failure message."""
    folder = artifacts / "doc-examples"
    folder.mkdir(parents=True, exist_ok=True)
    calls = "\n".join(json.dumps(call) for call in run.calls)
    timing = "\n".join(f"{name}: {seconds:.2f} s" for name, seconds in run.durations.items())
    (folder / (re.sub(r"[/:]", "_", file) + ".log")).write_text(
        f"# {file}: {len(blocks)} blocks, {len(run.calls)} curl calls, exit {run.status}, {run.seconds:.2f} s\n"
        f"## blocks\n{timing}\n## script\n{script}\n"
        f"## output\n{run.output}\n## curl calls\n{calls}\n")
    return f"output (last 3000 characters):\n{run.output[-3000:]}\ncurl calls:\n{calls[-3000:]}"


def check(file: str, run: Run, summary: str) -> None:
    assert run.timed_out is None, f"{run.timed_out} ran longer than {BLOCK_SECONDS} s (stopped)\n{summary}"
    assert run.status == 0, f"{file}: the examples exited with {run.status}; unfinished: {run.unfinished}\n{summary}"
    assert not run.unfinished, f"{file}: blocks that did not finish: {run.unfinished}\n{summary}"
    refused = [call for call in run.calls if "refused" in call]
    assert not refused, f"{file}: curl calls to addresses off loopback: {refused}"
    failed = [call for call in run.calls if call["daemon"] and call["result"] != 0]
    assert not failed, f"{file}: curl calls to the daemon failed (status, exit): {failed}\n{summary}"
    for (expected_file, line), (status, _) in EXPECTED_STATUSES.items():
        if expected_file == file:
            assert any(call.get("expect") == str(status) and call["status"] == status for call in run.calls), \
                f"{file}: no call answered {status} for {line!r}\n{summary}"


def start(start_daemon, name: str, token: str):
    arguments = ["--deny-networks", "0.0.0.0/0,::/0", "--allow-networks", "127.0.0.0/8"]
    known_hosts = os.environ.get("TRANSFERD_TEST_SFTP_KNOWN_HOSTS")
    if known_hosts:
        arguments += ["--ssh-known-hosts", known_hosts]
    return start_daemon(name, token=token, arguments=arguments)


def run_blocks(file: str, blocks: list[Block], start_daemon, tmp_path: Path, artifacts: Path, name: str) -> tuple[Run, str]:
    token = secrets.token_hex(16)
    daemon = start(start_daemon, "data", token)
    work = tmp_path / "work"
    work.mkdir()
    peers = Peers(daemon, work)
    script = prepare(file, blocks, peers, token)
    run = run_script(script, blocks, work, daemon, token)
    summary = report(name, script, blocks, run, artifacts)
    status = daemon.stop()
    assert status == 0, f"transferd exited with {status}; log:\n{daemon.log_text()[-3000:]}"
    return run, summary


@pytest.mark.parametrize("file", run_documents())
def test_doc_examples(file, start_daemon, tmp_path, artifacts):
    blocks = [block for block in EXAMPLES[file] if runs(block)]
    run, summary = run_blocks(file, blocks, start_daemon, tmp_path, artifacts, file)
    check(file, run, summary)
    skipped = len(EXAMPLES[file]) - len(blocks)
    print(f"{file}: {len(blocks)} blocks run, {skipped} skipped, {run.seconds:.1f} s "
          f"({', '.join(f'{name} {seconds:.1f} s' for name, seconds in run.durations.items())})")
