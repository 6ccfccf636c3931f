"""The service as people use it: a real uvicorn server, real warm workers, a real Chromium (Selenium).

One server (and one worker) is shared by the whole module; the kill -9 test
comes last and leaves a restarted server behind.
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import ROOT
from tests.service.live import LiveServer, free_port, multipart

ALICE = ROOT / "samples" / "alice.ipynb"
SMALL = "def shares_storage(a, b):\n    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()\n"
HOSTILE = '''# %%
from autograder import submit
submit()
print("<script>window.__pwned = 1</script>")
print('<img src=x onerror="window.__pwned = 2">')
print("![tracker](http://127.0.0.1:9/tracker.png)")

def shares_storage(a, b):
    raise ValueError('<script>window.__pwned = 3</script><img src=x onerror="window.__pwned = 4">')
'''


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    # a bank of late days and open regrade requests: their lines and forms are on the pages axe-core checks
    server = LiveServer(tmp_path_factory.mktemp("live"), '[course]\nlate_days = 2\n[[assignments]]\n'
                        'id = "pytorch-fundamentals"\nregrade_requests_until = 2099-01-01T00:00:00\n')
    server.start()
    yield server
    server.stop()


def _browser_missing() -> str:
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        return "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "needs selenium (pip install -e '.[test]')"
    return ""


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    why = _browser_missing()
    if why:
        pytest.skip(why)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    downloads = tmp_path_factory.mktemp("downloads")
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium")
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
              "--no-proxy-server", "--window-size=1200,900"):
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL"})  # the requests each page makes
    opts.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                           "download.prompt_for_download": False})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)
    driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    driver.downloads = downloads
    yield driver
    driver.quit()


def _sign_in(driver, live, who):
    from selenium.webdriver.common.by import By

    driver.delete_all_cookies()
    driver.get(live.link(who))
    driver.find_element(By.ID, "signin").click()  # the link shows whose it is; its button signs in
    try:
        _until(lambda: "token=" not in driver.current_url
               and driver.title.startswith(("Your assignments", "Staff dashboard")), 30)
    except AssertionError:
        raise AssertionError(f"not signed in: {driver.current_url} {driver.title}: {driver.page_source[:600]}") \
            from None


def _text_of(driver, tag: str) -> str:
    """The element's text, or "" while the page that has it is not there yet."""
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.common.by import By

    try:
        return driver.find_element(By.TAG_NAME, tag).text
    except (NoSuchElementException, StaleElementReferenceException):
        return ""


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _until(cond, timeout=240.0, step=0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(step)
    raise AssertionError("timed out")


def _upload_in_browser(driver, path):
    from selenium.webdriver.common.by import By

    driver.find_element(By.ID, "file-1").send_keys(str(path))
    driver.find_element(By.ID, "submit-1").click()
    _until(lambda: "/submissions/" in driver.current_url)
    return driver.current_url.rsplit("/", 1)[1]


def _watch(driver):
    """The status texts the page showed, until the feedback is there."""
    from selenium.common.exceptions import WebDriverException

    seen: list[str] = []
    # one script reads both elements from one document: separate element lookups can straddle the reload that
    # follows grading (old page's status, new page's feedback) or hit a node the reload just detached
    read = ("const s = document.getElementById('status');"
            "return s ? [s.textContent.trim(), document.getElementById('feedback') !== null] : null;")

    def step():
        try:
            got = driver.execute_script(read)
        except WebDriverException:  # the page is mid-navigation: look again
            return False
        if not got:
            return False
        text, feedback = got
        if not seen or seen[-1] != text:
            seen.append(text)
        return (feedback and text == "graded") or "error" in text
    _until(step)
    return seen


def test_the_web_process_never_imports_torch(live):
    maps = Path(f"/proc/{live.proc.pid}/maps").read_text()
    assert "libtorch" not in maps and live.worker_pids(), "the workers are the ones that import torch"


def test_a_student_signs_in_uploads_watches_and_sees_110_with_feedback(live, browser):
    from selenium.webdriver.common.by import By

    _sign_in(browser, live, "ann")
    page = browser.find_element(By.TAG_NAME, "main").text
    assert "Your best attempt counts." in page and "No deadline." in page  # the rules, before submitting
    sid = _upload_in_browser(browser, ALICE)
    seen = _watch(browser)
    assert seen[0].startswith(("queued", "running")) and seen[-1] == "graded", seen
    feedback = browser.find_element(By.ID, "feedback").text
    assert "Score: 110 / 110" in feedback and "Views versus copies" in feedback
    assert "def test_" not in browser.page_source  # no hidden test code
    _screenshot(browser, "student-feedback")
    browser.get(live.url + "/")
    assert "110 / 110" in browser.find_element(By.TAG_NAME, "table").text  # the history, one score format
    live.ann_submission = sid


def test_a_second_student_cannot_open_it_by_url(live, browser):
    from selenium.webdriver.common.by import By

    sid = live.ann_submission
    _sign_in(browser, live, "ben")
    browser.get(f"{live.url}/submissions/{sid}")
    assert "no such submission" in browser.find_element(By.TAG_NAME, "main").text
    assert "110" not in browser.page_source
    assert live.api(f"/api/submissions/{sid}", "ben")[0] == 404
    assert live.api("/api/submissions/" + "B" * 22, "ben")[0] == 404


def test_staff_find_regrade_and_the_student_sees_the_history_then_the_canvas_csv(live, browser):
    from selenium.webdriver.common.by import By

    sid = live.ann_submission
    _sign_in(browser, live, "prof")
    assert browser.title.startswith("Staff dashboard")  # a staff link lands on the dashboard
    assert "ann" in browser.find_element(By.TAG_NAME, "main").text
    _screenshot(browser, "staff-dashboard")
    browser.find_element(By.ID, "find-submissions").click()
    _until(lambda: browser.title.startswith("Submissions"), timeout=30)
    browser.find_element(By.ID, "f-q").send_keys("ann")
    browser.find_element(By.ID, "find").click()
    _until(lambda: "submission(s)" in _text_of(browser, "main") and "q=ann" in browser.current_url, timeout=30)
    row = browser.find_element(By.CSS_SELECTOR, f'tr[data-id="{sid}"]')
    assert "110 / 110" in row.text and "ann" in row.text
    _screenshot(browser, "staff-submissions")
    row.find_element(By.XPATH, ".//button[text()='Regrade']").click()  # no id typed anywhere
    # the form's answer is a new page: under load the old one (or none) may still be showing for a moment
    _until(lambda: "1 submission(s) queued for regrading" in _text_of(browser, "main"), timeout=30)
    browser.find_element(By.LINK_TEXT, "Back").click()
    _until(lambda: "q=ann" in browser.current_url, timeout=30)  # back to the same search

    def two_results():
        with live.db() as db:
            return db.execute("SELECT COUNT(*) FROM results WHERE submission = ?", (sid,)).fetchone()[0] == 2
    _until(two_results)
    browser.get(f"{live.url}/submissions/{sid}")
    history = browser.find_element(By.ID, "history-table").text
    assert "submitted" in history and "regraded by prof" in history and history.count("110 / 110") == 3
    _sign_in(browser, live, "ann")
    browser.get(f"{live.url}/submissions/{sid}")
    assert "This submission was graded 2 times" in browser.find_element(By.ID, "changed").text
    assert "regraded by prof" in browser.find_element(By.ID, "history-table").text
    _sign_in(browser, live, "prof")
    browser.find_element(By.ID, "dl-canvas").click()
    path = _until(lambda: next((p for p in browser.downloads.glob("*.csv")), None), timeout=30)
    rows = list(csv.reader(path.open()))
    assert rows[0][:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert ["Ann Student", "ann", "", "ann@x.edu", "", "110"] in rows
    browser.get(f"{live.url}/staff/report/pytorch-fundamentals")
    assert "class report" in browser.title
    total = next(th for th in browser.find_elements(By.CSS_SELECTOR, "table.students th") if th.text == "total")
    total.click()
    assert total.get_attribute("aria-sort") == "ascending"  # the report's own script runs under the page's CSP
    assert browser.find_element(By.LINK_TEXT, "Staff dashboard")  # the way back
    browser.find_element(By.LINK_TEXT, "ann").click()  # the student list links each to their feedback
    _until(lambda: browser.current_url.endswith(f"/submissions/{sid}"), timeout=30)
    assert "Score: 110 / 110" in browser.find_element(By.ID, "feedback").text
    assert "libtorch" not in Path(f"/proc/{live.proc.pid}/maps").read_text()  # the report's review neither


def _axe(driver) -> list[str]:
    """The serious and critical accessibility violations axe-core finds in the page (its rule and where)."""
    from axe_selenium_python import Axe

    axe = Axe(driver)
    axe.inject()
    result = axe.run()
    assert result["passes"], "axe-core ran no rule on the page"  # it did run, under the page's CSP
    found = result["violations"]
    return [f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]}" for v in found
            if v["impact"] in ("serious", "critical")]


