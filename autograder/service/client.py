"""Submitting to a course's torchgrader service: ``torchgrader submit`` and ``submit()`` in a notebook.

Standard library only (a student's machine needs nothing more than the
bundle's wheel). The token is the student's own: it is read from the
command line, ``TORCHGRADER_TOKEN``, or the token file on their machine
(``~/.config/torchgrader/tokens.json``, one per server, readable by them
only), never from the bundle, which is the same for the whole class.

Exit codes of ``torchgrader submit`` (:data:`EXIT`) are ``errors.Exit``'s,
listed in docs/errors.md: a refusal (too large, not a notebook, deadline,
attempt limit, busy), an unreachable server, a grader failure and a token
that is not valid each have their own.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from autograder.errors import Exit, ServiceUnreachable, SubmitError, SubmitRefused, SubmitUnauthorized, meaning
from autograder.printable import printable
from autograder.report.view import mark

# The exit codes are errors.Exit's (one table for every command; docs/errors.md).
EXIT = {"graded": Exit.OK, "accepted": Exit.OK, "refused": Exit.REFUSED, "unreachable": Exit.UNREACHABLE,
        "error": Exit.GRADER_FAILED, "unauthorized": Exit.UNAUTHORIZED}
TOKEN_FILE = Path("~/.config/torchgrader/tokens.json")


def _request(req: urllib.request.Request, timeout: float = 30.0) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - the course's own server
            return json.loads(resp.read().decode("utf-8"))
    except urllib.error.HTTPError as e:
        try:
            message = json.loads(e.read().decode("utf-8")).get("error", "")
        except (ValueError, AttributeError):
            message = ""
        refused = SubmitUnauthorized if e.code == 401 else SubmitRefused
        retry = e.headers.get("Retry-After")
        raise refused(f"the server refused it ({e.code}): {printable(message or e.reason)}",
                      int(retry) if retry and retry.isdigit() else None, e.code) from None
    except (urllib.error.URLError, OSError, ValueError) as e:
        reason = getattr(e, "reason", e)
        raise ServiceUnreachable(f"cannot reach the torchgrader server at {printable(req.full_url)} "
                                 f"({printable(reason)}): check the address, and that you are online") from None


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Accept": "application/json"}


def upload(path: Path, server: str, token: str, assignment: str | None = None) -> dict[str, Any]:
    """POST the file to ``/api/submissions``; the server's ``{id, status, url}``."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise SubmitRefused(f"cannot read {path}: {e.strerror}") from None
    boundary = "tg" + secrets.token_hex(12)
    parts = []
    if assignment:
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="assignment"\r\n\r\n{assignment}\r\n'
                     .encode())
    name = path.name.replace('"', "_").replace("\r", "_").replace("\n", "_")
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
                 f"Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n")
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    req = urllib.request.Request(server.rstrip("/") + "/api/submissions", data=body, method="POST",
                                 headers={**_auth(token), "Content-Type": f"multipart/form-data; boundary={boundary}"})
    return _request(req)


def upload_patiently(path: Path, server: str, token: str, assignment: str | None, say: Callable[[str], None],
                     patience: float = 3600.0) -> dict[str, Any]:
    """:func:`upload`, tried again while the grader is busy (503 with Retry-After), for up to ``patience`` s.

    In the last hour before a deadline the queue may be full for a minute; the file was not taken, and waiting
    the time the server names is what the student would do by hand.
    """
    end = time.monotonic() + patience
    while True:
        try:
            return upload(path, server, token, assignment)
        except SubmitRefused as e:
            if not e.busy or e.retry_after is None or time.monotonic() + e.retry_after > end:
                raise
            say(f"the grader is busy: trying again in {e.retry_after} s (nothing was submitted yet)")
            time.sleep(e.retry_after)


def status(server: str, token: str, sid: str, *, feedback: bool = False) -> dict[str, Any]:
    url = f"{server.rstrip('/')}/api/submissions/{urllib.parse.quote(sid, safe='')}" + ("?feedback=1" if feedback
                                                                                          else "")
    return _request(urllib.request.Request(url, headers=_auth(token)))


def wait(server: str, token: str, sid: str, on_change: Callable[[dict[str, Any]], None],
         timeout: float = 3600.0) -> dict[str, Any]:
    """Poll until graded or error (printing each change); the final status with its feedback."""
    last: tuple[Any, ...] = ()
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            s = status(server, token, sid)
        except SubmitRefused as e:  # busy for a moment (503 with Retry-After): the submission is still queued
            if not e.busy or e.retry_after is None:
                raise
            time.sleep(min(e.retry_after, max(0.0, end - time.monotonic())))
            continue
        key = (s.get("status"), s.get("position"))
        if key != last:
            on_change(s)
            last = key
        if s.get("status") in ("graded", "error"):
            return status(server, token, sid, feedback=True)
        time.sleep(_poll_interval(s))
    raise ServiceUnreachable(f"no result after {timeout:.0f} s; see {printable(server)}/submissions/"
                             f"{printable(sid)}")


