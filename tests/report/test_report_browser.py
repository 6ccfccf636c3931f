"""The class report in a real Chromium: it loads, the student table sorts, every link resolves, code stays data.

Debian's ``chromium`` and ``chromium-driver`` through Selenium; skipped, with
the reason, where either is missing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from autograder.report.attention import Attention
from autograder.report.classreport import write_class_report
from autograder.report.similarity import similar_pairs
from autograder.report.submission import write_submission
from tests.report.test_classreport import result

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
try:
    import selenium  # noqa: F401
    SELENIUM = ""
except ImportError:
    SELENIUM = "needs selenium (pip install -e '.[test]')"
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER) or bool(SELENIUM), reason=SELENIUM or (
    "needs Debian's chromium and chromium-driver (apt-get install -y chromium chromium-driver)"))

SHARED = """
def shares_storage(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()

def flatten_any(x):
    out = x.reshape(-1)
    if out.data_ptr() != x.data_ptr():
        out = x.contiguous().view(-1)
    return out  # '</pre><script>window.pwned = 1</script>'
"""


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1400,1000"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("out")
    results = [result("zoe", double="failed", msg="wrong"), result("ana"), result("Émile O'Brien"),
               result("bob", rows="timeout", double="failed", msg="wrong"),
               result("cy", status="load_error", error="cy_hw.ipynb is not a readable Jupyter notebook")]
    for r in results:
        write_submission(r, out)
    pairs = similar_pairs({"ana": SHARED, "zoe": SHARED.replace("x", "t").replace("out", "res")}, common_share=1.0)
    assert len(pairs) == 1
    attention = {"bob": [Attention("late", "late (Canvas marked the file LATE)", "Submitted late.")]}
    return write_class_report(out / "report.html", results, title="Demo", exercise_ids=["basics", "counter"],
                              names={"zoe": "Zoë Zed"}, attention=attention, pairs=pairs, plots=False)


def column(driver, n: int) -> list[str]:
    from selenium.webdriver.common.by import By

    return [row.find_elements(By.TAG_NAME, "td")[n].text
            for row in driver.find_elements(By.CSS_SELECTOR, "table.students tbody tr")]


def test_the_report_loads_and_its_student_table_sorts(browser, report):
    from selenium.webdriver.common.by import By

    browser.get(report.as_uri())
    assert browser.title == "Demo: class report"
    heads = browser.find_elements(By.CSS_SELECTOR, "table.students thead th")
    assert [h.text for h in heads] == ["student", "name", "total", "status", "flags", "basics", "counter"]
    assert column(browser, 0) == ["ana", "bob", "cy", "zoe", "Émile O'Brien"]  # as written: by id
    heads[2].click()  # total, ascending
    totals = [float(t.split(" / ")[0]) for t in column(browser, 2)]
    assert totals == sorted(totals) and totals[0] < totals[-1]
    assert heads[2].get_attribute("aria-sort") == "ascending"
    heads[2].click()  # again: descending
    assert [float(t.split(" / ")[0]) for t in column(browser, 2)] == sorted(totals, reverse=True)
    heads[0].click()
    assert column(browser, 0) == ["ana", "bob", "cy", "Émile O'Brien", "zoe"]  # as people sort names
    heads[4].click()  # by flags: the late one and the similar pair come together
    assert "late" in " ".join(column(browser, 4))


def test_every_link_in_the_report_resolves(browser, report):
    from selenium.webdriver.common.by import By

    browser.get(report.as_uri())
    links = [(a.get_attribute("href"), a.text) for a in browser.find_elements(By.CSS_SELECTOR, "a[href]")]
    feedback = [(h, t) for h, t in links if "/feedback.html" in h]
    anchors = [h for h, _ in links if "#" in h]
    assert len(feedback) == 5 and anchors  # one per student, and the similar pair's
    for href in anchors:
        assert browser.find_elements(By.ID, href.split("#", 1)[1]), href
    for href, student in feedback:
        browser.get(href)
        assert browser.title == f"Feedback: {student}", href  # the page exists, and is that student's


def test_the_similar_pair_is_side_by_side_with_its_shared_code_marked_and_inert(browser, report):
    from selenium.webdriver.common.by import By

    browser.get(report.as_uri())
    section = browser.find_element(By.ID, "pair-1")
    assert section.text == "Pair 1: ana and zoe"
    sides = browser.find_elements(By.CSS_SELECTOR, ".pair .side")
    assert len(sides) == 2 and sides[0].location["y"] == sides[1].location["y"]  # side by side
    assert sides[0].location["x"] < sides[1].location["x"]
    marks = browser.find_elements(By.CSS_SELECTOR, ".pair mark")
    assert marks and any("untyped_storage" in m.text for m in marks)
    assert "window.pwned = 1" in sides[0].text  # shown as text ...
    assert browser.execute_script("return window.pwned === undefined")  # ... never run


def test_the_table_sorts_under_a_strict_content_security_policy(browser, report):
    """A server that forbids inline scripts (the submission service does) allows this one by its hash."""
    import functools
    import http.server
    import threading

    from selenium.webdriver.common.by import By

    from autograder.report.classreport import SCRIPT_CSP

    class Strict(http.server.SimpleHTTPRequestHandler):
        def end_headers(self):
            self.send_header("Content-Security-Policy",
                             f"default-src 'none'; script-src {SCRIPT_CSP}; style-src 'unsafe-inline'; img-src data:")
            super().end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Strict, directory=report.parent))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        browser.get(f"http://127.0.0.1:{server.server_port}/report.html")
        head = browser.find_elements(By.CSS_SELECTOR, "table.students thead th")[2]
        head.click()
        assert head.get_attribute("aria-sort") == "ascending"  # the script ran
        totals = [float(t.split(" / ")[0]) for t in column(browser, 2)]
        assert totals == sorted(totals)
    finally:
        server.shutdown()
