"""Build a wheel of the installed torchgrader package, with no build tools and no network.

``release`` ships it to students and ``export-gradescope`` to Gradescope's
image, so both install exactly the grader that staff validated with. The
wheel is pure Python (``py3-none-any``): the ``autograder`` package's files
(its modules and their data files), and metadata (name, version,
dependencies with their extras, the ``torchgrader`` command) taken from the
installed distribution, or from ``pyproject.toml`` when running from a source
tree.
"""

from __future__ import annotations

import base64
import hashlib
import tomllib
import zipfile
from pathlib import Path

import autograder

NAME = "torchgrader"
FALLBACK_REQUIRES = ["torch>=2.4", "numpy>=1.24", "nbformat>=5.7", "pytest>=8.0",
                     'scikit-learn>=1.3; extra == "data"']


def _metadata() -> tuple[str, list[str], list[str]]:
    """(version, Requires-Dist lines, extras)."""
    pyproject = Path(autograder.__file__).resolve().parent.parent / "pyproject.toml"
    if pyproject.is_file():  # a source tree: its pyproject is the truth
        project = tomllib.loads(pyproject.read_text()).get("project", {})
        requires = list(project.get("dependencies", []))
        extras = project.get("optional-dependencies", {})
        for extra, deps in extras.items():
            requires += [f'{d}; extra == "{extra}"' for d in deps]
        return str(project.get("version", "0.0.0")), requires, list(extras)
    try:
        from importlib.metadata import metadata

        md = metadata(NAME)
        return md["Version"], list(md.get_all("Requires-Dist") or []), list(md.get_all("Provides-Extra") or [])
    except Exception:  # noqa: BLE001 - not installed as a distribution: a sensible default
        return "0.0.0", FALLBACK_REQUIRES, ["data"]


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(dest_dir: Path) -> Path:
    """Write ``torchgrader-<version>-py3-none-any.whl`` into ``dest_dir``; returns its path."""
    version, requires, extras = _metadata()
    pkg = Path(autograder.__file__).resolve().parent
    dist_info = f"{NAME}-{version}.dist-info"
    files: list[tuple[str, bytes]] = []
    for p in sorted(pkg.rglob("*")):  # the modules and their data (the service's templates, the judge's tables)
        rel = p.relative_to(pkg)
        if not p.is_file() or p.suffix == ".pyc" or any(x == "__pycache__" or x.startswith(".") for x in rel.parts):
            continue
        files.append((f"autograder/{rel.as_posix()}", p.read_bytes()))
    meta = ["Metadata-Version: 2.1", f"Name: {NAME}", f"Version: {version}",
            "Summary: Autograding for PyTorch exercises: a trusted judge drives sandboxed student code.",
            "Requires-Python: >=3.11"]
    meta += [f"Provides-Extra: {e}" for e in extras]
    meta += [f"Requires-Dist: {r}" for r in requires]
    files.append((f"{dist_info}/METADATA", ("\n".join(meta) + "\n").encode()))
    files.append((f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: torchgrader\nRoot-Is-Purelib: true\n"
                                        b"Tag: py3-none-any\n"))
    files.append((f"{dist_info}/entry_points.txt", b"[console_scripts]\ntorchgrader = autograder.cli:main\n"))
    files.append((f"{dist_info}/top_level.txt", b"autograder\n"))
    record = [_record_line(n, d) for n, d in files] + [f"{dist_info}/RECORD,,"]
    files.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    dest_dir.mkdir(parents=True, exist_ok=True)
    path = dest_dir / f"{NAME}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, data)
    return path
