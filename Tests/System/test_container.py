"""The Docker image's runtime stage, checked without a Docker engine: scripts/container-check.sh
builds the release binary as the Dockerfile's build stage does, replays the runtime stage in a
debootstrapped Debian root, and runs the daemon there as the container would. The slowest system
test: a release build and, on a machine without the cached base, a debootstrap."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from conftest import required_environment

REPOSITORY = Path(__file__).resolve().parents[2]
PLAN = REPOSITORY / "scripts" / "lib" / "dockerfile_plan.py"

# What the check prints when each part of it passed (scripts/container-check.sh).
EXPECTED_LINES = [
    "build stage: products transferd transferctl",
    "transferctl sessions (as uid 10001, in the root) lists",
    "packages libcurl4 libssl3 libmicrohttpd12 libsqlite3-0 libpq5 zlib1g ca-certificates publicsuffix",
    "libraries, none missing",
    "refused, exit",
    "GET /healthz: 200",
    "PID 1 in its namespace",
    "HEALTHCHECK passed",
    "HTTP download:",
    "sha256 matches",
    "HTTPS download:",
    "untrusted certificate refused",
    "all owned by uid 10001",
    "exit 0 after",
    "HEALTHCHECK fails once the daemon is stopped",
    "container check passed",
]


def test_the_runtime_stage_serves_downloads_and_stops_cleanly(nginx_url, nginx_root, artifacts):
    # The HTTPS part needs the TLS peers: missing, the test fails rather than checking less.
    for name in ("TRANSFERD_TEST_TLS_VALID", "TRANSFERD_TEST_TLS_UNTRUSTED", "TRANSFERD_TEST_TLS_CA"):
        required_environment(name)
    log_path = artifacts / "container-check.log"
    started = time.monotonic()
    with open(log_path, "wb") as log:
        result = subprocess.run(["bash", str(REPOSITORY / "scripts" / "container-check.sh")], cwd=REPOSITORY,
                                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, timeout=3600)
    output = log_path.read_text(errors="replace")
    print(f"container-check.sh took {time.monotonic() - started:.0f} s; log: {log_path}")
    assert result.returncode == 0, f"container-check.sh exited with {result.returncode}:\n{output[-6000:]}"
    missing = [line for line in EXPECTED_LINES if line not in output]
    assert not missing, f"container-check.sh passed without printing {missing}:\n{output[-6000:]}"


def plan_of(dockerfile: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(PLAN), str(dockerfile)], capture_output=True, text=True, timeout=60)


def test_the_plan_reads_the_dockerfile():
    result = plan_of(REPOSITORY / "Dockerfile")
    assert result.returncode == 0, result.stderr
    assert "RUNTIME_PACKAGES=(libcurl4 libssl3 libmicrohttpd12 libsqlite3-0 libpq5 zlib1g ca-certificates publicsuffix)" in result.stdout
    assert "BUILD_FLAGS=(-c release --static-swift-stdlib)" in result.stdout
    assert "RUNTIME_ENTRYPOINT=(/usr/local/bin/transferd)" in result.stdout
    assert "RUNTIME_STOPSIGNAL=(SIGTERM)" in result.stdout


def test_the_plan_refuses_shapes_it_does_not_model(tmp_path):
    """The check must not drift from the Dockerfile: a change it cannot replay fails it by name."""
    original = (REPOSITORY / "Dockerfile").read_text()
    changes = {
        "shell-form ENTRYPOINT": ('ENTRYPOINT ["/usr/local/bin/transferd"]', "ENTRYPOINT /usr/local/bin/transferd"),
        "not modelled": ("VOLUME /data", "ADD extra.tar /opt/\nVOLUME /data"),
        "must pass $SWIFT_BUILD_FLAGS": ('swift build $SWIFT_BUILD_FLAGS --product', "swift build -c release --product"),
        "no HEALTHCHECK": ("HEALTHCHECK --interval", "# HEALTHCHECK --interval"),
    }
    for expected, (old, new) in changes.items():
        assert old in original, f"the Dockerfile no longer contains {old!r}: update this test"
        changed = tmp_path / "Dockerfile"
        changed.write_text(original.replace(old, new))
        result = plan_of(changed)
        assert result.returncode != 0, f"{expected}: the plan accepted the changed Dockerfile"
        assert expected in result.stderr, result.stderr
