"""`torchgrader submit` against a real HTTP server on loopback whose replies carry terminal controls.

The server is a stand-in for a hostile or broken one (or a message quoting a student's own output):
whatever it answers, the command prints it escaped (:func:`autograder.printable.printable`), so no
reply can clear the screen (ESC [2J), start a C1 control sequence (CSI, \\x9b) or overwrite the line a
person is reading (a bare CR).
"""

from __future__ import annotations

import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from autograder.service.client import EXIT, cmd_submit

NASTY = "\x1b[2J\x1b]8;;http://evil/\x07\x9b31m over\rwritten\x1b[0m"


class Handler(BaseHTTPRequestHandler):
    refuse = False

    def log_message(self, *args):  # quiet
        pass

    def _json(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        if getattr(self.server, "busy", 0):  # the queue is full: 503 with Retry-After, as the service says it
            self.server.busy -= 1
            data = json.dumps({"error": "the grader is busy, try again in 1 s (nothing was submitted)"}).encode()
            self.send_response(503)
            self.send_header("Retry-After", "1")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif getattr(self.server, "cooldown", False):
            data = json.dumps({"error": "the next attempt is possible in 36 s (a cooldown of 1 min between "
                                        "attempts)"}).encode()
            self.send_response(429)
            self.send_header("Retry-After", "36")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        elif self.server.refuse:
            self._json(400, {"error": f"not a notebook: {NASTY}"})
        else:
            self._json(202, {"id": f"s1{NASTY}", "status": "queued", "url": f"http://x/{NASTY}"})

    def do_GET(self):
        if getattr(self.server, "busy_polls", 0):  # every connection of the class's address in use: the
            self.server.busy_polls -= 1  # connection cap's 503 (serving.BUSY), plain text with Retry-After
            data = b"the server is busy: try again in a few seconds\n"
            self.send_response(503)
            self.send_header("Retry-After", "1")
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        feedback = "feedback=1" in self.path
        body = {"id": "s1", "status": "graded", "score": 1, "max_score": 2, "position": 0, "suites": "hidden"}
        if feedback:
            body["feedback"] = [{"exercise": f"ex{NASTY}", "title": f"T{NASTY}", "points": 1, "max_points": 2,
                                 "tests": [{"name": f"test{NASTY}", "status": "failed", "points": 0,
                                            "max_points": 1, "message": f"expected 3\nyou printed {NASTY}"}]},
                                {"error": f"line one\r\nline two {NASTY}"}]
        self._json(200, body)


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.refuse = False
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _run(server, tmp_path, wait):
    f = tmp_path / "mine.py"
    f.write_text("x = 1\n")
    args = argparse.Namespace(file=str(f), server=f"http://127.0.0.1:{server.server_address[1]}", token="t",
                              assignment=None, wait=wait)
    return cmd_submit(args)


def _no_controls(text):
    assert not [c for c in text if (ord(c) < 32 and c not in "\n") or 0x7f <= ord(c) <= 0x9f], repr(text)


def test_every_reply_is_printed_escaped(server, tmp_path, capsys):
    assert _run(server, tmp_path, wait=True) == EXIT["graded"]
    out = capsys.readouterr()
    _no_controls(out.out + out.err)
    assert "\\x1b[2J" in out.out and "\\x9b31m" in out.out and "over\\rwritten" in out.out
    assert "you printed" in out.out and "line two" in out.out  # the messages are all there, as text
    assert out.out.rstrip().endswith("1 / 2 points")


def test_a_refusal_is_printed_escaped(server, tmp_path, capsys):
    server.refuse = True
    assert _run(server, tmp_path, wait=False) == EXIT["refused"]
    err = capsys.readouterr().err
    _no_controls(err)
    assert "not a notebook: \\x1b[2J" in err and "over\\rwritten" in err


def test_submit_wait_waits_out_a_busy_grader_and_without_wait_says_when_to_retry(server, tmp_path, capsys):
    server.busy = 2
    assert _run(server, tmp_path, wait=True) == EXIT["graded"]
    out = capsys.readouterr().out
    assert out.count("the grader is busy: trying again in 1 s") == 2 and "accepted" in out
    server.busy = 1
    assert _run(server, tmp_path, wait=False) == EXIT["refused"]
    assert "(503): the grader is busy" in capsys.readouterr().err and server.busy == 0


def test_submit_wait_polls_through_a_busy_server(server, tmp_path, capsys):
    """A 503 with Retry-After while polling (the connection cap of a class behind one address) is waited out:
    the submission is in the queue, and the student gets its feedback, not an error."""
    server.busy_polls = 2
    assert _run(server, tmp_path, wait=True) == EXIT["graded"]
    assert server.busy_polls == 0 and capsys.readouterr().out.rstrip().endswith("1 / 2 points")


def test_submit_wait_says_a_shared_cause_once_and_an_old_client_still_reads_every_message():
    """The service's summary is rendered from the one view-model; ``message`` stays whole for older clients."""
    from autograder.report.view import view
    from autograder.service.client import summary
    from autograder.service.web.api import summary as service_summary
    from tests.report.test_view import STUB, fixture

    r = fixture()
    feedback = json.loads(json.dumps(service_summary(r)))
    shown = summary({"feedback": feedback, "score": r.total, "max_score": r.max_total})
    for c in view(r).all_causes:
        assert shown.count(c.text) == 1, c.text
    assert "[ERROR] g works (0/1): see problem" in shown and "[GRADER ERROR] the grader" in shown
    assert sum(t["message"] == STUB for e in feedback if "tests" in e for t in e["tests"]) == 3
    _no_controls(shown)


def test_the_cooldown_wait_is_said_once(server, tmp_path, capsys):
    server.cooldown = True
    assert _run(server, tmp_path, wait=False) == EXIT["refused"]
    err = capsys.readouterr().err
    assert "possible in 36 s" in err and err.count("36 s") == 1


def test_submit_without_a_server_is_a_missing_option_not_a_refusal(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("TORCHGRADER_SERVER", raising=False)
    f = tmp_path / "mine.py"
    f.write_text("x = 1\n")
    args = argparse.Namespace(file=str(f), server=None, token="t", assignment=None, wait=False)
    assert cmd_submit(args) == 2 != EXIT["refused"]
    assert "pass --server URL" in capsys.readouterr().err
