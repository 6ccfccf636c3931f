"""The tool's own signing keys: made at first start in the data folder, published at the JWKS URL, rotatable.

The platform checks what the tool signs (the deep-linking response, the client
assertion of each service token) against the tool's JWKS URL, picking the key
by ``kid``. Rotation makes a new key the signing one and keeps the previous
key published (a platform that cached the old set still finds both); older
keys are dropped. The file holds private keys: it is written 0600, replaced
atomically.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey

from autograder.errors import ConfigError

KEEP = 2  # the signing key and the one before it are published


class ToolKeys:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self.keys: list[RSAKey] = []  # newest (the signing key) first
        if self.path.exists():
            try:
                data = json.loads(self.path.read_text())
                self.keys = [RSAKey.import_key(k) for k in data["keys"]]
            except (OSError, ValueError, KeyError, TypeError) as e:
                raise ConfigError(f"{self.path}: the tool's LTI signing keys cannot be read ({e}); restore the file "
                                  "from a backup, or move it away to make a new key (then register the tool's "
                                  "JWKS URL again where the LMS keeps a copy)") from None
        if not self.keys:
            self.rotate()

    @staticmethod
    def _new() -> RSAKey:
        return RSAKey.generate_key(2048, parameters={"use": "sig", "alg": "RS256"}, auto_kid=True)

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump({"keys": [k.as_dict(private=True) for k in self.keys]}, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)

    def rotate(self) -> str:
        """Make a new signing key (the previous one stays published); returns the new key's ``kid``."""
        with self._lock:
            self.keys = [self._new(), *self.keys][:KEEP]
            self._save()
            return str(self.keys[0].kid)

    @property
    def kid(self) -> str:
        return str(self.keys[0].kid)

    def public_jwks(self) -> dict[str, Any]:
        return {"keys": [k.as_dict(private=False) for k in self.keys]}

    def sign(self, claims: dict[str, Any]) -> str:
        key = self.keys[0]
        return jwt.encode({"alg": "RS256", "typ": "JWT", "kid": key.kid}, claims, KeySet([key]))
