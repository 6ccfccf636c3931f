"""A new course's first start: whoever starts the service has a staff way in, and a roster without staff says so.

``prepare_people`` is what ``torchgrader serve`` runs before it listens; the sign-in exchange and the
landing pages go through the real app (Starlette's TestClient, no workers).
"""

from __future__ import annotations

import csv
import io
import re

import pytest
from starlette.testclient import TestClient

from autograder.errors import RosterError
from autograder.service.command import open_service, prepare_people
from autograder.service.config import Policy, ServiceConfig
from autograder.service.web.app import build_app
from tests.helpers import DEMO_COURSE
from tests.service.live import sign_in


@pytest.fixture
def svc(tmp_path):
    return open_service(ServiceConfig(assignments=[Policy("demo")], course=DEMO_COURSE), tmp_path / "data")


def _run(svc, roster=None, links=None, staff_link=None):
    out, err = io.StringIO(), io.StringIO()
    prepare_people(svc, roster, links, out=out, staff_link=staff_link, err=err)
    return out.getvalue(), err.getvalue()


def test_a_roster_without_staff_warns_and_says_what_to_do(svc, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name,email\ns1,Ann,ann@x.edu\ns2,Bo,bo@x.edu\ns3,Cy,cy@x.edu\n")
    out, err = _run(svc, roster, tmp_path / "links.csv")
    assert "sign-in links for 3 people (0 staff)" in out
    assert "roster.csv has no staff" in err and "nobody can open the staff dashboard" in err
    assert "role staff" in err and "--staff-link YOUR_ID" in err
    # the advice works: the same roster with --staff-link adds the starter as staff and prints their link
    out, err = _run(svc, roster, None, staff_link="ta1")
    assert err == "" and re.search(r"staff link \(ta1, ta1\): http://\S+/signin\?token=\S+", out)
    assert svc.store.person("ta1").staff


def test_staff_link_without_an_id_prints_every_staff_members_link(svc, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name,email,role\ns1,Ann,ann@x.edu,student\nt1,Tim,tim@x.edu,staff\n"
                      "t2,Tia,tia@x.edu,staff\n")
    out, err = _run(svc, roster, tmp_path / "links.csv", staff_link="")
    assert err == "" and "(2 staff)" in out
    assert re.findall(r"staff link \((\w+), (\w+)\)", out) == [("Tim", "t1"), ("Tia", "t2")]
    rows = list(csv.DictReader((tmp_path / "links.csv").open()))
    assert sorted(r["role"] for r in rows) == ["staff", "staff", "student"]
    with pytest.raises(RosterError, match="s1 is on the roster as a student"):
        _run(svc, roster, None, staff_link="s1")
    assert not svc.store.person("s1").staff


def test_a_roster_with_staff_and_no_links_says_how_to_get_them(svc, tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name,email,role\ns1,Ann,ann@x.edu,student\nt1,Tim,tim@x.edu,staff\n")
    out, err = _run(svc, roster)
    assert err == "" and "2 people on the roster (1 staff)" in out and "--staff-link" in out


def test_staff_land_on_the_dashboard_and_students_on_their_assignments(svc):
    svc.store.put_person("ta", "Tess", "t@x.edu", "staff")
    svc.store.put_person("alice", "Alice", "a@x.edu", "student")
    with TestClient(build_app(svc, grade=False)) as c:
        r = sign_in(c, svc.store.issue_token("ta", 1))
        assert r.status_code == 303 and r.headers["location"] == "/staff"
        home = c.get("/", follow_redirects=False)
        assert home.status_code == 303 and home.headers["location"] == "/staff"
        assert "Staff dashboard" in c.get("/").text and "Submit for grading" not in c.get("/").text
    with TestClient(build_app(svc, grade=False)) as c:
        r = sign_in(c, svc.store.issue_token("alice", 1))
        assert r.status_code == 303 and r.headers["location"] == "/"
        assert "Submit for grading" in c.get("/").text


def test_a_page_without_a_session_speaks_to_a_person_and_the_api_to_a_program(svc):
    with TestClient(build_app(svc, grade=False)) as c:
        page = c.get("/staff")
        assert page.status_code == 401 and "not signed in" in page.text and "sign-in link" in page.text
        assert "Bearer" not in page.text
        api = c.get("/api/submissions")
        assert api.status_code == 401 and "Authorization: Bearer TOKEN" in api.json()["error"]