def _poll_interval(s: dict[str, Any]) -> float:
    """The server's ``poll_s`` (less often far back in a long queue), within 0.5 to 10 s; 1 s from an older
    server that sends none."""
    hint = s.get("poll_s")
    return min(10.0, max(0.5, float(hint))) if isinstance(hint, int | float) and hint > 0 else 1.0


def describe(s: dict[str, Any]) -> str:
    """One status line; the server's words are shown escaped (a reply cannot drive the terminal)."""
    if s.get("status") == "queued" and s.get("position"):
        wait = s.get("wait_s")
        about = f", about {_duration(wait)} to wait" if isinstance(wait, int | float) and wait > 0 else ""
        why = f"; {printable(s['waiting_for'])}" if s.get("waiting_for") else ""
        return f"queued (place {printable(s['position'])} in the queue{about}{why})"
    return printable(s.get("status"))


def _duration(seconds: float) -> str:
    return f"{round(seconds)} s" if seconds < 90 else f"{round(seconds / 60)} min"


def summary(s: dict[str, Any]) -> str:
    """The feedback as lines, ending with ``SCORE / MAX points``.

    Every string of the reply is shown through :func:`printable`: a message can quote the student's own
    output, and no reply may clear the screen, move the cursor or overwrite a line (ESC, CSI, CR).
    """
    lines = _lines(s["note"]) if s.get("note") else []  # how it was graded, where not as asked (on CPU)
    for e in s.get("feedback", []):
        if "error" in e:
            lines += _lines(e["error"])
            continue
        lines.append(f"{printable(e['exercise'])}: {e['points']:g} / {e['max_points']:g}  {printable(e['title'])}")
        for c in e.get("causes", []):  # said once, for every test it cost
            lines.append(f"  {printable(c.get('heading', ''))}:")
            lines += [f"      {m}" for m in _lines(c.get("text", ""))[:8]]
            lines += [f"      - {printable(t)}" for t in c.get("tests", [])]
        for t in e["tests"]:
            if t["status"] != "passed":
                cause = t.get("cause") or 0
                ref = f": see problem {printable(cause)} above" if cause else ""
                lines.append(f"  [{printable(mark(str(t['status'])).word)}] {printable(t['name'])} "
                             f"({t['points']:g}/{t['max_points']:g}){ref}")
                lines += [f"      {m}" for m in _lines(t.get("own", "") if cause else t.get("message", ""))[:8]]
    if s.get("suites") == "public":
        lines.append("(the public tests; the hidden tests' results are shown after the deadline)")
    if s.get("score") is not None:
        lines.append(f"{s['score']:g} / {s['max_score']:g} points")
    return "\n".join(lines)


def _lines(text: Any) -> list[str]:
    """A multi-line message of the server's, escaped (a bare CR too), as lines."""
    return printable(str(text), lines=True).split("\n") if str(text) else []


# ---------------------------------------------------------------------- the student's token
def saved_token(server: str) -> str | None:
    try:
        return json.loads(TOKEN_FILE.expanduser().read_text()).get(server.rstrip("/"))
    except (OSError, ValueError, AttributeError):
        return None


def save_token(server: str, token: str) -> Path:
    path = TOKEN_FILE.expanduser()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        known = json.loads(path.read_text())
    except (OSError, ValueError):
        known = {}
    known[server.rstrip("/")] = token
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(known, f)
    return path


def token_from(text: str) -> str:
    """A token, or the sign-in link that carries one."""
    text = text.strip()
    if "token=" in text:
        return urllib.parse.parse_qs(urllib.parse.urlparse(text).query).get("token", [""])[0]
    return text


# ---------------------------------------------------------------------- in a notebook
def _notebook_path(given: str | None) -> Path | None:
    if given:
        return Path(given)
    ns = _ipython_namespace()
    for candidate in (os.environ.get("JPY_SESSION_NAME"), ns.get("__session__"), ns.get("__vsc_ipynb_file__")):
        if candidate and str(candidate).endswith(".ipynb") and Path(candidate).is_file():
            return Path(candidate)
    found = sorted(Path.cwd().glob("*.ipynb"))
    return found[0] if len(found) == 1 else None


def _ipython_namespace() -> dict[str, Any]:
    try:
        ip = get_ipython()  # type: ignore[name-defined]  # noqa: F821 - defined inside IPython only
        return dict(ip.user_ns)
    except NameError:
        return {}


