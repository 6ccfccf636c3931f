"""`torchgrader serve` as an LTI 1.3 tool, against a platform nobody here wrote (lti1p3platform, tests/service/lms.py).

The LMS runs on 127.0.0.2 (another site than the tool's 127.0.0.1), the tool is
a real `torchgrader serve` with real workers, and the browser is a real
Chromium with third-party cookies blocked. One server, one LMS and one browser
serve the whole module; the kill -9 test comes last and leaves a restarted
server behind.
"""

from __future__ import annotations

import re
import shutil
import time

import pytest

from tests.service.live import LiveServer

pytest.importorskip("lti1p3platform", reason="needs lti1p3platform (pip install -e '.[test]')")
httpx = pytest.importorskip("httpx")

from tests.service.lms import INSTRUCTOR, LEARNER, Lms, User  # noqa: E402

SMALL = "def shares_storage(a, b):\n    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()\n"
ASSIGNMENT = "pytorch-fundamentals"


@pytest.fixture(scope="module")
def lms_and_live(tmp_path_factory):
    root = tmp_path_factory.mktemp("lti")
    server = LiveServer(root)  # picks the tool's port: the LMS needs it, and the tool's config the LMS's
    lms = Lms(server.url)
    lms.users = {"stu1": User("s-1001", "Stu One", "stu1@x.edu", [LEARNER]),
                 "stu2": User("s-1002", "Stu Two", "stu2@x.edu", [LEARNER]),
                 "stu3": User("s-1003", "Stu Three", "stu3@x.edu", [LEARNER]),
                 "prof": User("t-9", "Pat Prof", "prof@x.edu", [INSTRUCTOR])}
    lms.roster = ["s-1001", "s-1002", "s-1003", "t-9"]
    with open(root / "service.toml", "a") as f:
        f.write(lms.config_toml())
    lms.start()
    server.start()
    yield lms, server
    server.stop()
    lms.stop()


@pytest.fixture(scope="module")
def lms(lms_and_live):
    return lms_and_live[0]


@pytest.fixture(scope="module")
def live(lms_and_live):
    return lms_and_live[1]


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        pytest.skip("needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)")
    pytest.importorskip("selenium", reason="needs selenium (pip install -e '.[test]')")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium")
    for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-proxy-server",
              "--window-size=1200,900", "--test-third-party-cookie-phaseout"):
        opts.add_argument(a)
    opts.add_experimental_option("prefs", {"profile.cookie_controls_mode": 1,
                                           "profile.block_third_party_cookies": True})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)
    yield driver
    driver.quit()


