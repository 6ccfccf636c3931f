"""A real `torchgrader serve` on 127.0.0.1 (a free port), with real warm workers: started once, shared."""

from __future__ import annotations

import csv
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.helpers import ROOT

ROSTER = "id,name,email,role\nann,Ann Student,ann@x.edu,student\nben,Ben Student,ben@x.edu,student\n" \
         "cat,Cat Student,cat@x.edu,student\nprof,The Professor,prof@x.edu,staff\n"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LiveServer:
    def __init__(self, root: Path, config: str = "", *, course: Path = ROOT, grading: str = "") -> None:
        self.root = root
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.data = root / "data"
        (root / "roster.csv").write_text(ROSTER)
        (root / "service.toml").write_text(
            # three waiting submissions of one student: the kill -9 test queues them behind each other
            f'[server]\nport = {self.port}\n[grading]\ncourse = "{course}"\nworkers = 1\nstudent_queue_limit = 3\n'
            f'{grading}'
            f'[limits]\nsubmissions_per_minute = 100\n{config}')
        self.proc: subprocess.Popen | None = None
        self.tokens: dict[str, str] = {}

    def start(self, links: bool = True) -> None:
        argv = [sys.executable, "-c", "from autograder.cli import run; run()", "serve", "--config",
                str(self.root / "service.toml"), "--data", str(self.data), "--roster", str(self.root / "roster.csv")]
        if links:
            argv += ["--links", str(self.root / "links.csv")]
        self.log = open(self.root / "server.log", "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, cwd=self.root,
                                     start_new_session=True)
        if links:
            deadline = time.monotonic() + 60
            while not (self.root / "links.csv").exists() and time.monotonic() < deadline:
                time.sleep(0.2)
            with open(self.root / "links.csv") as f:
                self.tokens = {r["id"]: r["token"] for r in csv.DictReader(f)}
        try:
            self.wait_ready()
        except BaseException:  # a server that never got ready is stopped here: its test's finally never runs
            self.stop()
            raise

    def wait_ready(self, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc and self.proc.poll() is None, self.tail()
            try:
                with urllib.request.urlopen(self.url + "/healthz", timeout=5) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.5)
        raise AssertionError("the server never became ready:\n" + self.tail())

    def tail(self) -> str:
        try:
            return (self.root / "server.log").read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    def kill9(self) -> None:
        assert self.proc is not None
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        self.log.close()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
            self.log.close()

    def link(self, who: str) -> str:
        return f"{self.url}/signin?token={self.tokens[who]}"

    def api(self, path: str, who: str, data: bytes | None = None, headers: dict | None = None) -> tuple[int, Any]:
        req = urllib.request.Request(self.url + path, data=data, headers={
            "Authorization": f"Bearer {self.tokens[who]}", **(headers or {})})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                body = r.read()
                return r.status, json.loads(body) if r.headers.get_content_type() == "application/json" else body
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    def wait_status(self, sid: str, who: str, want: tuple[str, ...], timeout: float = 240) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            code, body = self.api(f"/api/submissions/{sid}", who)
            assert code == 200, body
            if body["status"] in want:
                return body
            time.sleep(0.3)
        raise AssertionError(f"{sid} never reached {want}:\n" + self.tail())

    def db(self) -> sqlite3.Connection:
        return sqlite3.connect(f"file:{self.data / 'service.sqlite'}?mode=ro", uri=True)

    def worker_pids(self) -> list[int]:
        """The service's grading workers: started by it, or forked for it by its sandbox server (whose
        children's command line is the server's; sandbox/zygote.py names them)."""
        children: dict[int, list[int]] = {}
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                children.setdefault(int(stat[1]), []).append(int(pid))
        out, todo = [], [self.proc.pid] if self.proc else []
        while todo:
            for pid in children.get(todo.pop(), []):
                todo.append(pid)
                try:
                    cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
                    comm = Path(f"/proc/{pid}/comm").read_text().strip()
                except OSError:
                    continue
                if b"autograder.batch.backends.worker" in cmd or comm == "tg-judge":
                    out.append(pid)
        return out


def multipart(name: str, data: bytes) -> tuple[bytes, dict[str, str]]:
    b = "tgtestboundary"
    body = (f'--{b}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n\r\n').encode() + data \
        + f"\r\n--{b}--\r\n".encode()
    return body, {"Content-Type": f"multipart/form-data; boundary={b}"}


def sign_in(client: Any, token: str) -> Any:
    """As a person's browser does (a TestClient or an httpx client): open the link, press its button."""
    import re

    page = client.get(f"/signin?token={token}")
    assert page.status_code == 200, page.text
    form = dict(re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', page.text))
    return client.post("/signin", data=form, follow_redirects=False)