def test_every_page_passes_axe_core_and_its_controls_are_labelled(live, browser):
    """axe-core, the standard accessibility engine, in the real Chromium: no serious or critical violation on
    any page a student or staff member sees, and each form control has a label (keyboard: every control is a
    native link, button, input or select, so it is reachable with Tab)."""
    pytest.importorskip("axe_selenium_python", reason="axe-selenium-python is not installed (the test extra)")
    from selenium.webdriver.common.by import By

    sid = live.ann_submission
    _sign_in(browser, live, "ann")  # a regrade request, from the form: the dashboard then shows its answer form
    browser.get(f"{live.url}/submissions/{sid}")
    browser.find_element(By.ID, "rq-comment").send_keys("Please look at this again.")
    browser.find_element(By.ID, "request-regrade").click()
    _until(lambda: "Waiting for staff's answer." in browser.page_source, timeout=30)
    pages = {"ann": ["/", f"/submissions/{sid}", "/no-such-page"],
             "prof": ["/staff", "/staff/submissions", "/staff/submissions?q=ann&sort=score", "/staff/students/ann",
                      f"/submissions/{sid}", "/staff/report/pytorch-fundamentals"]}
    found = {}
    for who, urls in pages.items():
        _sign_in(browser, live, who)
        for url in urls:
            browser.get(live.url + url)
            _until(lambda: browser.execute_script("return document.readyState") == "complete", timeout=30)
            bad = _axe(browser)
            if bad:
                found[f"{who} {url}"] = bad
            for control in browser.find_elements(By.CSS_SELECTOR, "input:not([type=hidden]), select, textarea"):
                cid = control.get_attribute("id")
                labelled = bool(cid and browser.find_elements(By.CSS_SELECTOR, f'label[for="{cid}"]')) or \
                    control.get_attribute("aria-label")
                assert labelled, f"{who} {url}: a control without a label: {control.get_attribute('outerHTML')}"
    assert not found, found
    browser.get(live.url + "/")
    assert not _axe(browser)  # the welcome page, signed out
    browser.delete_all_cookies()
    browser.get(live.url + "/")
    assert not _axe(browser)


