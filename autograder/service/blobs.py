"""Submission files, stored by the SHA-256 of their bytes: written once, never modified, never named by a student.

A file is written aside, flushed to disk and renamed into place before the
store records the submission, so an accepted submission's bytes survive a
``kill -9`` or a power cut. Two identical uploads share one file (they are
still two attempts in the store).
"""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path


class Blobs:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def path(self, sha256: str) -> Path:
        if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
            raise ValueError("not a sha256 digest")
        return self.root / sha256[:2] / sha256

    def put(self, data: bytes) -> str:
        """Store ``data`` durably; returns its sha256."""
        digest = hashlib.sha256(data).hexdigest()
        dest = self.path(digest)
        if self.damaged(digest) is None:
            return digest  # the same bytes are stored already (a damaged copy is written again below)
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{digest}.{secrets.token_hex(4)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, dest)
        finally:
            tmp.unlink(missing_ok=True)
        dfd = os.open(dest.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)  # the rename itself is durable
        finally:
            os.close(dfd)
        return digest

    def get(self, sha256: str) -> bytes:
        return self.path(sha256).read_bytes()

    def damaged(self, sha256: str) -> str | None:
        """Why the stored file is not the submission of that digest (missing, or other bytes), or None.

        A grade must be of the bytes the student uploaded: the file is read
        again and hashed before it is graded, and before an identical upload
        is taken as stored already (a disk that lost or changed it is never
        trusted for a second student either).
        """
        try:
            data = self.path(sha256).read_bytes()
        except OSError as e:
            return f"the stored file of submission {sha256[:12]} cannot be read ({e.strerror or e})"
        if hashlib.sha256(data).hexdigest() != sha256:
            return f"the stored file of submission {sha256[:12]} is not the file that was uploaded (its bytes changed)"
        return None
