"""The dashboard in a real browser: Debian's chromium, headless, driven by selenium through Debian's
chromedriver. Against a daemon with a token, the page asks for the token, creates downloads from
its form, shows their bars moving (screenshots at desktop and phone width in test-artifacts/), and
its buttons suspend, reprioritise, resume and cancel them, as the API then confirms."""
from __future__ import annotations

import shutil
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import Select, WebDriverWait

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
WAIT = 20  # seconds: the bound of every wait on the page


@pytest.fixture
def browser(tmp_path: Path):
    """A headless chromium with a profile of its own, quit after the test."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not shutil.which(path):
            pytest.fail(f"{path} is missing: scripts/test.sh installs chromium and chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--no-first-run", "--disable-extensions", "--window-size=1280,900",
                     f"--user-data-dir={tmp_path / 'chromium-profile'}"):
        options.add_argument(argument)
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
        return WebDriverWait(driver, timeout, poll_frequency=0.1).until(condition)
    except TimeoutException:
        raise AssertionError(f"timed out after {timeout}s waiting for {what}") from None


def row(driver, task_id: int):
    return driver.find_element(By.CSS_SELECTOR, f'tbody.task[data-task-id="{task_id}"]')


def bar_value(driver, task_id: int) -> float:
    value = row(driver, task_id).find_element(By.TAG_NAME, "progress").get_attribute("value")
    return float(value or 0)


def create_from_form(driver, url: str, session: str = "shared", service_type: str = "", priority: str = "0.5") -> int:
    """Fills and sends the new-task form; returns the id of the row that appears."""
    before = {element.get_attribute("data-task-id") for element in driver.find_elements(By.CSS_SELECTOR, "tbody.task")}
    field = driver.find_element(By.ID, "task-url")
    field.clear()
    field.send_keys(url)
    Select(driver.find_element(By.ID, "task-kind")).select_by_value("download")
    Select(driver.find_element(By.ID, "task-session")).select_by_value(session)
    Select(driver.find_element(By.ID, "task-service")).select_by_value(service_type)
    priority_field = driver.find_element(By.ID, "task-priority")
    priority_field.clear()
    priority_field.send_keys(priority)
    driver.find_element(By.ID, "create-button").click()

    def new_row(d):
        ids = {element.get_attribute("data-task-id") for element in d.find_elements(By.CSS_SELECTOR, "tbody.task")}
        added = ids - before
        return int(added.pop()) if added else None

    return wait_for(driver, new_row, f"a row for the download of {url}")


def api_task(daemon, task_id: int) -> dict:
    return daemon.json("GET", f"/v1/tasks/{task_id}")


def test_dashboard_follows_and_controls_downloads(daemon, browser, nginx_url, artifacts):
    driver = browser
    driver.get(daemon.url + "/")
    assert driver.title == "transferd dashboard"

    # The daemon has a token: the page asks for it (a labelled field) and keeps it out of the URL.
    token_field = wait_for(driver, expected_conditions.visibility_of_element_located((By.ID, "token")), "the token field")
    label = driver.find_element(By.CSS_SELECTOR, 'label[for="token"]')
    assert label.text.strip() == "Bearer token"
    token_field.send_keys(daemon.token, Keys.ENTER)
    wait_for(driver, expected_conditions.invisibility_of_element_located((By.ID, "token-section")), "the token form to go")
    wait_for(driver, lambda d: d.find_element(By.ID, "connection").text.startswith("Live"), "the change feed to answer")
    assert daemon.token not in driver.current_url

    slow = nginx_url + "/slow/16MiB.bin"
    first = create_from_form(driver, slow)
    second = create_from_form(driver, slow, session="new", service_type="background", priority="0.75")
    assert api_task(daemon, first)["sessionId"] == "shared"
    second_task = api_task(daemon, second)
    assert second_task["sessionId"] != "shared"
    assert second_task["networkServiceType"] == "background"
    assert second_task["priority"] == 0.75

    # Both bars move: two readings of each, the second larger.
    readings = {}
    for task_id in (first, second):
        readings[task_id] = wait_for(driver, lambda d, t=task_id: bar_value(d, t) > 0 and bar_value(d, t),
                                     f"task {task_id}'s bar to start")
    for task_id in (first, second):
        wait_for(driver, lambda d, t=task_id: bar_value(d, t) > readings[t] + 0.005, f"task {task_id}'s bar to move")
    # Far enough along (about 8 s at 256 KiB/s) that the screenshot shows the bars filling.
    for task_id in (first, second):
        wait_for(driver, lambda d, t=task_id: bar_value(d, t) >= 0.1, f"task {task_id}'s bar to pass 10%")
    cells = row(driver, first)
    assert "/s" in cells.find_element(By.CSS_SELECTOR, ".speed").text
    assert "16 MiB" in cells.find_element(By.CSS_SELECTOR, ".bytes").text
    assert cells.find_element(By.CSS_SELECTOR, ".remaining").text.endswith("s")
    assert cells.find_element(By.CSS_SELECTOR, ".service").text == "default"
    assert row(driver, second).find_element(By.CSS_SELECTOR, ".service").text == "background"
    driver.set_window_size(1280, 1100)  # both sessions in the picture
    driver.save_screenshot(str(artifacts / "dashboard.png"))

    # Phone width: the same tasks as cards, the bars still moving.
    driver.set_window_size(390, 844)
    wait_for(driver, lambda d: d.execute_script("return window.innerWidth") <= 400, "a 390 px wide window")
    assert driver.execute_script("return getComputedStyle(document.querySelector('tbody.task')).display") == "block"
    assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth + 1"), \
        "the page scrolls sideways at phone width"
    narrow = bar_value(driver, first)
    wait_for(driver, lambda d: bar_value(d, first) > narrow, "the bar to move at phone width")
    driver.execute_script("document.getElementById('tasks-heading').scrollIntoView()")
    driver.save_screenshot(str(artifacts / "dashboard-phone.png"))
    driver.set_window_size(1280, 900)

    # Suspend from the page: the API says suspended, and so does the row.
    row(driver, first).find_element(By.CSS_SELECTOR, 'button[data-action="suspend"]').click()
    daemon.wait_until(lambda: api_task(daemon, first)["state"] == "suspended", timeout=WAIT, what="the task suspended")
    wait_for(driver, lambda d: row(d, first).get_attribute("data-state") == "suspended", "the row to say suspended")
    paused_at = api_task(daemon, first)["progress"]["bytesReceived"]

    # Priority from the page.
    priority = row(driver, first).find_element(By.CSS_SELECTOR, ".priority-input")
    # As a person does it: select what is there and type over it (the field keeps focus, so a
    # live update arriving meanwhile must not put the old value back).
    priority.send_keys(Keys.CONTROL, "a")
    priority.send_keys("0.9")
    row(driver, first).find_element(By.CSS_SELECTOR, ".priority-form button").click()
    daemon.wait_until(lambda: api_task(daemon, first)["priority"] == 0.9, timeout=WAIT, what="priority 0.9")

    # Resume with the keyboard (a real button: Enter presses it); the download goes on.
    row(driver, first).find_element(By.CSS_SELECTOR, 'button[data-action="resume"]').send_keys(Keys.ENTER)
    daemon.wait_until(lambda: api_task(daemon, first)["state"] == "running", timeout=WAIT, what="the task running again")
    daemon.wait_until(lambda: api_task(daemon, first)["progress"]["bytesReceived"] > paused_at, timeout=WAIT,
                      what="bytes after the resume")
    wait_for(driver, lambda d: row(d, first).get_attribute("data-state") == "running", "the row to say running")

    # Cancel: completed with NSURLErrorCancelled.
    row(driver, first).find_element(By.CSS_SELECTOR, 'button[data-action="cancel"]').click()
    daemon.wait_until(lambda: api_task(daemon, first)["state"] == "completed", timeout=WAIT, what="the task cancelled")
    assert api_task(daemon, first)["error"]["code"] == -999
    wait_for(driver, lambda d: row(d, first).get_attribute("data-state") == "completed", "the row to say completed")
    assert "cancelled" in row(driver, first).find_element(By.CSS_SELECTOR, ".error").text.lower()

    # Cancel with resume data: the page offers it as a file, and it is the API's.
    row(driver, second).find_element(By.CSS_SELECTOR, 'button[data-action="cancel-resume-data"]').click()
    link = wait_for(driver, lambda d: (lambda a: a if a.is_displayed() else None)(
        row(d, second).find_element(By.CSS_SELECTOR, "a.resume-data")), "the resume data link")
    resume_data = api_task(daemon, second)["error"]["resumeData"]
    assert resume_data and link.get_attribute("data-value") == resume_data
    assert link.get_attribute("download") == f"task-{second}.resumedata"

    # Live through the change feed only: no per-task progress polls, never a session's event
    # feed (which could take a background session's attachment), and no console errors (a
    # Content-Security-Policy violation would be one).
    fetched = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert any("/v1/tasks?after=" in name for name in fetched), fetched
    assert not [name for name in fetched if "/events" in name or "/progress" in name], fetched
    errors = [entry for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]
    # The first change-feed read without a token answers 401, which chromium logs.
    errors = [entry for entry in errors if "401" not in entry["message"]]
    assert not errors, errors


def test_dashboard_works_without_a_token_when_the_daemon_has_none(start_daemon, browser, nginx_url):
    daemon = start_daemon(token=None)
    task = daemon.json("POST", "/v1/sessions/shared/tasks",
                       {"kind": "download", "request": {"url": nginx_url + "/files/1MiB.bin"}})
    driver = browser
    driver.get(daemon.url + "/")
    wait_for(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'tbody.task[data-task-id="{task["id"]}"]'), "the task's row")
    wait_for(driver, lambda d: row(d, task["id"]).get_attribute("data-state") == "completed", "the row to say completed")
    assert bar_value(driver, task["id"]) == 1.0
    assert not driver.find_element(By.ID, "token-section").is_displayed()


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
    assert daemon.request("GET", "/v1/tasks", headers={"Authorization": "Bearer wrong"})[0] == 401
