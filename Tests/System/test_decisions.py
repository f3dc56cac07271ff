"""Decisions a client makes while its task waits (issue 21): redirect, challenge and response
callbacks answered live through POST /v1/tasks/{tid}/decisions/{decisionId}, against httpbin
(TRANSFERD_TEST_HTTPBIN, started by the test command) and a real daemon."""
from __future__ import annotations

import base64
import hashlib
import json
import sqlite3
import time

import pytest

from conftest import required_environment
from daemon import APIError


@pytest.fixture
def httpbin() -> str:
    return required_environment("TRANSFERD_TEST_HTTPBIN")


def session(daemon, **configuration) -> str:
    return daemon.json("POST", "/v1/sessions", {"configuration": configuration})["id"]


def create(daemon, sid: str, body: dict) -> dict:
    return daemon.json("POST", f"/v1/sessions/{sid}/tasks", body)


def pending(daemon, tid: int, kind: str, after: str | None = None) -> dict:
    """The decision the task waits for, once it waits for one of `kind` (other than `after`)."""
    def waiting():
        task = daemon.json("GET", f"/v1/tasks/{tid}")
        decision = task["decision"]
        return decision if decision and decision["kind"] == kind and decision["id"] != after else None
    return daemon.wait_until(waiting, timeout=20, what=f"a {kind} decision of task {tid}")


def answer(daemon, tid: int, decision_id: str, body: dict, expect: int = 200) -> dict:
    return daemon.json("POST", f"/v1/tasks/{tid}/decisions/{decision_id}", body, expect=expect)


def completed(daemon, tid: int) -> dict:
    return daemon.wait_until(lambda: (t := daemon.json("GET", f"/v1/tasks/{tid}"))["state"] == "completed" and t,
                             timeout=30, what=f"task {tid} to complete")


def events(daemon, sid: str, tid: int) -> list[dict]:
    return daemon.json("GET", f"/v1/sessions/{sid}/events?after=0&task={tid}")["events"]


def body_of(daemon, tid: int) -> bytes:
    status, _, payload = daemon.request("GET", f"/v1/tasks/{tid}/body")
    assert status == 200, payload
    return payload


def test_refused_redirect_completes_with_the_3xx_and_wrong_answers_change_nothing(daemon, httpbin):
    sid = session(daemon)
    task = create(daemon, sid, {"kind": "data", "decisions": ["redirect"],
                                "request": {"url": f"{httpbin}/redirect-to?url=/get&status_code=302"}})
    assert task["decisions"] == ["redirect"]
    decision = pending(daemon, task["id"], "redirect")
    event = next(e for e in events(daemon, sid, task["id"]) if e.get("decisionId") == decision["id"])
    assert event["type"] == "willPerformHTTPRedirection"
    assert event["statusCode"] == 302 and event["response"]["statusCode"] == 302
    assert event["proposedRequest"] == {"url": f"{httpbin}/get", "method": "GET"}

    # An answer of another kind, an unknown id and a malformed body: refused, still pending.
    with pytest.raises(APIError) as refused:
        answer(daemon, task["id"], decision["id"], {"answer": "allow"})
    assert refused.value.status == 422 and b"follow, refuse, rewrite" in refused.value.body
    with pytest.raises(APIError) as unknown:
        answer(daemon, task["id"], "0123456789abcdef", {"answer": "follow"})
    assert unknown.value.status == 409 and b"decision_not_pending" in unknown.value.body
    with pytest.raises(APIError) as malformed:
        answer(daemon, task["id"], decision["id"], {"answer": "rewrite"})
    assert malformed.value.status == 422
    assert daemon.json("GET", f"/v1/tasks/{task['id']}")["decision"]["id"] == decision["id"]

    answer(daemon, task["id"], decision["id"], {"answer": "refuse"})
    done = completed(daemon, task["id"])
    assert done["error"] is None and done["response"]["statusCode"] == 302
    assert done["response"]["headers"]["Location"] == "/get"
    assert done["decision"] is None
    # Late: the decision is gone with its task's transfer.
    with pytest.raises(APIError) as late:
        answer(daemon, task["id"], decision["id"], {"answer": "follow"})
    assert late.value.status == 409
    resolved = [e for e in events(daemon, sid, task["id"]) if e["type"] == "didResolveDecision"]
    assert [(e["answer"], e["timedOut"]) for e in resolved] == [("refuse", False)]