def unsaved_cells(path: Path) -> int:
    """How many cells this kernel ran that the saved notebook does not contain (0 outside IPython)."""
    try:
        ip = get_ipython()  # type: ignore[name-defined]  # noqa: F821
        history = [h for h in ip.history_manager.input_hist_raw if h.strip()]
    except (NameError, AttributeError):
        return 0
    try:
        cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError):
        return 0
    saved = {"".join(c.get("source", "")).strip() for c in cells if c.get("cell_type") == "code"}
    return sum(h.strip() not in saved and "submit(" not in h for h in history)


def notebook_submit(notebook: str | None = None, *, server: str | None = None, token: str | None = None,
                    assignment: str | None = None, wait_for_grade: bool = True) -> dict[str, Any] | None:
    """What ``from autograder import submit; submit()`` does (see :func:`autograder.submit`)."""
    path = _notebook_path(notebook)
    if path is None:
        answer = input("Which notebook file should be submitted? (its path, e.g. pytorch-fundamentals.ipynb): ")
        path = Path(answer.strip())
    if not path.is_file():
        print(f"submit(): {path} is not a file: pass submit(notebook='your-notebook.ipynb')")
        return None
    if path.suffix == ".ipynb":
        try:
            meta = json.loads(path.read_text(encoding="utf-8")).get("metadata", {}).get("torchgrader", {})
        except (OSError, ValueError, AttributeError):
            meta = {}
        server = server or meta.get("server")
        assignment = assignment or meta.get("assignment")
    server = server or os.environ.get("TORCHGRADER_SERVER")
    if not server:
        print("submit(): this notebook does not name its course's server: pass submit(server='https://...') "
              "(the address is on your sign-in link)")
        return None
    n = unsaved_cells(path)
    if n:
        print(f"submit(): warning: {n} cell(s) you ran are not in the saved file; the SAVED file is what is "
              "submitted (File > Save first, then run submit() again if you want them in).")
    token = token or os.environ.get("TORCHGRADER_TOKEN") or saved_token(server)
    if not token:
        import getpass

        token = token_from(getpass.getpass("Your personal sign-in link or token (asked once, kept on this "
                                           "machine only): "))
        where = save_token(server, token)
        print(f"submit(): your token is kept in {where} (readable by you only)")
    try:
        got = upload(path, server, token, assignment)
        print(f"submit(): {printable(path.name)} accepted; feedback at {printable(got['url'])}")
        if not wait_for_grade:
            return got
        final = wait(server, token, got["id"], lambda s: print(f"submit(): {describe(s)}", flush=True))
    except SubmitError as e:
        print(f"submit(): {e.message}")
        return None
    print(summary(final))
    return final


# ---------------------------------------------------------------------- the command
def cmd_submit(args: Any) -> int:
    server = args.server or os.environ.get("TORCHGRADER_SERVER")
    if not server:
        print("torchgrader submit: pass --server URL (your course's torchgrader address) or set "
              "TORCHGRADER_SERVER", file=sys.stderr)
        return Exit.ERROR  # a missing option, not a refusal by the server (3)
    token = token_from(args.token or os.environ.get("TORCHGRADER_TOKEN") or saved_token(server) or "")
    if not token:
        print("torchgrader submit: pass --token TOKEN (from your sign-in link) or set TORCHGRADER_TOKEN",
              file=sys.stderr)
        return EXIT["unauthorized"]
    try:
        if args.wait:  # a busy grader is waited for, as the student would by hand
            got = upload_patiently(Path(args.file), server, token, args.assignment, lambda m: print(m, flush=True))
        else:
            got = upload(Path(args.file), server, token, args.assignment)
        print(f"accepted: {printable(got['id'])} ({printable(got['url'])})", flush=True)
        if not args.wait:
            return EXIT["accepted"]
        final = wait(server, token, got["id"], lambda s: print(describe(s), flush=True))
    except SubmitError as e:
        again = f" (retry in {e.retry_after} s)" if e.retry_after and f"{e.retry_after} s" not in e.message else ""
        print(f"torchgrader submit: {e.message}{again}", file=sys.stderr)  # the wait is said once
        return meaning(e).exit
    print(summary(final))
    return EXIT["error"] if final.get("status") == "error" else EXIT["graded"]


def add_submit_arguments(p: Any) -> None:
    p.add_argument("file", help="the notebook (.ipynb) or .py file to submit")
    p.add_argument("--server", help="the course's torchgrader address (default: $TORCHGRADER_SERVER)")
    p.add_argument("--token", help="your token, or your whole sign-in link (default: $TORCHGRADER_TOKEN, or the "
                                   "token saved by submit() in a notebook)")
    p.add_argument("--assignment", help="which assignment (default: the server's first)")
    p.add_argument("--wait", action="store_true", help="wait for the grade: print each status change, then the "
                                                       "feedback, ending with SCORE / MAX points")
    p.epilog = ("exit codes: 0 accepted (with --wait: graded), 2 a missing option (--server), 3 refused (the "
                "message says why), 4 server "
                "unreachable, 5 the grader failed on it (staff will grade it), 6 token not valid")