def _screenshot(driver, name: str) -> None:
    """With TG_SCREENSHOTS=DIR, the page (whole height) as DIR/NAME.png: how docs/screenshots/ are made."""
    out = os.environ.get("TG_SCREENSHOTS")
    if not out:
        return
    from selenium.webdriver.common.by import By

    height = driver.execute_script("return document.body.scrollHeight")
    driver.set_window_size(1200, min(max(900, height + 120), 2400))
    Path(out).mkdir(parents=True, exist_ok=True)
    driver.find_element(By.TAG_NAME, "body").screenshot(str(Path(out) / f"{name}.png"))
    driver.set_window_size(1200, 900)


def _requests(driver) -> list[str]:
    """The URLs the browser requested since the last call (Chrome's performance log)."""
    import json

    out = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            out.append(msg["params"]["request"]["url"])
    return out


def test_with_poll_1_the_page_updates_to_graded_without_the_live_channel(live, browser):
    from selenium.webdriver.common.by import By

    _sign_in(browser, live, "ben")
    body, headers = multipart("mine.py", SMALL.encode())  # one function: a short grading
    code, got = live.api("/api/submissions", "ben", body, headers)
    assert code == 202
    _requests(browser)  # forget what came before
    browser.get(f"{live.url}/submissions/{got['id']}?poll=1")
    seen = _watch(browser)
    assert seen[0].startswith(("queued", "running")) and seen[-1] == "graded", seen
    assert "Score: " in browser.find_element(By.ID, "feedback").text
    asked = _requests(browser)
    assert f"{live.url}/api/submissions/{got['id']}" in asked  # it polled the status
    assert not [u for u in asked if "/events" in u], asked  # and never opened the event stream


def test_where_the_live_channel_is_blocked_the_page_falls_back_to_polling(live, browser):
    """A proxy or firewall that refuses server-sent events must not leave a student staring at "queued": the
    browser here refuses the event stream (Chromium's own URL blocking), and the page polls instead."""
    from selenium.webdriver.common.by import By

    _sign_in(browser, live, "ben")
    body, headers = multipart("mine.py", SMALL.encode())
    code, got = live.api("/api/submissions", "ben", body, headers)
    assert code == 202
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/events*"]})
    try:
        _requests(browser)  # forget what came before
        browser.get(f"{live.url}/submissions/{got['id']}")  # no ?poll=1: the page chooses the event stream
        seen = _watch(browser)
        asked = _requests(browser)
    finally:
        browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
    assert seen[-1] == "graded", seen
    assert "Score: " in browser.find_element(By.ID, "feedback").text
    assert [u for u in asked if "/events" in u], asked  # it did try the live channel first
    assert f"{live.url}/api/submissions/{got['id']}" in asked  # then polled the status