def _until(cond, timeout=120.0, step=0.2, driver=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = cond()
        if got:
            return got
        time.sleep(step)
    raise AssertionError("timed out" + (f" at {driver.current_url}: {_main(driver)[:800]}" if driver else ""))


def _count(live, table: str) -> int:
    with live.db() as db:
        return db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def _new_window(driver, before: set[str]) -> None:
    handle = _until(lambda: next(iter(set(driver.window_handles) - before), None), 30)
    driver.switch_to.window(handle)


def _main(driver) -> str:
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By

    try:
        return driver.find_element(By.TAG_NAME, "body").text
    except WebDriverException:
        return ""


# ---------------------------------------------------------------------- in the browser
def test_deep_linking_creates_the_line_item(lms, live, browser):
    """Staff pick the assignment in an LMS iframe that has no client-side storage: the tool opens in a window of
    its own, and its signed answer makes the LMS create the link and its gradebook column."""
    from selenium.webdriver.common.by import By

    browser.get(f"{lms.url}/course?user=prof&kind=deeplink&mode=iframe-nostorage")
    browser.switch_to.frame("tool")
    link = _until(lambda: browser.find_elements(By.ID, "lti-new-window"), 30)[0]
    before = set(browser.window_handles)
    link.click()
    _new_window(browser, before)
    _until(lambda: browser.find_elements(By.ID, "lti-choose"), 30, driver=browser)[0].click()
    _until(lambda: "link(s) added" in _main(browser), 30, driver=browser)
    (item,) = lms.lineitems.values()
    assert item["resourceId"] == ASSIGNMENT and item["label"] and item["scoreMaximum"] > 0
    (made,) = lms.links.values()
    assert made["custom"] == {"assignment": ASSIGNMENT} and made["lineitem"] == item["id"]


def test_a_student_clicks_the_link_submits_and_the_score_reaches_the_lms(lms, live, browser):
    """In the LMS's iframe with third-party cookies blocked: the state lives in the platform's storage
    (postMessage), the student opens torchgrader in a new window, signed in, submits; the score is posted."""
    from selenium.webdriver.common.by import By

    link = next(iter(lms.links))
    browser.switch_to.new_window("window")
    browser.get(f"{lms.url}/course?user=stu1&mode=iframe&link={link}")
    browser.switch_to.frame("tool")
    button = _until(lambda: browser.find_elements(By.ID, "lti-open"), 30, driver=browser)[0]
    before = set(browser.window_handles)
    button.click()
    _new_window(browser, before)
    _until(lambda: "Signed in as Stu One" in _main(browser), 30, driver=browser)
    path = live.root / "stu1.py"
    path.write_text(SMALL)
    browser.find_element(By.ID, "file-1").send_keys(str(path))
    browser.find_element(By.ID, "submit-1").click()
    _until(lambda: "/submissions/" in browser.current_url, 30)
    sid = browser.current_url.rsplit("/", 1)[1]
    with live.db() as db:
        person = db.execute("SELECT person FROM submissions WHERE id = ?", (sid,)).fetchone()[0]
        assert db.execute("SELECT name, email, role FROM people WHERE id = ?", (person,)).fetchone() == \
            ("Stu One", "stu1@x.edu", "student")

    def graded():
        return [s for s in lms.scores if s["userId"] == "s-1001" and s["gradingProgress"] == "FullyGraded"]
    (final,) = _until(graded, 240)
    with live.db() as db:
        total, maximum = db.execute("SELECT total, max_total FROM results WHERE submission = ? AND suites = "
                                    "'hidden'", (sid,)).fetchone()
    (item,) = lms.lineitems.values()
    assert final["lineitem"] == item["id"]
    assert final["scoreGiven"] == total and final["scoreMaximum"] == maximum and total > 0
    assert final["activityProgress"] == "Completed" and final["timestamp"]
    assert f"/submissions/{sid}" in final["comment"]
    mine = [s for s in lms.scores if s["userId"] == "s-1001"]
    assert mine[0]["gradingProgress"] == "Pending" and mine[0]["activityProgress"] == "Submitted", mine
    assert len({s["timestamp"] for s in mine}) == len(mine)  # nothing posted twice


def test_a_staff_launch_reaches_the_dashboard_and_syncs_the_roster(lms, live, browser):
    from selenium.webdriver.common.by import By

    browser.switch_to.new_window("window")
    browser.get(f"{lms.url}/course?user=prof&mode=window")
    before = set(browser.window_handles)
    browser.find_element(By.ID, "assignment-link").click()
    _new_window(browser, before)
    _until(lambda: browser.title.startswith("Staff dashboard"), 30, driver=browser)
    assert "scores: 1 sent" in browser.find_element(By.ID, "lms-summary").text  # the student's, from the test above

    def members():
        with live.db() as db:
            return dict(db.execute("SELECT p.name, m.status FROM lti_members m JOIN people p ON p.id = m.person"))
    _until(lambda: members().get("Stu Three") == "active", 30)  # never launched: added by the roster sync
    lms.roster.remove("s-1003")
    browser.get(live.url + "/staff")
    browser.find_element(By.CSS_SELECTOR, "button.lms-sync").click()  # on the dashboard itself
    _until(lambda: "marked left" in _main(browser), 30)
    assert members()["Stu Three"] == "left"
    browser.get(live.url + "/staff/lms")
    assert "left the course" in browser.find_element(By.ID, "lti-members").text
    assert "sent" in browser.find_element(By.ID, "lti-scores").text  # each score's state, with the LMS's answer
    with live.db() as db:
        assert db.execute("SELECT COUNT(*) FROM people WHERE name = 'Stu Three'").fetchone()[0] == 1
    # staff send an assignment's scores again: one new post per student, later than the last
    posted = [s for s in lms.scores if s["userId"] == "s-1001"]
    browser.find_element(By.CSS_SELECTOR, "form[action='/staff/lms/resend'] button").click()
    _until(lambda: "queued to be sent to the LMS again" in _main(browser), 30, driver=browser)
    again = _until(lambda: [s for s in lms.scores if s["userId"] == "s-1001"][len(posted):], 30)
    assert len(again) == 1 and again[0]["timestamp"] > posted[-1]["timestamp"]
    assert again[0]["scoreGiven"] == posted[-1]["scoreGiven"] and again[0]["gradingProgress"] == "FullyGraded"


# ---------------------------------------------------------------------- over HTTP: refusals and the outbox
def _no_cross_site_cookie(response):
    """The tool never sets a cookie a cross-site request would carry (SameSite=None)."""
    for cookie in response.headers.get_list("set-cookie"):
        assert re.search(r"samesite=(lax|strict)", cookie, re.I), cookie


def _launch(live, lms, user, client=None, *, kind="resource", link="link-1", finish=True, post=True):
    """A launch as a browser makes it, over HTTP: the LMS's login initiation, the tool's login (its binder cookie),
    the LMS's auth answer, the launch POST, then the finish POST from the tool's own page."""
    c = client or httpx.Client(timeout=30, event_hooks={"response": [_no_cross_site_cookie]})
    r = c.get(f"{lms.url}/start", params={"user": user, "kind": kind, "link": link})
    r = c.get(r.headers["location"])
    if r.status_code != 302:
        return c, r
    c.get(r.headers["location"])
    form = lms.launches[-1]
    if not post:
        return c, None
    r = c.post(f"{live.url}/lti/launch", data=form)
    if r.status_code != 200 or not finish:
        return c, r
    handle = re.search(r'name="handle" value="([^"]+)"', r.text).group(1)
    return c, c.post(f"{live.url}/lti/finish", data={"handle": handle}, headers={"Origin": live.url})


def _stored(live):
    return tuple(_count(live, t) for t in ("people", "lti_users", "sessions", "lti_members", "submissions"))


@pytest.mark.parametrize("tamper, status, words", [
    ({"foreign_key": True}, 401, "signature does not match"),
    ({"expired": True}, 401, "expired"),
    ({"aud": "another-tool"}, 401, "meant for another tool"),
    ({"deployment": "deployment-666"}, 403, "is not registered"),
    ({"target": None}, 403, "for course staff only"),
])
def test_a_forged_or_wrong_launch_is_refused_and_stores_nothing(lms, live, tamper, status, words):
    before = _stored(live)
    if "target" in tamper:
        tamper = {"target": f"{live.url}/staff"}
    lms.tamper = tamper
    try:
        _, r = _launch(live, lms, "stu2")
    finally:
        lms.tamper = {}
    assert r.status_code == status and words in r.text, r.text[-800:]
    assert "Nothing was stored" in r.text
    assert _stored(live) == before


def test_a_replayed_launch_and_a_foreign_state_are_refused(lms, live):
    c, r = _launch(live, lms, "stu2")
    assert r.status_code == 303, r.text
    replay = dict(lms.launches[-1])
    before = _stored(live)
    r = c.post(f"{live.url}/lti/launch", data=replay)  # the same id_token and state again
    assert r.status_code == 401 and "already used" in r.text
    # a fresh login's state with the old id_token: its nonce is not this login's
    _launch(live, lms, "stu2", c, post=False)
    r = c.post(f"{live.url}/lti/launch", data={"id_token": replay["id_token"], "state": lms.launches[-1]["state"]})
    assert r.status_code == 401 and "nonce" in r.text, r.text[-600:]
    r = c.post(f"{live.url}/lti/launch", data={"id_token": replay["id_token"], "state": "made-up"})
    assert r.status_code == 401 and "state does not match" in r.text
    # login CSRF: a launch started by another browser, finished in this one
    other = httpx.Client(timeout=30)
    _, started = _launch(live, lms, "stu2", other, finish=False)
    handle = re.search(r'name="handle" value="([^"]+)"', started.text).group(1)
    r = httpx.Client(timeout=30).post(f"{live.url}/lti/finish", data={"handle": handle},
                                      headers={"Origin": live.url})
    assert r.status_code == 401 and "another browser" in r.text
    # a form from another site cannot finish one either
    _, started = _launch(live, lms, "stu2", other, finish=False)
    handle = re.search(r'name="handle" value="([^"]+)"', started.text).group(1)
    r = other.post(f"{live.url}/lti/finish", data={"handle": handle}, headers={"Origin": lms.url})
    assert r.status_code == 403
    assert _stored(live) == before


def test_a_learner_asking_for_staff_pages_is_refused(lms, live):
    before = _stored(live)
    _, r = _launch(live, lms, "stu2", kind="deeplink")
    assert r.status_code == 403 and "for course staff only" in r.text
    assert _stored(live) == before
    c, r = _launch(live, lms, "stu2")
    assert r.status_code == 303 and r.headers["location"] == "/"
    r = c.get(f"{live.url}/staff")
    assert r.status_code == 403 and "course staff only" in r.text
    assert c.get(f"{live.url}/staff/lms").status_code == 403


def test_keys_registration_and_canvas_configuration(lms, live):
    jwks = httpx.get(f"{live.url}/lti/jwks.json").json()
    assert jwks["keys"] and all("d" not in k and k["kid"] for k in jwks["keys"])
    conf = httpx.get(f"{live.url}/lti/canvas.json").json()
    assert conf["oidc_initiation_url"] == f"{live.url}/lti/login" and conf["public_jwk_url"].endswith("/jwks.json")
    assert "LTI 1.3: Canvas configuration URL" in live.tail() and "/lti/register/" in live.tail()


def test_dynamic_registration_keeps_the_platform(lms, live):
    key = (live.data / "lti" / "registration-key").read_text().strip()
    conf = f"{lms.url}/.well-known/openid-configuration"
    assert httpx.get(f"{live.url}/lti/register/wrong-key", params={"openid_configuration": conf}).status_code == 404
    r = httpx.get(f"{live.url}/lti/register/{key}", params={"openid_configuration": conf,
                                                             "registration_token": "reg-token"}, timeout=30)
    assert r.status_code == 200 and "dynamic-client" in r.text, r.text[-600:]
    # the LMS opens this page as a popup or a frame: its close message needs window.opener, which a
    # same-origin opener policy would cut
    assert r.headers["cross-origin-opener-policy"] == "unsafe-none"
    (sent,) = lms.registrations
    assert sent["initiate_login_uri"] == f"{live.url}/lti/login" and sent["jwks_uri"] == f"{live.url}/lti/jwks.json"
    assert sent["redirect_uris"] == [f"{live.url}/lti/launch"]
    with live.db() as db:
        assert db.execute("SELECT client_id, deployment_ids FROM lti_platforms").fetchall() == [
            ("dynamic-client", '["dynamic-deployment"]')]


def test_scores_wait_while_the_lms_fails_or_hangs_and_survive_kill_9(lms, live):
    c, r = _launch(live, lms, "stu2", link=next(iter(lms.links)))
    assert r.status_code == 303, r.text
    csrf = re.search(r'name="csrf" value="([^"]+)"', c.get(f"{live.url}/").text).group(1)
    lms.ags = "fail"
    b = "tgb"
    body = (f'--{b}\r\nContent-Disposition: form-data; name="file"; filename="s.py"\r\n\r\n{SMALL}\r\n--{b}--\r\n')
    r = c.post(f"{live.url}/api/submissions", content=body.encode(),
               headers={"Content-Type": f"multipart/form-data; boundary={b}", "X-CSRF-Token": csrf})
    assert r.status_code == 202, r.text
    sid = r.json()["id"]
    _until(lambda: c.get(f"{live.url}/api/submissions/{sid}").json()["status"] == "graded", 240)

    def outbox(state):
        with live.db() as db:
            return db.execute("SELECT grading, answer, tries FROM lti_outbox o JOIN lti_users u ON u.person = o.person "
                              "WHERE u.sub = 's-1002' AND state = ? ORDER BY id DESC", (state,)).fetchall()
    got = _until(lambda: [r for r in outbox("failed") if r[0] == "FullyGraded" and r[2] >= 2], 60)
    assert "HTTP 500" in got[0][1]
    lms.ags = "hang"
    _until(lambda: any("timed out" in r[1] for r in outbox("failed")), 60)
    assert not [s for s in lms.scores if s["userId"] == "s-1002"]
    live.kill9()
    lms.hang.set()
    lms.ags = "ok"
    live.start(links=False)
    mine = _until(lambda: [s for s in lms.scores if s["userId"] == "s-1002" and s["gradingProgress"] ==
                           "FullyGraded"], 120)
    with live.db() as db:
        total = db.execute("SELECT total FROM results WHERE submission = ? AND suites = 'hidden'", (sid,)).fetchone()[0]
    time.sleep(2)  # a second post would come within the outbox's next rounds
    mine = [s for s in lms.scores if s["userId"] == "s-1002"]
    assert [s["gradingProgress"] for s in mine] == ["FullyGraded"] and mine[0]["scoreGiven"] == total
    assert outbox("sent") and not outbox("failed") and not outbox("pending")
