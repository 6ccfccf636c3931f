"""The real server (`serve`: the same uvicorn settings, store and routes) with grading off, in a process of its
own: the web tier's defences are tested against it without warm workers (the queue only fills up)."""

from __future__ import annotations

import csv
import re
import resource
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import httpx

from tests.helpers import DEMO_COURSE
from tests.service.live import LiveServer

SERVE = ("import sys; from pathlib import Path; from autograder.service.config import load_config; "
         "from autograder.service.command import serve; "
         "serve(load_config(Path(sys.argv[1])), Path(sys.argv[2]), Path(sys.argv[3]), "
         "Path(sys.argv[4]) if len(sys.argv) > 4 else None, grade=False)")


class FrontServer(LiveServer):
    def __init__(self, root: Path, config: str = "", *, files: int | None = None, limits: str = "") -> None:
        super().__init__(root, config, course=DEMO_COURSE)
        self.files = files
        text = (root / "service.toml").read_text()
        if "submissions_per_minute" in limits:
            text = text.replace("submissions_per_minute = 100\n", "", 1)
        (root / "service.toml").write_text(text.replace("[limits]\n", f"[limits]\n{limits}", 1))

    def start(self, links: bool = True) -> None:
        argv = [sys.executable, "-c", SERVE, str(self.root / "service.toml"), str(self.data),
                str(self.root / "roster.csv")] + ([str(self.root / "links.csv")] if links else [])
        files = self.files

        def limit() -> None:
            if files:
                resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))
        self.log = open(self.root / "server.log", "ab")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, cwd=self.root,
                                     start_new_session=True, preexec_fn=limit)
        if links:
            deadline = time.monotonic() + 60
            while not (self.root / "links.csv").exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            with open(self.root / "links.csv") as f:
                self.tokens = {r["id"]: r["token"] for r in csv.DictReader(f)}
        try:
            self.wait_ready()
        except BaseException:
            self.stop()
            raise

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc and self.proc.poll() is None, self.tail()
            try:
                with urllib.request.urlopen(self.url + "/", timeout=5) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.2)
        raise AssertionError("the server never answered:\n" + self.tail())

    def peak_rss(self) -> int:
        """The server's peak resident memory so far (bytes), as the kernel counts it."""
        assert self.proc is not None
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(re.search(r"VmHWM:\s+(\d+) kB", status).group(1)) * 1024

    def browser(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, follow_redirects=False, timeout=30)

    def bearer(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}