def test_a_hostile_submission_runs_no_script_in_the_browser(live, browser, tmp_path):
    from selenium.webdriver.common.by import By

    evil = tmp_path / '<img src=x onerror="window.__pwned=5">.py'
    evil.write_text(HOSTILE)
    _sign_in(browser, live, "cat")
    _upload_in_browser(browser, evil)
    _watch(browser)
    text = browser.find_element(By.TAG_NAME, "main").text
    assert "<script>window.__pwned = 1</script>" in text  # shown as text
    assert "window.__pwned = 3" in text or "shares_storage" in text
    assert "submit() skipped" in text and "did not run cleanly" not in text  # submit() is a no-op when graded
    assert browser.execute_script("return window.__pwned") is None
    assert browser.find_elements(By.CSS_SELECTOR, "img[src='x'], script:not([src])") == []
    assert not [i for i in browser.find_elements(By.TAG_NAME, "img") if "tracker" in (i.get_attribute("src") or "")]
    browser.get(live.url + "/")
    assert browser.execute_script("return window.__pwned") is None


def test_torchgrader_submit_exit_codes(live, tmp_path):
    cli = [sys.executable, "-c", "from autograder.cli import run; run()", "submit"]
    stub = tmp_path / "mine.py"
    stub.write_text(SMALL)
    ok = subprocess.run([*cli, str(stub), "--server", live.url, "--token", live.tokens["ben"], "--wait"],
                        capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.strip().splitlines()[-1].endswith("/ 110 points") and "graded" in ok.stdout
    bad = tmp_path / "broken.ipynb"
    bad.write_text("{not json")
    refused = subprocess.run([*cli, str(bad), "--server", live.url, "--token", live.tokens["ben"]],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 3 and "not a readable notebook" in refused.stderr
    nobody = subprocess.run([*cli, str(stub), "--server", live.url, "--token", "wrong"],
                            capture_output=True, text=True, timeout=60)
    assert nobody.returncode == 6
    closed = subprocess.run([*cli, str(stub), "--server", f"http://127.0.0.1:{free_port()}", "--token", "x"],
                            capture_output=True, text=True, timeout=60)
    assert closed.returncode == 4 and "cannot reach" in closed.stderr


def test_submit_in_a_notebook_asks_for_the_token_once_and_keeps_it_on_the_machine(live, tmp_path, monkeypatch,
                                                                                    capsys):
    import nbformat

    from autograder import submit

    monkeypatch.setenv("HOME", str(tmp_path))
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("def shares_storage(a, b):\n    return False")]
    nb.metadata["torchgrader"] = {"assignment": "pytorch-fundamentals", "server": live.url}  # as `release --server`
    path = tmp_path / "mine.ipynb"
    nbformat.write(nb, str(path))
    asked = []
    monkeypatch.setattr("getpass.getpass", lambda prompt: asked.append(prompt) or live.link("ben"))
    got = submit(str(path))
    assert got["status"] == "graded" and len(asked) == 1
    assert capsys.readouterr().out.strip().splitlines()[-1].endswith("/ 110 points")
    saved = tmp_path / ".config" / "torchgrader" / "tokens.json"
    assert (saved.stat().st_mode & 0o777) == 0o600 and live.tokens["ben"] in saved.read_text()
    assert submit(str(path), wait=False)["status"] == "queued" and len(asked) == 1  # not asked again
    assert live.tokens["ben"] not in path.read_text()  # never in the notebook


def test_a_worker_killed_mid_submission_costs_a_retry_only(live):
    body, headers = multipart("alice.ipynb", ALICE.read_bytes())
    code, got = live.api("/api/submissions", "ben", body, headers)
    assert code == 202
    live.wait_status(got["id"], "ben", ("running",))
    time.sleep(1.0)
    for pid in live.worker_pids():
        os.kill(pid, 9)
    final = live.wait_status(got["id"], "ben", ("graded", "error"))
    assert final["status"] == "graded" and final["score"] == 110
    with live.db() as db:
        assert db.execute("SELECT tries FROM jobs WHERE submission = ?", (got["id"],)).fetchone()[0] == 1


def test_kill_9_mid_grading_loses_nothing_and_grades_each_once(live):
    body, headers = multipart("alice.ipynb", ALICE.read_bytes())
    ids = []
    for _ in range(3):
        code, got = live.api("/api/submissions", "cat", body, headers)
        assert code == 202
        ids.append(got["id"])
    live.wait_status(ids[0], "cat", ("running",))
    time.sleep(1.0)
    workers = live.worker_pids()
    assert workers
    live.kill9()
    _until(lambda: not [p for p in workers if _alive(p)], timeout=30)  # the workers die with the service
    live.start(links=False)
    for sid in ids:
        assert live.wait_status(sid, "cat", ("graded", "error"))["score"] == 110
    with live.db() as db:
        per_job = db.execute("SELECT j.id, COUNT(r.id) FROM jobs j LEFT JOIN results r ON r.job = j.id "
                             "GROUP BY j.id").fetchall()
        assert all(n == 1 for _, n in per_job), per_job
        for sid in ids:
            assert db.execute("SELECT COUNT(*) FROM results WHERE submission = ?", (sid,)).fetchone()[0] == 1
    assert "queued again" in live.tail()
    assert Path(live.data / "submissions").is_dir()
