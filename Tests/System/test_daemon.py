"""The executable as an operator meets it: it starts, answers, refuses the unauthenticated, and
stops cleanly on SIGTERM with its state kept."""
from __future__ import annotations

import json


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
