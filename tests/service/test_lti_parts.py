"""The LTI parts that need no LMS: the config section, the tool's keys, the roles, the store's migration."""

from __future__ import annotations

import sqlite3
import time

import pytest

pytest.importorskip("joserfc", reason="needs joserfc (pip install -e '.[serve]')")

from autograder.errors import (
    ConfigError,  # noqa: E402
    LaunchRefused,  # noqa: E402
)
from autograder.service.config import parse_config  # noqa: E402
from autograder.service.lti.keys import ToolKeys  # noqa: E402
from autograder.service.lti.tables import LtiTables  # noqa: E402
from autograder.service.lti.verify import PlatformKeys, role_of, verify_id_token  # noqa: E402
from autograder.service.store import ServiceStore  # noqa: E402

PLATFORM = {"name": "canvas", "issuer": "https://canvas.instructure.com", "client_id": "100",
            "auth_login_url": "https://sso.canvaslms.com/api/lti/authorize_redirect",
            "auth_token_url": "https://sso.canvaslms.com/login/oauth2/token",
            "jwks_url": "https://sso.canvaslms.com/api/lti/security/jwks", "deployment_ids": ["1:abc"]}


def test_the_lti_section_is_checked_key_by_key():
    cfg = parse_config({"lti": {"platforms": [PLATFORM], "http_timeout": 5}})
    (p,) = cfg.lti.platforms
    assert p.deployment_ids == ("1:abc",) and cfg.lti.http_timeout == 5.0
    with pytest.raises(ConfigError, match="missing jwks_url"):
        parse_config({"lti": {"platforms": [{k: v for k, v in PLATFORM.items() if k != "jwks_url"}]}})
    with pytest.raises(ConfigError, match="unknown key.*colour"):
        parse_config({"lti": {"platforms": [PLATFORM | {"colour": "red"}]}})
    with pytest.raises(ConfigError, match="deployment_ids"):
        parse_config({"lti": {"platforms": [PLATFORM | {"deployment_ids": []}]}})
    with pytest.raises(ConfigError, match="auth_token_url must be an http"):
        parse_config({"lti": {"platforms": [PLATFORM | {"auth_token_url": "ftp://x"}]}})


def test_roles_map_to_student_and_staff():
    lis = "http://purl.imsglobal.org/vocab/lis/v2/membership"
    assert role_of([f"{lis}#Learner"]) == "student"
    assert role_of([f"{lis}#Instructor"]) == role_of([f"{lis}/Instructor#TeachingAssistant"]) == "staff"
    assert role_of(["ContentDeveloper"]) == "staff" and role_of([f"{lis}#Mentor"]) is None
    teaches_elsewhere = ["http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor", f"{lis}#Learner"]
    assert role_of(teaches_elsewhere) == "student"


def test_the_tool_key_is_made_once_kept_and_rotated(tmp_path):
    keys = ToolKeys(tmp_path / "lti" / "tool-keys.json")
    first = keys.kid
    assert (tmp_path / "lti" / "tool-keys.json").stat().st_mode & 0o777 == 0o600
    assert ToolKeys(tmp_path / "lti" / "tool-keys.json").kid == first  # the same key after a restart
    second = keys.rotate()
    published = [k["kid"] for k in keys.public_jwks()["keys"]]
    assert published == [second, first] and all("d" not in k for k in keys.public_jwks()["keys"])
    keys.rotate()
    assert first not in [k["kid"] for k in keys.public_jwks()["keys"]]


def test_an_existing_data_folder_gets_the_lti_tables_and_keeps_its_rows(tmp_path):
    store = ServiceStore(tmp_path / "service.sqlite")
    store.put_person("ann", "Ann", "ann@x.edu")
    store.close()
    store = ServiceStore(tmp_path / "service.sqlite")
    LtiTables(store)
    LtiTables(store)  # a second start applies nothing twice
    db = sqlite3.connect(tmp_path / "service.sqlite")
    assert db.execute("SELECT value FROM meta WHERE key = 'lti_schema'").fetchone() == ("1",)
    assert db.execute("SELECT name FROM people").fetchall() == [("Ann",)]
    assert db.execute("SELECT COUNT(*) FROM lti_outbox").fetchone() == (0,)


def test_a_token_from_a_rotated_platform_key_is_fetched_again(tmp_path, monkeypatch):
    """The platform's JWKS is cached; a token naming a kid the cache lacks reads the set again (rotation)."""
    from autograder.service.lti import verify

    old, new = ToolKeys(tmp_path / "a.json"), ToolKeys(tmp_path / "b.json")
    served = {"set": old.public_jwks()}
    fetched = []
    monkeypatch.setattr(verify, "fetch_json", lambda url, timeout: fetched.append(url) or served["set"])
    monkeypatch.setattr(verify, "REFETCH_SECONDS", 0.0)
    from autograder.service.lti.config import Platform

    p = Platform("lms", "https://lms", "c1", "https://lms/auth", "https://lms/token", "https://lms/jwks", ("d1",))
    now = int(time.time())
    claims = {"iss": "https://lms", "aud": "c1", "sub": "u1", "iat": now, "exp": now + 60, "nonce": "n1",
              "https://purl.imsglobal.org/spec/lti/claim/version": "1.3.0",
              "https://purl.imsglobal.org/spec/lti/claim/message_type": "LtiResourceLinkRequest",
              "https://purl.imsglobal.org/spec/lti/claim/deployment_id": "d1"}
    keys = PlatformKeys(5)
    assert verify_id_token(old.sign(claims), lambda i, a: p, keys, lambda i: "n1").sub == "u1"
    served["set"] = new.public_jwks()  # the platform rotated
    assert verify_id_token(new.sign(claims), lambda i, a: p, keys, lambda i: "n1").sub == "u1"
    assert len(fetched) == 2
    with pytest.raises(LaunchRefused, match="signature"):  # the old key is gone from the platform's set
        verify_id_token(old.sign(claims), lambda i, a: p, keys, lambda i: "n1")


