"""The executable as an operator meets it: it starts, answers, refuses the unauthenticated, and
stops cleanly on SIGTERM with its state kept."""
from __future__ import annotations

import json
import os
import re
import subprocess

from daemon import executable


def test_starts_answers_and_keeps_a_session_across_a_restart(start_daemon):
    first = start_daemon(token="t0ken-one")
    status, _, body = first.request("GET", "/healthz")
    assert status == 200, body
    created = first.json("POST", "/v1/sessions", {"kind": "default", "description": "kept"})
    assert first.stop() == 0

    second = start_daemon(token="t0ken-one")
    sessions = second.json("GET", "/v1/sessions")
    ids = [session["id"] for session in sessions["items"]]
    assert created["id"] in ids


def test_refuses_a_request_with_a_wrong_token(daemon):
    status, _, body = daemon.request("GET", "/v1/sessions", headers={"Authorization": "Bearer wrong"})
    assert status == 401, body
    assert json.loads(body)["error"]["code"]
    assert daemon.request("GET", "/v1/sessions")[0] == 200


def _config(tmp_path, name: str, settings: dict, mode: int = 0o600):
    path = tmp_path / name
    path.write_text(json.dumps(settings))
    path.chmod(mode)
    return path


def _stats(daemon) -> dict:
    return daemon.json("GET", "/v1/stats")


def test_a_configuration_file_sits_under_the_environment_and_the_flags(start_daemon, tmp_path):
    config = _config(tmp_path, "transferd.json", {"max-transfers": 7, "token": ["ops:c0nfig-secret:admin"], "task-retention": 60})
    from_file = start_daemon("a", arguments=["--config", str(config)])
    from_file.token = "c0nfig-secret"
    assert _stats(from_file)["maxConcurrentTransfers"] == 7
    from_file.token = None
    assert from_file.request("GET", "/v1/sessions")[0] == 401, "the file's token is required"
    assert from_file.stop() == 0

    # The environment wins over the file, a flag over both; TRANSFERD_X_FILE gives X from a file.
    (tmp_path / "max").write_text("9\n")
    overridden = start_daemon("b", token="c0nfig-secret", environment={"TRANSFERD_CONFIG": str(config), "TRANSFERD_MAX_TRANSFERS_FILE": str(tmp_path / "max")})
    assert _stats(overridden)["maxConcurrentTransfers"] == 9
    assert overridden.stop() == 0
    flagged = start_daemon("c", token="c0nfig-secret", arguments=["--config", str(config), "--max-transfers", "11"],
                           environment={"TRANSFERD_MAX_TRANSFERS": "10"})
    assert _stats(flagged)["maxConcurrentTransfers"] == 11


def _refusal(tmp_path, arguments: list[str], environment: dict | None = None) -> str:
    env = dict(os.environ)
    env.update(environment or {})
    result = subprocess.run([str(executable("transferd")), "--data-dir", str(tmp_path / "never"), *arguments],
                            capture_output=True, text=True, timeout=30, env=env)
    assert result.returncode != 0, result.stdout
    return result.stderr


def test_a_bad_configuration_file_stops_the_start_with_its_reason(tmp_path):
    assert 'unknown setting "max-transfer"' in _refusal(tmp_path, ["--config", str(_config(tmp_path, "typo.json", {"max-transfer": 3}))])
    readable = _config(tmp_path, "open.json", {"token": ["a:b-secret"]}, mode=0o644)
    assert "every user may read it" in _refusal(tmp_path, ["--config", str(readable)])
    (tmp_path / "garbage.json").write_text("{max-transfers = 3}")
    assert "not valid JSON" in _refusal(tmp_path, ["--config", str(tmp_path / "garbage.json")])
    assert "must be an integer" in _refusal(tmp_path, ["--config", str(_config(tmp_path, "kind.json", {"max-transfers": "many"}))])
    both = _refusal(tmp_path, [], {"TRANSFERD_LOG_LEVEL": "info", "TRANSFERD_LOG_LEVEL_FILE": str(tmp_path / "typo.json")})
    assert "not both" in both, both


def test_every_flag_is_a_configuration_key(tmp_path):
    help_text = subprocess.run([str(executable("transferd")), "--help"], capture_output=True, text=True, timeout=30).stdout
    flags = sorted(set(re.findall(r"--([a-z][a-z-]+)", help_text)) - {"help", "version", "config"})
    assert "max-transfers" in flags and "log-level" in flags, flags
    for flag in flags:
        # A value no setting takes and a listen address that cannot be: the start stops either
        # way, and only an unknown key says "unknown setting".
        config = _config(tmp_path, f"{flag}.json", {flag: "zz", "listen": "not-an-address"})
        assert "unknown setting" not in _refusal(tmp_path, ["--config", str(config)]), flag