def test_rewritten_redirect_sends_the_clients_request(daemon, httpbin):
    sid = session(daemon)
    task = create(daemon, sid, {"kind": "data", "decisions": ["redirect"], "request": {
        "url": f"{httpbin}/redirect-to?url=/post&status_code=307", "method": "POST",
        "headers": {"Content-Type": "text/plain", "Authorization": "Bearer secret"}, "body": {"text": "hello"}}})
    decision = pending(daemon, task["id"], "redirect")
    ev = next(e for e in events(daemon, sid, task["id"]) if e.get("decisionId") == decision["id"])
    assert ev["proposedRequest"]["method"] == "POST"  # 307 keeps the method and body
    answer(daemon, task["id"], decision["id"], {"answer": "rewrite", "request": {
        "url": f"{httpbin}/anything/rewritten", "method": "PUT",
        "headers": {"Content-Type": "text/plain", "X-Rewritten": "yes"}}})
    done = completed(daemon, task["id"])
    assert done["error"] is None and done["response"]["statusCode"] == 200
    echoed = json.loads(body_of(daemon, task["id"]))
    assert echoed["method"] == "PUT" and echoed["data"] == "hello"
    assert echoed["url"].endswith("/anything/rewritten")
    assert echoed["headers"]["X-Rewritten"] == "yes"
    assert "Authorization" not in echoed["headers"]  # the rewrite's headers replace the task's
    assert done["currentRequest"]["url"] == f"{httpbin}/anything/rewritten"
    # The decision event was the redirect's only event.
    assert sum(e["type"] == "willPerformHTTPRedirection" for e in events(daemon, sid, task["id"])) == 1


def test_basic_challenge_answered_live_and_kept_for_the_session(daemon, httpbin):
    sid = session(daemon)
    task = create(daemon, sid, {"kind": "data", "decisions": ["challenge"], "request": {"url": f"{httpbin}/basic-auth/ann/open-sesame"}})
    decision = pending(daemon, task["id"], "challenge")
    assert decision["protectionSpace"]["authenticationMethod"] == "HTTPBasic"
    ev = next(e for e in events(daemon, sid, task["id"]) if e.get("decisionId") == decision["id"])
    assert ev["type"] == "didReceiveChallenge" and ev["previousFailureCount"] == 0
    assert ev["proposedCredential"] is None and ev["failureResponse"]["statusCode"] == 401
    answer(daemon, task["id"], decision["id"], {"answer": "useCredential", "credential": {
        "user": "ann", "password": "open-sesame", "persistence": "forSession"}})
    done = completed(daemon, task["id"])
    assert done["response"]["statusCode"] == 200 and json.loads(body_of(daemon, task["id"]))["authenticated"] is True
    stored = daemon.json("GET", f"/v1/sessions/{sid}/credentials")
    assert [(c["user"], c["persistence"]) for c in stored["items"]] == [("ann", "forSession")]
    assert '"password"' not in json.dumps(events(daemon, sid, task["id"]))  # (httpbin's URL holds it: not the events)

    # The next challenge proposes the kept credential, and the default handling sends it.
    again = create(daemon, sid, {"kind": "data", "decisions": ["challenge"], "request": {"url": f"{httpbin}/basic-auth/ann/open-sesame"}})
    second = pending(daemon, again["id"], "challenge")
    ev = next(e for e in events(daemon, sid, again["id"]) if e.get("decisionId") == second["id"])
    assert ev["proposedCredential"] == {"user": "ann", "persistence": "forSession"}
    answer(daemon, again["id"], second["id"], {"answer": "performDefaultHandling"})
    assert completed(daemon, again["id"])["response"]["statusCode"] == 200


def test_digest_wrong_password_twice_then_cancelled(daemon, httpbin):
    sid = session(daemon)
    task = create(daemon, sid, {"kind": "data", "decisions": ["challenge"], "request": {"url": f"{httpbin}/digest-auth/auth/bob/right"}})
    seen = None
    for failures in (0, 1, 2):
        decision = pending(daemon, task["id"], "challenge", after=seen)
        seen = decision["id"]
        assert decision["protectionSpace"]["authenticationMethod"] == "HTTPDigest"
        ev = next(e for e in events(daemon, sid, task["id"]) if e.get("decisionId") == seen)
        assert ev["previousFailureCount"] == failures
        if failures < 2:
            answer(daemon, task["id"], seen, {"answer": "useCredential", "credential": {"user": "bob", "password": "wrong"}})
    answer(daemon, task["id"], seen, {"answer": "cancelAuthenticationChallenge"})
    done = completed(daemon, task["id"])
    assert done["error"]["code"] == -999
    assert daemon.json("GET", f"/v1/sessions/{sid}/credentials")["items"] == []  # persistence none


