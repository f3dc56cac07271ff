"""Fixtures of the system tests (run by `bash scripts/test.sh`, which builds the executables,
starts the peers and exports their addresses as TRANSFERD_TEST_*)."""
from __future__ import annotations

import os
import secrets
from pathlib import Path

import pytest

from daemon import Daemon

# Run after the others: they use the release build that scripts/test.sh starts beside the Swift
# tests (scripts/container-check.sh --build-only), which on a new machine is not done when the
# system tests begin. Run first, they waited minutes for it while the others could have run.
NEEDS_THE_RELEASE_BUILD = ("test_container.py", "test_package.py")


def pytest_collection_modifyitems(session, config, items):
    """The tests of NEEDS_THE_RELEASE_BUILD last, every other test in its collected order."""
    items.sort(key=lambda item: item.path.name in NEEDS_THE_RELEASE_BUILD)


@pytest.fixture
def artifacts() -> Path:
    """Where a test leaves what a person should look at afterwards (screenshots): test-artifacts/."""
    path = Path(os.environ.get("TRANSFERD_TEST_ARTIFACTS", "test-artifacts"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def required_environment(name: str) -> str:
    """A peer's address from the test command; a missing peer fails the test, never skips it."""
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run the system tests through bash scripts/test.sh")
    return value


@pytest.fixture
def nginx_url() -> str:
    """nginx serving test files: /files/1MiB.bin, /files/16MiB.bin, /slow/ at 256 KiB/s, /slower/ at 64 KiB/s."""
    return required_environment("TRANSFERD_TEST_NGINX")


@pytest.fixture
def nginx_root() -> Path:
    """The folder nginx serves as /files/ and /slow/ (tests may add files to it)."""
    return Path(required_environment("TRANSFERD_TEST_NGINX_ROOT"))


@pytest.fixture
def daemon(tmp_path: Path):
    """A transferd on a free port with its own data folder and a bearer token; stopped after the
    test, which fails if it does not exit cleanly on SIGTERM."""
    running = Daemon(tmp_path / "data", token=secrets.token_hex(16))
    yield running
    status = running.stop()
    assert status == 0, f"transferd exited with {status}; log:\n{running.log_text()[-4000:]}"


@pytest.fixture
def start_daemon(tmp_path: Path):
    """A factory for tests that need their own flags: start_daemon(arguments=[...], token=...)."""
    started: list[Daemon] = []

    def start(name: str = "data", **options) -> Daemon:
        running = Daemon(tmp_path / name, **options)
        started.append(running)
        return running

    yield start
    for running in started:
        running.stop()
