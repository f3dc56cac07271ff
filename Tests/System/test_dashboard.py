"""The dashboard in a real browser: Debian's chromium, headless, driven by selenium through Debian's
chromedriver, against a real daemon and the nginx peer. As a person uses a download manager: the
page asks for the token; several URLs are added at once into a named session; failures read as
failures (red, the reason in words, the URLError code on hover, a bar that stands still);
status tabs count, search narrows, rows pause, resume, open their details (request, response,
events, metrics), change priority, cancel keeping resume data and resume from it; failed tasks
are retried in bulk; a finished file opens (fetched with the token); a task is deleted with its
file; finished tasks are cleared; the daemon-wide limits are set. Screenshots at desktop and
phone width go to test-artifacts/. A tenant token sees only its own tasks and cannot set the
limits; 10,000 tasks are shown a page at a time."""
from __future__ import annotations

import hashlib
import shutil
import time
import urllib.error
import urllib.request
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import Select, WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WAIT = 20  # seconds: the bound of every wait on the page


@pytest.fixture
def downloads(tmp_path: Path) -> Path:
    folder = tmp_path / "browser-downloads"
    folder.mkdir()
    return folder


@pytest.fixture
def browser(tmp_path: Path, downloads: Path):
    """A headless chromium with a profile of its own (files it saves go to `downloads`), quit after the test."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not shutil.which(path):
            pytest.fail(f"{path} is missing: scripts/test.sh installs chromium and chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--no-first-run", "--disable-extensions", "--window-size=1400,1000",
                     f"--user-data-dir={tmp_path / 'chromium-profile'}"):
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                              "download.prompt_for_download": False})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # The driver's path given: selenium-manager never looks for (or downloads) one.
    service = Service(executable_path=CHROMEDRIVER, log_output=str(tmp_path / "chromedriver.log"))
    driver = webdriver.Chrome(service=service, options=options)
    driver.set_page_load_timeout(30)
    driver.set_script_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def wait_for(driver, condition, what: str, timeout: float = WAIT):
    try:
        # The table is redrawn live: an element found a moment ago may be gone (a row that left
        # the page); the condition is simply asked again.
        return WebDriverWait(driver, timeout, poll_frequency=0.1, ignored_exceptions=[StaleElementReferenceException]).until(condition)
    except TimeoutException:
        raise AssertionError(f"timed out after {timeout}s waiting for {what}") from None


def row(driver, task_id: int):
    return driver.find_element(By.CSS_SELECTOR, f'tr.task[data-task-id="{task_id}"]')


def rows(driver) -> list[int]:
    """The ids of the rows shown, read in one script (a row cannot go between finding and reading it)."""
    return driver.execute_script("return [...document.querySelectorAll('tr.task')].map(row => Number(row.dataset.taskId))")


def shown_as(driver, task_id: int) -> str | None:
    return driver.execute_script(
        "const row = document.querySelector(`tr.task[data-task-id=\"${arguments[0]}\"]`); return row ? row.dataset.display : null", task_id)


def bar_value(driver, task_id: int) -> float:
    value = row(driver, task_id).find_element(By.TAG_NAME, "progress").get_attribute("value")
    return float(value or 0)


def press(driver, task_id: int, action: str):
    row(driver, task_id).find_element(By.CSS_SELECTOR, f'[data-action="{action}"]:not(.name)').click()


def accept_confirmation(driver) -> str:
    wait_for(driver, expected_conditions.alert_is_present(), "the confirmation")
    alert = driver.switch_to.alert
    text = alert.text
    alert.accept()
    return text


def tab(driver, key: str):
    return driver.find_element(By.CSS_SELECTOR, f'#tabs button[data-tab="{key}"]')


def tab_count(driver, key: str) -> int:
    return int(tab(driver, key).find_element(By.CSS_SELECTOR, ".count").text)


def enter_token(driver, token: str):
    token_field = wait_for(driver, expected_conditions.visibility_of_element_located((By.ID, "token")), "the token field")
    assert driver.find_element(By.CSS_SELECTOR, 'label[for="token"]').text.strip() == "Bearer token"
    token_field.send_keys(token, Keys.ENTER)
    wait_for(driver, expected_conditions.invisibility_of_element_located((By.ID, "token-section")), "the token form to go")
    wait_for(driver, lambda d: d.find_element(By.ID, "connection").text.startswith("Live"), "the change feed to answer")


def add(driver, urls: list[str], session: str | None = None, session_name: str = "", folder: str = "", priority: str = "0.5") -> list[int]:
    """Fills the add form with `urls` and sends it; returns the ids of the rows that appear."""
    before = set(rows(driver))
    field = driver.find_element(By.ID, "add-urls")
    field.clear()
    field.send_keys("\n".join(urls))
    if session is not None:
        Select(driver.find_element(By.ID, "add-session")).select_by_value(session)
    if session_name:
        name = wait_for(driver, expected_conditions.visibility_of_element_located((By.ID, "add-session-name")), "the session name field")
        name.clear()
        name.send_keys(session_name)
    if folder:
        more = driver.find_element(By.CSS_SELECTOR, "details.more")
        if not more.get_attribute("open"):
            more.find_element(By.TAG_NAME, "summary").click()
        destination = driver.find_element(By.ID, "add-folder")
        destination.clear()
        destination.send_keys(folder)
    priority_field = driver.find_element(By.ID, "add-priority")
    priority_field.clear()
    priority_field.send_keys(priority)
    driver.find_element(By.ID, "add-button").click()
    # New tasks have the highest ids; rows of a redraw that was still coming (a tab just chosen)
    # may show up too, so the newest ones are taken.
    added = wait_for(driver, lambda d: (lambda new: sorted(new)[-len(urls):] if len(new) >= len(urls) else None)(set(rows(d)) - before),
                     f"{len(urls)} new rows")
    if folder:
        driver.find_element(By.ID, "add-folder").clear()
    return sorted(added)


def api_task(daemon, task_id: int) -> dict:
    return daemon.json("GET", f"/v1/tasks/{task_id}")


def api_status(daemon, task_id: int) -> int:
    return daemon.request("GET", f"/v1/tasks/{task_id}")[0]


def by_url(daemon, url: str) -> list[dict]:
    return [task for task in daemon.json("GET", "/v1/tasks?after=0&limit=1000")["tasks"] if task["originalRequest"]["url"] == url]


def test_dashboard_is_a_download_manager(daemon, browser, nginx_url, nginx_root, downloads, artifacts):
    driver = browser
    driver.get(daemon.url + "/")
    assert driver.title == "transferd dashboard"
    enter_token(driver, daemon.token)
    assert daemon.token not in driver.current_url

    # Three URLs at once, into a new session with a name: a slow one, a 404, an unreachable port.
    slow = nginx_url + "/slow/16MiB.bin"
    missing = nginx_url + "/files/no-such-file.bin"
    unreachable = "http://127.0.0.1:9/nothing-listens-here.bin"
    Select(driver.find_element(By.ID, "add-session")).select_by_value("new")
    added = add(driver, [slow, missing, unreachable], session_name="Nightly mirror")
    [running] = [task["id"] for task in by_url(daemon, slow)]
    [not_found] = [task["id"] for task in by_url(daemon, missing)]
    [refused] = [task["id"] for task in by_url(daemon, unreachable)]
    assert sorted([running, not_found, refused]) == added
    session_id = api_task(daemon, running)["sessionId"]
    assert session_id != "shared"
    assert daemon.json("GET", f"/v1/sessions/{session_id}")["description"] == "Nightly mirror"
    wait_for(driver, lambda d: row(d, running).find_element(By.CSS_SELECTOR, ".session").text == "Nightly mirror",
             "the session's name in the row")

    # Failures read as failures: the state, the reason in words, the code on hover, a still bar.
    for task_id, words in ((not_found, "404 Not Found"), (refused, "Could not connect to the server")):
        wait_for(driver, lambda d, t=task_id: shown_as(d, t) == "failed", f"task {task_id} shown as failed")
        cells = row(driver, task_id)
        assert cells.find_element(By.CSS_SELECTOR, ".badge").text == "failed"
        assert words in cells.find_element(By.CSS_SELECTOR, ".reason").text
        code = api_task(daemon, task_id)["error"]["code"]
        assert f"({code})" in cells.find_element(By.CSS_SELECTOR, ".reason").get_attribute("title")
        assert not driver.execute_script("return arguments[0].matches(':indeterminate')", cells.find_element(By.TAG_NAME, "progress")), \
            "a failed task's bar is indeterminate (animated), not still"
        offered = [element.get_attribute("data-action") for element in cells.find_elements(By.CSS_SELECTOR, ".actions [data-action]")]
        assert offered == ["retry", "delete", "details"], offered
    assert driver.execute_script(
        "return getComputedStyle(document.querySelector('tr[data-display=failed] .badge')).color") != \
        driver.execute_script("return getComputedStyle(document.querySelector('tr[data-display=failed] .name')).color")

    # The slow download moves; the overview's speed and graph follow it.
    first = wait_for(driver, lambda d: bar_value(d, running) > 0 and bar_value(d, running), "the bar to start")
    wait_for(driver, lambda d: bar_value(d, running) > first + 0.005, "the bar to move")
    assert "/s" in row(driver, running).find_element(By.CSS_SELECTOR, ".speed").text
    assert "16 MiB" in row(driver, running).find_element(By.CSS_SELECTOR, ".bytes").text
    wait_for(driver, lambda d: d.find_element(By.ID, "down-rate").text.endswith("/s") and
             not d.find_element(By.ID, "down-rate").text.startswith("0 "), "the overview's download speed")
    wait_for(driver, lambda d: len(d.find_element(By.ID, "graph-down").get_attribute("points").split()) >= 3, "the graph")
    assert "whole daemon" in driver.find_element(By.ID, "overview-scope").text

    # Tabs count and filter; the search narrows.
    wait_for(driver, lambda d: tab_count(d, "failed") == 2 and tab_count(d, "active") == 1 and tab_count(d, "all") == 3, "the tab counts")
    tab(driver, "failed").click()
    wait_for(driver, lambda d: sorted(rows(d)) == sorted([not_found, refused]), "only the failed tasks")
    assert tab(driver, "failed").get_attribute("aria-pressed") == "true"
    tab(driver, "all").click()
    search = driver.find_element(By.ID, "search")
    search.send_keys("16MiB")
    wait_for(driver, lambda d: rows(d) == [running], "the search to narrow to one task")
    search.send_keys(Keys.CONTROL, "a")
    search.send_keys(Keys.BACKSPACE)
    wait_for(driver, lambda d: len(rows(d)) == 3, "every task again")
    driver.execute_script("document.getElementById('tasks-heading').scrollIntoView()")
    driver.save_screenshot(str(artifacts / "dashboard.png"))

    # Pause and resume from the row.
    press(driver, running, "suspend")
    daemon.wait_until(lambda: api_task(daemon, running)["state"] == "suspended", timeout=WAIT, what="the task suspended")
    wait_for(driver, lambda d: shown_as(d, running) == "paused", "the row to say paused")
    assert tab_count(driver, "paused") == 1
    paused_at = api_task(daemon, running)["progress"]["bytesReceived"]
    press(driver, running, "resume")
    daemon.wait_until(lambda: api_task(daemon, running)["progress"]["bytesReceived"] > paused_at, timeout=WAIT,
                      what="bytes after the resume")
    wait_for(driver, lambda d: shown_as(d, running) == "active", "the row to say downloading")
    assert row(driver, running).find_element(By.CSS_SELECTOR, ".badge").text == "downloading"

    # The detail panel: request, response, the task's own events, metrics; priority set there.
    row(driver, running).find_element(By.CSS_SELECTOR, "button.name").click()
    dialog = wait_for(driver, expected_conditions.visibility_of_element_located((By.ID, "detail")), "the detail panel")
    assert driver.find_element(By.ID, "detail-title").text == "16MiB.bin"
    assert slow in driver.find_element(By.ID, "detail-request").text
    wait_for(driver, lambda d: d.find_element(By.ID, "detail-response").text.startswith("HTTP 200"), "the response")
    wait_for(driver, lambda d: "didReceiveResponse" in d.find_element(By.ID, "detail-events").text, "the task's events")
    wait_for(driver, lambda d: "when the task completes" in d.find_element(By.ID, "detail-metrics").text, "the metrics' note")
    priority = driver.find_element(By.ID, "detail-priority")
    priority.send_keys(Keys.CONTROL, "a")
    priority.send_keys("0.9", Keys.ENTER)
    daemon.wait_until(lambda: api_task(daemon, running)["priority"] == 0.9, timeout=WAIT, what="priority 0.9")
    driver.save_screenshot(str(artifacts / "dashboard-detail.png"))

    # Cancel keeping resume data (from the panel), then resume from it (from the row).
    dialog.find_element(By.CSS_SELECTOR, '#detail-actions [data-action="cancel-resume-data"]').click()
    daemon.wait_until(lambda: api_task(daemon, running)["state"] == "completed", timeout=WAIT, what="the task cancelled")
    resume_data = api_task(daemon, running)["error"]["resumeData"]
    assert resume_data
    link = wait_for(driver, expected_conditions.visibility_of_element_located((By.ID, "detail-resume-data")), "the resume data link")
    assert link.get_attribute("data-value") == resume_data and link.get_attribute("download") == f"task-{running}.resumedata"
    driver.find_element(By.ID, "detail-close").click()
    wait_for(driver, lambda d: shown_as(d, running) == "cancelled", "the row to say cancelled")
    assert row(driver, running).find_element(By.CSS_SELECTOR, ".reason").text == "Resume data kept"
    kept = api_task(daemon, running)["progress"]["bytesReceived"]
    press(driver, running, "resume-data")
    resumed = daemon.wait_until(lambda: [t["id"] for t in by_url(daemon, slow) if t["id"] != running], timeout=WAIT,
                                what="a task made from the resume data")[0]
    daemon.wait_until(lambda: api_task(daemon, resumed)["progress"]["bytesReceived"] > kept, timeout=WAIT,
                      what="the resumed task past the kept bytes")
    wait_for(driver, lambda d: shown_as(d, resumed) == "active", "the resumed task's row")
    press(driver, resumed, "cancel")
    daemon.wait_until(lambda: api_task(daemon, resumed)["state"] == "completed", timeout=WAIT, what="the resumed task cancelled")

    # Bulk retry of the failed ones: new tasks with the same requests, the old ones gone.
    tab(driver, "failed").click()
    wait_for(driver, lambda d: sorted(rows(d)) == sorted([not_found, refused]), "the failed tasks")
    driver.find_element(By.ID, "select-page").click()
    assert driver.find_element(By.ID, "selected-count").text == "2 selected"
    driver.find_element(By.CSS_SELECTOR, '#bulk [data-bulk="retry"]').click()
    for task_id in (not_found, refused):
        daemon.wait_until(lambda t=task_id: api_status(daemon, t) == 404, timeout=WAIT, what=f"the old task {task_id} deleted")
    for url in (missing, unreachable):
        [again] = by_url(daemon, url)
        assert again["sessionId"] == session_id and again["id"] > resumed
    wait_for(driver, lambda d: "Retried 2 tasks" in d.find_element(By.ID, "notice").text, "the retry's notice")
    tab(driver, "all").click()
    wait_for(driver, lambda d: len(rows(d)) == tab_count(d, "all"), "every task listed again")

    # A finished file opens from its row: fetched with the token, saved by the browser.
    [small] = add(driver, [nginx_url + "/files/1MiB.bin"], session="shared")
    wait_for(driver, lambda d: shown_as(d, small) == "done", "the small download done")
    assert row(driver, small).find_element(By.CSS_SELECTOR, ".badge").text == "done"
    assert bar_value(driver, small) == 1.0
    row(driver, small).find_element(By.CSS_SELECTOR, "a.open-file").click()
    saved = downloads / "1MiB.bin"
    daemon.wait_until(lambda: saved.exists() and saved.stat().st_size == (nginx_root / "1MiB.bin").stat().st_size,
                      timeout=WAIT, what="the browser to save the file")
    assert hashlib.sha256(saved.read_bytes()).digest() == hashlib.sha256((nginx_root / "1MiB.bin").read_bytes()).digest()

    # Deleted with its file: a download into a destination folder, deleted from the panel.
    [placed] = add(driver, [nginx_url + "/files/1MiB.bin"], session="shared", folder="kept")
    daemon.wait_until(lambda: api_task(daemon, placed)["state"] == "completed", timeout=WAIT, what="the placed download")
    location = Path(api_task(daemon, placed)["location"])
    assert location.exists() and location.parent.name == "kept"
    row(driver, placed).find_element(By.CSS_SELECTOR, "button.name").click()
    wait_for(driver, expected_conditions.visibility_of_element_located((By.ID, "detail")), "the detail panel")
    wait_for(driver, lambda d: '"transactionMetrics"' in d.find_element(By.ID, "detail-metrics").text, "the completed task's metrics")
    driver.find_element(By.CSS_SELECTOR, '#detail-actions [data-action="delete-file"]').click()
    assert "and its file" in accept_confirmation(driver)
    daemon.wait_until(lambda: api_status(daemon, placed) == 404, timeout=WAIT, what="the task deleted")
    # The task is gone from the API before the file is unlinked; the DELETE answers after both.
    daemon.wait_until(lambda: not location.exists(), timeout=WAIT, what="the file deleted with its task")
    wait_for(driver, lambda d: not d.find_element(By.ID, "detail").is_displayed(), "the panel to close with its task")

    # The daemon-wide limits, read and set (an admin's token).
    field = driver.find_element(By.ID, "limit-down")
    field.clear()
    field.send_keys("512")
    driver.find_element(By.ID, "limits-button").click()
    daemon.wait_until(lambda: daemon.json("GET", "/v1/limits")["downloadBytesPerSecond"] == 512 * 1024, timeout=WAIT, what="the limit set")
    wait_for(driver, lambda d: "512 KiB/s" in d.find_element(By.ID, "limits-summary").text, "the limits' summary")
    driver.find_element(By.ID, "limit-down").clear()
    driver.find_element(By.ID, "limits-button").click()
    daemon.wait_until(lambda: daemon.json("GET", "/v1/limits")["downloadBytesPerSecond"] is None, timeout=WAIT, what="the limit lifted")

    # Phone width: cards, no sideways scrolling.
    driver.set_window_size(390, 844)
    wait_for(driver, lambda d: d.execute_script("return window.innerWidth") <= 400, "a 390 px wide window")
    assert driver.execute_script("return getComputedStyle(document.querySelector('tr.task')).display") == "block"
    assert driver.execute_script("return document.documentElement.scrollWidth <= document.documentElement.clientWidth"), \
        "the page scrolls sideways at phone width"
    driver.execute_script("document.getElementById('tasks-heading').scrollIntoView()")
    driver.save_screenshot(str(artifacts / "dashboard-phone.png"))
    driver.set_window_size(1400, 1000)

    # Clear finished: every finished task goes, after a confirmation.
    wait_for(driver, lambda d: not d.find_element(By.ID, "clear-finished").get_property("disabled"), "something to clear")
    driver.find_element(By.ID, "clear-finished").click()
    assert "finished task" in accept_confirmation(driver)
    daemon.wait_until(lambda: not [t for t in daemon.json("GET", "/v1/tasks?after=0&limit=1000")["tasks"] if t["state"] == "completed"],
                      timeout=WAIT, what="every finished task deleted")
    wait_for(driver, lambda d: tab_count(d, "all") == 0, "an empty list")

    # Live through the change feed only: no per-task progress polls, a session's events read
    # only for one task and never with an attachment, and no console errors (a
    # Content-Security-Policy violation would be one).
    fetched = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert any("/v1/tasks?after=" in name for name in fetched), fetched
    assert not [name for name in fetched if "/progress" in name], fetched
    events = [name for name in fetched if "/events" in name]
    assert events and all("task=" in name and "attachment" not in name for name in events), events
    errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    # The first reads without a token answer 401, and the failed tasks' URLs are not the page's.
    errors = [entry for entry in errors if "401" not in entry["message"]]
    assert not errors, errors


def test_a_tenant_sees_only_its_own_tasks_and_cannot_set_the_limits(start_daemon, browser, nginx_url):
    daemon = start_daemon(token=None, arguments=["--token", "root:admin-secret-1:admin", "--token", "ann:tenant-secret-1:tenant"])
    daemon.token = "admin-secret-1"
    theirs = daemon.json("POST", "/v1/sessions/shared/tasks", {"kind": "download", "request": {"url": nginx_url + "/files/1MiB.bin"}})
    daemon.token = "tenant-secret-1"
    mine = daemon.json("POST", "/v1/sessions/shared/tasks", {"kind": "download", "request": {"url": nginx_url + "/files/16MiB.bin"}})
    driver = browser
    driver.get(daemon.url + "/")
    enter_token(driver, "tenant-secret-1")
    wait_for(driver, lambda d: rows(d) == [mine["id"]], "the tenant's own task only")
    assert theirs["id"] not in rows(driver)
    wait_for(driver, lambda d: "Your tasks" in d.find_element(By.ID, "overview-scope").text, "the overview's scope")
    assert not driver.find_element(By.ID, "limits-button").is_displayed()
    assert driver.find_element(By.ID, "limits-note").is_displayed()
    assert driver.find_element(By.ID, "limit-down").get_property("readOnly")


def test_ten_thousand_tasks_are_shown_a_page_at_a_time(start_daemon, browser, nginx_url):
    daemon = start_daemon(token=None)
    later = (datetime.now(timezone.utc) + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    specs = [{"kind": "download", "request": {"url": f"{nginx_url}/files/1MiB.bin?n={n}"}, "earliestBeginDate": later}
             for n in range(10_000)]
    created = daemon.json("POST", "/v1/sessions/shared/tasks:batch", {"tasks": specs})["tasks"]
    assert len(created) == 10_000
    driver = browser
    started = time.monotonic()
    driver.get(daemon.url + "/")
    wait_for(driver, lambda d: tab_count(d, "all") == 10_000, "every task counted", timeout=60)
    print(f"10,000 tasks counted {time.monotonic() - started:.1f} s after the page was asked for")
    assert tab_count(driver, "waiting") == 10_000
    assert len(rows(driver)) == 50
    assert driver.find_element(By.ID, "page-info").text.startswith("1–50 of 10000")
    assert row(driver, created[-1]["id"]).find_element(By.CSS_SELECTOR, ".reason").text.startswith("Starts at")
    driver.find_element(By.ID, "page-next").click()
    wait_for(driver, lambda d: rows(d)[0] == created[-51]["id"], "the second page")
    search = driver.find_element(By.ID, "search")
    search.send_keys("n=9999")
    wait_for(driver, lambda d: rows(d) == [created[-1]["id"]], "the search over 10,000 tasks")
    assert driver.find_element(By.ID, "page-info").text.startswith("1–1 of 1")


def test_dashboard_works_without_a_token_when_the_daemon_has_none(start_daemon, browser, nginx_url, nginx_root, downloads):
    daemon = start_daemon(token=None)
    task = daemon.json("POST", "/v1/sessions/shared/tasks",
                       {"kind": "download", "request": {"url": nginx_url + "/files/1MiB.bin"}})
    driver = browser
    driver.get(daemon.url + "/")
    wait_for(driver, lambda d: shown_as(d, task["id"]) == "done", "the row to say done")
    assert bar_value(driver, task["id"]) == 1.0
    assert not driver.find_element(By.ID, "token-section").is_displayed()
    # Without a token the file is a plain link.
    link = row(driver, task["id"]).find_element(By.CSS_SELECTOR, "a.open-file")
    assert link.get_attribute("href") == f"{daemon.url}/v1/tasks/{task['id']}/file"


def test_dashboard_page_needs_no_token_and_revalidates(daemon):
    """The page is static and public (the data behind it is not): no token, and a 304 for the
    ETag the browser already has."""
    with urllib.request.urlopen(daemon.url + "/", timeout=10) as response:
        body = response.read()
        headers = response.headers
    assert body.startswith(b"<!doctype html>")
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    request = urllib.request.Request(daemon.url + "/", headers={"If-None-Match": headers["ETag"]})
    with pytest.raises(urllib.error.HTTPError) as answer:
        urllib.request.urlopen(request, timeout=10)
    assert answer.value.code == 304
    for name in ("app.js", "api.js", "view.js", "states.js", "tasklist.js", "overview.js", "detail.js", "add.js", "format.js", "app.css"):
        with urllib.request.urlopen(f"{daemon.url}/dashboard/{name}", timeout=10) as response:
            assert response.status == 200 and response.read()
    assert daemon.request("GET", "/v1/tasks", headers={"Authorization": "Bearer wrong"})[0] == 401
