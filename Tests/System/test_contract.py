"""The API contract: schemathesis sends a few thousand requests generated from openapi.yaml to a
running transferd and checks every answer against the document (no 5xx, declared status codes,
content types, headers and body schemas; valid input accepted, invalid input refused).

Generated tasks point at arbitrary hosts, so the daemon and schemathesis run in a network
namespace of their own with only loopback (`unshare --net`): nothing they are told to fetch
leaves the machine. Run it alone with: bash scripts/test.sh --system -k contract
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from openapi_spec_validator import validate
from openapi_spec_validator.readers import read_from_filename

HERE = Path(__file__).resolve().parent
SPEC = HERE.parent.parent / "openapi.yaml"
# The whole run, schemathesis and daemon included, must end within this (it takes about
# two minutes on two busy cores).
RUN_LIMIT_SECONDS = 900
MINIMUM_TEST_CASES = 2000


def test_openapi_document_is_valid_openapi_3_1():
    document, _ = read_from_filename(str(SPEC))
    assert document["openapi"].startswith("3.1")
    validate(document)


def test_daemon_conforms_to_openapi_document(artifacts: Path, nginx_url: str):
    for tool in ("unshare", "ip"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing: the contract test runs in a network namespace of its own (util-linux, iproute2)")
    report_dir = artifacts / "contract"
    shutil.rmtree(report_dir, ignore_errors=True)
    command = ["unshare", "--net", "--", sys.executable, str(HERE / "contract_run.py"),
               "--report-dir", str(report_dir), "--outside-url", nginx_url]
    started = time.monotonic()
    run = subprocess.run(command, capture_output=True, text=True, timeout=RUN_LIMIT_SECONDS, cwd=HERE)
    elapsed = time.monotonic() - started
    output = run.stdout + run.stderr
    (artifacts / "contract.txt").write_text(output)
    tail = output[-12000:]
    assert "contract run: isolated" in output, tail
    assert run.returncode == 0, f"contract run failed ({run.returncode}) after {elapsed:.0f}s; report in {report_dir}:\n{tail}"

    events = [json.loads(line) for ndjson in report_dir.glob("*.ndjson") for line in ndjson.read_text().splitlines() if line]
    finished = [event for event in events if "EngineFinished" in event]
    assert finished, f"no EngineFinished event in the ndjson report:\n{tail}"
    generated = re.search(r"(\d+) generated", output)
    assert generated, tail
    count = int(generated.group(1))
    print(f"contract: {count} generated test cases in {elapsed:.0f}s")
    assert count >= MINIMUM_TEST_CASES, f"only {count} test cases were generated:\n{tail}"