def test_digest_answered_live_and_a_rejected_space_leaves_the_401(daemon, httpbin):
    sid = session(daemon)
    task = create(daemon, sid, {"kind": "data", "decisions": ["challenge"], "request": {"url": f"{httpbin}/digest-auth/auth/bob/right"}})
    decision = pending(daemon, task["id"], "challenge")
    answer(daemon, task["id"], decision["id"], {"answer": "useCredential", "credential": {"user": "bob", "password": "right"}})
    done = completed(daemon, task["id"])
    assert done["response"]["statusCode"] == 200 and json.loads(body_of(daemon, task["id"]))["user"] == "bob"

    rejected = create(daemon, sid, {"kind": "data", "decisions": ["challenge"], "request": {"url": f"{httpbin}/basic-auth/x/y"}})
    decision = pending(daemon, rejected["id"], "challenge")
    answer(daemon, rejected["id"], decision["id"], {"answer": "rejectProtectionSpace"})
    done = completed(daemon, rejected["id"])
    assert done["error"] is None and done["response"]["statusCode"] == 401


def test_response_decisions_become_download_cancel_and_allow(daemon, httpbin):
    sid = session(daemon)
    made = {name: create(daemon, sid, {"kind": "data", "decisions": ["response"],
                                       "request": {"url": f"{httpbin}/bytes/40000?seed={seed}"}})
            for seed, name in enumerate(["becomeDownload", "cancel", "allow"])}
    for name, task in made.items():
        decision = pending(daemon, task["id"], "response")
        ev = next(e for e in events(daemon, sid, task["id"]) if e.get("decisionId") == decision["id"])
        assert ev["type"] == "didReceiveResponse" and ev["response"]["statusCode"] == 200
        # Nothing of the body is taken before the answer.
        assert daemon.json("GET", f"/v1/tasks/{task['id']}")["progress"]["bytesReceived"] == 0
        answer(daemon, task["id"], decision["id"], {"answer": name})
    download = completed(daemon, made["becomeDownload"]["id"])
    assert download["kind"] == "download" and download["error"] is None
    status, _, file = daemon.request("GET", f"/v1/tasks/{download['id']}/file")
    assert status == 200 and len(file) == 40000
    types = [e["type"] for e in events(daemon, sid, download["id"])]
    assert types.index("didResolveDecision") < types.index("didBecomeDownloadTask")
    assert completed(daemon, made["cancel"]["id"])["error"]["code"] == -999
    allowed = completed(daemon, made["allow"]["id"])
    assert allowed["error"] is None and len(body_of(daemon, allowed["id"])) == 40000


def test_unanswered_decision_takes_the_default_and_says_so(daemon, httpbin):
    sid = session(daemon, decisionTimeoutInterval=1, decisions=["redirect", "response"])
    # The session's default applies to its tasks, each keeping the kinds that apply to it.
    download = create(daemon, sid, {"kind": "download", "request": {"url": f"{httpbin}/redirect-to?url=/bytes/100"}})
    assert download["decisions"] == ["redirect"]
    done = completed(daemon, download["id"])
    assert done["error"] is None and done["response"]["statusCode"] == 200
    resolved = [e for e in events(daemon, sid, download["id"]) if e["type"] == "didResolveDecision"]
    assert [(e["decision"], e["answer"], e["timedOut"]) for e in resolved] == [("redirect", "follow", True)]
    own = create(daemon, sid, {"kind": "data", "decisions": [], "request": {"url": f"{httpbin}/redirect-to?url=/get"}})
    assert own["decisions"] == []
    assert completed(daemon, own["id"])["response"]["statusCode"] == 200


