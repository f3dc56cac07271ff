"""GET /metrics read by prometheus_client's own text parser, before and after real transfers from
the nginx peer: every family parses, the figures move, and the label sets stay bounded."""
from __future__ import annotations

import re

from prometheus_client.parser import text_string_to_metric_families

SERIES_LIMIT = 1000
ROUTE = re.compile(r"^(unmatched|/[A-Za-z0-9_./{}-]*)$")


def scrape(daemon) -> dict[tuple[str, frozenset], float]:
    """Every sample of GET /metrics as {(sample name, labels): value}, parsed by prometheus_client."""
    status, headers, body = daemon.request("GET", "/metrics", headers={"Accept": "text/plain"})
    assert status == 200, body
    assert headers["Content-Type"].startswith("text/plain; version=0.0.4"), headers
    samples: dict[tuple[str, frozenset], float] = {}
    for family in text_string_to_metric_families(body.decode()):
        assert family.name.startswith(("transferd_", "process_")), family.name
        assert family.type in ("counter", "gauge", "histogram"), (family.name, family.type)
        assert family.documentation, f"{family.name} has no HELP"
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(samples, name: str, **labels: str) -> float:
    """The sum of the samples named `name` whose labels include `labels` (0 when there are none)."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and wanted <= ls)


def create_download(daemon, url: str, service_type: str = "default") -> int:
    task = daemon.json("POST", "/v1/sessions/shared/tasks",
                       {"kind": "download", "request": {"url": url, "networkServiceType": service_type}})
    return task["id"]


def task_state(daemon, task_id: int) -> dict:
    return daemon.json("GET", f"/v1/tasks/{task_id}")


def test_metrics_parse_and_move_when_tasks_run(daemon, nginx_url):
    status, _, _ = daemon.request("GET", "/metrics", headers={"Authorization": "Bearer wrong"})
    assert status == 401, "/metrics is behind the token like /v1"

    before = scrape(daemon)
    assert value(before, "transferd_received_bytes_total", **{"class": "default"}) == 0
    assert value(before, "transferd_admission_wait_seconds_count") == 0

    # A slow background download is seen running; a full-speed one completes.
    slow = create_download(daemon, nginx_url + "/slow/16MiB.bin", "background")
    daemon.wait_until(lambda: task_state(daemon, slow)["progress"]["bytesReceived"] > 0, timeout=30,
                      what="the slow download to receive bytes")
    fast = create_download(daemon, nginx_url + "/files/16MiB.bin")
    daemon.wait_until(lambda: task_state(daemon, fast)["state"] == "completed", timeout=60,
                      what="the 16 MiB download to complete")
    assert task_state(daemon, fast)["error"] is None

    during = daemon.wait_until(
        lambda: (lambda s: s if value(s, "transferd_received_bytes_total", **{"class": "background"}) > 0 else None)(scrape(daemon)),
        timeout=10, what="background bytes in /metrics")
    assert value(during, "transferd_tasks", state="running", kind="download", **{"class": "background"}) == 1
    assert value(during, "transferd_transfers_running", **{"class": "background"}) == 1
    assert value(during, "transferd_tasks", state="completed", phase="done", kind="download", **{"class": "default"}) == 1
    assert value(during, "transferd_tasks_completed_total", kind="download", result="succeeded", **{"class": "default"}) == 1
    assert value(during, "transferd_received_bytes_total", **{"class": "default"}) >= 16 << 20
    assert value(during, "transferd_admission_wait_seconds_count", **{"class": "default"}) == 1
    assert value(during, "transferd_admission_wait_seconds_count", **{"class": "background"}) == 1
    assert value(during, "transferd_store_commit_duration_seconds_count") > value(before, "transferd_store_commit_duration_seconds_count")
    assert value(during, "transferd_http_request_duration_seconds_count",
                 method="POST", route="/v1/sessions/{sid}/tasks", status="201") == 2
    assert value(during, "transferd_http_request_duration_seconds_count",
                 method="GET", route="/v1/tasks/{tid}", status="200") >= 2

    daemon.json("POST", f"/v1/tasks/{slow}/cancel", {})
    daemon.wait_until(lambda: task_state(daemon, slow)["state"] == "completed", timeout=30, what="the cancel")
    after = scrape(daemon)
    assert value(after, "transferd_tasks", state="running") == 0
    assert value(after, "transferd_tasks_completed_total", kind="download", result="cancelled", **{"class": "background"}) == 1
    assert value(after, "transferd_received_bytes_total", **{"class": "background"}) >= value(during, "transferd_received_bytes_total", **{"class": "background"})

    # Bounded labels: routes are patterns, methods and classes from fixed sets.
    for path in ("/v1/tasks/999999", "/no/such/path/1", "/no/such/path/2"):
        assert daemon.request("GET", path)[0] == 404
    final = scrape(daemon)
    assert len(final) < SERIES_LIMIT, len(final)
    routes = {dict(labels)["route"] for (name, labels) in final if "route" in dict(labels)}
    assert routes and all(ROUTE.match(route) and not any(part.isdigit() for part in route.split("/")) for route in routes), routes
    assert "unmatched" in routes and "/v1/tasks/{tid}" in routes
    classes = {dict(labels)["class"] for (name, labels) in final if "class" in dict(labels)}
    assert classes <= {"interactive", "streaming", "default", "background"}, classes