def test_the_lti_config_in_the_docs_is_the_one_the_service_reads():
    import re
    import tomllib

    from tests.helpers import ROOT

    text = (ROOT / "docs" / "service.md").read_text()
    (block,) = [b for b in re.findall(r"```toml\n(.*?)```", text, re.S) if "[[lti.platforms]]" in b]
    cfg = parse_config(tomllib.loads(block))
    assert [p.name for p in cfg.lti.platforms] == ["canvas"] and cfg.lti.retry_max_seconds == 300


def test_the_lms_pages_origin_may_frame_the_launch():
    cfg = parse_config({"lti": {"platforms": [PLATFORM | {"frame_origins": ["https://school.instructure.com/"]}]}})
    (p,) = cfg.lti.platforms
    assert p.origins() == ["https://canvas.instructure.com", "https://sso.canvaslms.com",
                           "https://school.instructure.com"]
    assert p.auth_origin == "https://sso.canvaslms.com"  # Canvas's storage frame answers from its login host


@pytest.mark.parametrize("change, words", [
    ({"aud": ["c1", "other"]}, "authorized party"),  # several audiences and no azp
    ({"azp": "other"}, "authorized party"),
    ({"iat": int(time.time()) + 3600}, "issued at a time"),
    # exp far ahead: the parameters are made at collection, which may come minutes before the test runs
    ({"iat": int(time.time()) - 3600, "exp": int(time.time()) + 7200}, "issued at a time"),
    ({"https://purl.imsglobal.org/spec/lti/claim/version": "1.1"}, "version"),
    ({"https://purl.imsglobal.org/spec/lti/claim/message_type": "LtiSubmissionReviewRequest"}, "message type"),
    ({"nonce": "n2"}, "nonce"),
    ({"sub": ""}, "names no user"),
])
def test_each_claim_is_checked(tmp_path, monkeypatch, change, words):
    from autograder.service.lti import verify
    from autograder.service.lti.config import Platform

    keys = ToolKeys(tmp_path / "k.json")
    monkeypatch.setattr(verify, "fetch_json", lambda url, timeout: keys.public_jwks())
    p = Platform("lms", "https://lms", "c1", "https://lms/auth", "https://lms/token", "https://lms/jwks", ("d1",))
    now = int(time.time())
    claims = {"iss": "https://lms", "aud": "c1", "sub": "u1", "iat": now, "exp": now + 60, "nonce": "n1",
              "https://purl.imsglobal.org/spec/lti/claim/version": "1.3.0",
              "https://purl.imsglobal.org/spec/lti/claim/message_type": "LtiResourceLinkRequest",
              "https://purl.imsglobal.org/spec/lti/claim/deployment_id": "d1"}
    assert verify_id_token(keys.sign(claims), lambda i, a: p, PlatformKeys(5), lambda i: "n1").sub == "u1"
    with pytest.raises(LaunchRefused, match=words):
        verify_id_token(keys.sign(claims | change), lambda i, a: p, PlatformKeys(5), lambda i: "n1")


def test_the_outbox_queues_each_change_of_the_counting_score_once(tmp_path):
    """A grade, then nothing new (no second row), then staff's adjustment: a new row with the adjusted score."""
    from autograder.service.config import Policy, ServiceConfig
    from autograder.service.ledger import Ledger
    from autograder.service.lti.outbox import Outbox

    store = ServiceStore(tmp_path / "s.sqlite")
    tables = LtiTables(store)
    tables.upsert_person("https://lms", "u-1", "lms-u-1", "Ann", "ann@x.edu", "student")
    tables.put_context("https://lms", "c1", "client", "d1", "Course", "", "https://lms/lineitems", [])
    tables.put_member("https://lms", "c1", "lms-u-1", "student")
    tables.put_lineitem("https://lms", "c1", "a", "https://lms/lineitems/1")
    sid = store.add_submission("lms-u-1", "a", "0" * 64, "py", "x.py", 10, 0, ["hidden"])
    outbox = Outbox(ServiceConfig(assignments=[Policy("a")]), store, tables, None, lambda i, c: None,  # type: ignore[arg-type]
                    lambda a: ("A", 10.0), "https://grader")
    assert outbox.sweep() == 1 and tables.all_scores()[-1].grading == "Pending"
    result = {"submission": sid, "path": "x", "assignment": "a", "status": "graded",
              "exercises": [{"id": "e", "title": "E", "max_points": 10,
                             "tests": [{"nodeid": "t", "name": "t", "exercise": "e", "max_points": 10, "points": 7,
                                        "status": "failed", "message": "m"}]}]}
    store.finish(store.claim("a", "w").id, result, "v1")
    assert outbox.sweep() == 1 and outbox.sweep() == 0
    last = tables.all_scores()[-1]
    assert (last.score_given, last.score_maximum, last.grading, last.activity) == (7.0, 10.0, "FullyGraded",
                                                                                   "Completed")
    assert f"https://grader/submissions/{sid}" in last.comment and last.sub == "u-1"
    assert [s.state for s in tables.all_scores()] == ["superseded", "pending"]  # the unsent Pending is not posted
    Ledger(store).adjust(sid, "e", "add", 2.0, "graded by hand", "ta", "7", "9")
    assert outbox.sweep() == 1 and tables.all_scores()[-1].score_given == 9.0