def test_decision_lists_are_checked(daemon, httpbin):
    sid = session(daemon)
    for body, field in [
        ({"kind": "download", "decisions": ["response"], "request": {"url": f"{httpbin}/get"}}, "decisions"),
        ({"kind": "data", "decisions": ["redirect", "redirect"], "request": {"url": f"{httpbin}/get"}}, "decisions"),
        ({"kind": "data", "decisions": ["sometimes"], "request": {"url": f"{httpbin}/get"}}, "decisions"),
        ({"kind": "data", "decisions": ["response"], "responseDisposition": {"default": "allow"}, "request": {"url": f"{httpbin}/get"}}, "decisions"),
    ]:
        with pytest.raises(APIError) as refused:
            create(daemon, sid, body)
        assert refused.value.status in (400, 422) and field.encode() in refused.value.body
    with pytest.raises(APIError) as bad:
        daemon.json("POST", "/v1/sessions", {"configuration": {"decisionTimeoutInterval": 0}})
    assert bad.value.status in (400, 422)
    assert daemon.json("GET", "/v1/sessions/shared/tasks")["items"] == []


def spki_pin(pem: str) -> str:
    """What a client pins: sha256// and the base64 SHA-256 of the certificate's SubjectPublicKeyInfo."""
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    certificate = x509.load_pem_x509_certificate(pem.encode())
    spki = certificate.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return "sha256//" + base64.b64encode(hashlib.sha256(spki).digest()).decode()


def test_server_trust_accepted_by_a_pinned_answer_and_refused_by_default(daemon):
    from cryptography import x509
    url = required_environment("TRANSFERD_TEST_TLS_VALID") + "/healthz"  # a CA the system does not trust
    with open(required_environment("TRANSFERD_TEST_TLS_LEAF")) as file:
        leaf = x509.load_pem_x509_certificate(file.read().encode())
    sid = session(daemon)
    accepted = create(daemon, sid, {"kind": "data", "decisions": ["challenge"], "request": {"url": url}})
    decision = pending(daemon, accepted["id"], "challenge")
    assert decision["protectionSpace"]["authenticationMethod"] == "ServerTrust"
    assert decision["protectionSpace"]["protocol"] == "https"
    event = next(e for e in events(daemon, sid, accepted["id"]) if e.get("decisionId") == decision["id"])
    chain = event["serverTrust"]["certificates"]
    assert chain and x509.load_pem_x509_certificate(chain[0].encode()) == leaf
    assert "certificate" in event["serverTrust"]["error"].lower()
    # A login is no answer to the server's challenge; nothing changes.
    with pytest.raises(APIError) as refused:
        answer(daemon, accepted["id"], decision["id"], {"answer": "useCredential", "credential": {"user": "u", "password": "p"}})
    assert refused.value.status == 422
    answer(daemon, accepted["id"], decision["id"], {"answer": "useCredential", "credential": {"pinnedPublicKey": spki_pin(chain[0])}})
    done = completed(daemon, accepted["id"])
    assert done["error"] is None and done["response"]["statusCode"] == 200 and body_of(daemon, accepted["id"]) == b"ok\n"

    for answer_body in ({"answer": "performDefaultHandling"},
                        {"answer": "useCredential", "credential": {"pinnedPublicKey": "sha256//" + base64.b64encode(bytes(32)).decode()}}):
        refused_task = create(daemon, sid, {"kind": "data", "decisions": ["challenge"], "request": {"url": url}})
        decision = pending(daemon, refused_task["id"], "challenge")
        answer(daemon, refused_task["id"], decision["id"], answer_body)
        failed = completed(daemon, refused_task["id"])
        assert failed["error"]["code"] == -1202, failed["error"]
    # A task that does not decide challenges fails at once, as before.
    plain = create(daemon, sid, {"kind": "data", "request": {"url": url}})
    assert completed(daemon, plain["id"])["error"]["code"] == -1202


def test_cache_decisions_store_or_not_as_answered(daemon, httpbin):
    sid = session(daemon, decisionTimeoutInterval=1)
    url = f"{httpbin}/cache/600"  # Cache-Control: public, max-age=600

    def decided(answer_name: str | None, path: str) -> dict:
        task = create(daemon, sid, {"kind": "data", "decisions": ["cache"], "request": {"url": url + path}})
        decision = pending(daemon, task["id"], "cache")
        ev = next(e for e in events(daemon, sid, task["id"]) if e.get("decisionId") == decision["id"])
        assert ev["type"] == "willCacheResponse" and ev["storagePolicy"] == "allowed" and ev["response"]["statusCode"] == 200
        # The task waits for the answer before it completes.
        assert daemon.json("GET", f"/v1/tasks/{task['id']}")["state"] == "running"
        if answer_name:
            answer(daemon, task["id"], decision["id"], {"answer": answer_name})
        done = completed(daemon, task["id"])
        assert done["error"] is None and done["cacheStatus"] == "network"
        types = [e["type"] for e in events(daemon, sid, task["id"])]
        assert types.count("willCacheResponse") == 1 and types.index("didResolveDecision") < types.index("didCompleteWithError")
        return done

    def next_status(path: str) -> str:
        task = create(daemon, sid, {"kind": "data", "request": {"url": url + path}})
        return completed(daemon, task["id"])["cacheStatus"]

    decided("doNotStore", "?a")
    assert next_status("?a") == "network"
    decided("store", "?b")
    assert next_status("?b") == "cache"
    decided("storeInMemoryOnly", "?c")
    assert next_status("?c") == "cache"
    decided(None, "?d")  # unanswered: stored, as URLSession's default
    assert next_status("?d") == "cache"
    resolved = [e for e in daemon.json("GET", f"/v1/sessions/{sid}/events?after=0")["events"] if e["type"] == "didResolveDecision"]
    assert [(e["answer"], e["timedOut"]) for e in resolved] == [
        ("doNotStore", False), ("store", False), ("storeInMemoryOnly", False), ("store", True)]


def test_a_pending_decision_across_a_kill(start_daemon, httpbin):
    """kill -9 while decisions wait: a background download asks again (a new decisionId) and
    goes on once answered; a default session's data task ends with an error naming its decision."""
    first = start_daemon(token="t0ken-decide")
    background = first.json("POST", "/v1/sessions", {"kind": "background", "identifier": "decider",
                                                     "configuration": {"decisions": ["redirect"]}})["id"]
    download = create(first, background, {"kind": "download", "request": {"url": f"{httpbin}/redirect-to?url=/bytes/2048"}})
    sid = session(first)
    data = create(first, sid, {"kind": "data", "decisions": ["redirect"], "request": {"url": f"{httpbin}/redirect-to?url=/get"}})
    before = pending(first, download["id"], "redirect")
    asked = pending(first, data["id"], "redirect")
    # The decision's row is queued for the store's next group commit, not waited for: the kill
    # comes once the data task's stored record names it (read from the database file itself).
    def stored(task_id, decision_id):
        with sqlite3.connect(f"file:{first.data_dir / 'transferd.sqlite3'}?mode=ro", uri=True, timeout=5) as db:
            row = db.execute("SELECT record FROM tasks WHERE id = ?", (task_id,)).fetchone()
        return row is not None and decision_id in row[0]
    first.wait_until(lambda: stored(data["id"], asked["id"]) and stored(download["id"], before["id"]),
                     timeout=30, what="the pending decisions' rows committed")
    first.process.kill()
    first.process.wait(10)

    second = start_daemon(token="t0ken-decide")
    again = pending(second, download["id"], "redirect")
    assert again["id"] != before["id"]
    with pytest.raises(APIError) as stale:
        answer(second, download["id"], before["id"], {"answer": "follow"})
    assert stale.value.status == 409
    answer(second, download["id"], again["id"], {"answer": "follow"})
    done = completed(second, download["id"])
    assert done["error"] is None and done["response"]["statusCode"] == 200
    ended = completed(second, data["id"])
    assert ended["error"]["code"] == -1005 and asked["id"] in ended["error"]["message"]


def test_become_stream_reads_the_body_as_a_stream(daemon, httpbin):
    sid = session(daemon)
    task = create(daemon, sid, {"kind": "data", "decisions": ["response"], "request": {"url": f"{httpbin}/bytes/100000?seed=7"}})
    decision = pending(daemon, task["id"], "response")
    answer(daemon, task["id"], decision["id"], {"answer": "becomeStream"})
    status, _, payload = daemon.request("POST", f"/v1/tasks/{task['id']}/write", b"hello", headers={"Content-Type": "application/octet-stream"})
    assert status == 409 and b"write_closed" in payload
    read, ended = b"", False
    while not ended:
        status, headers, payload = daemon.request("GET", f"/v1/tasks/{task['id']}/read?min=1&max=65536&wait=10")
        assert status == 200, payload
        read += payload
        ended = dict((k.lower(), v) for k, v in headers.items()).get("x-stream-end") == "true"
    done = completed(daemon, task["id"])
    assert done["error"] is None and read == body_of(daemon, task["id"]) and len(read) == 100000
    types = [e["type"] for e in events(daemon, sid, task["id"])]
    assert types.index("didResolveDecision") < types.index("didBecomeStreamTask")
