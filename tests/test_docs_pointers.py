"""The docs point at things that exist: files they name, and every environment variable the code reads.

A doc that names a moved test file, or a variable nobody documented, misleads exactly the
newcomer who reads it; these checks fail as soon as the code and the page part ways.
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers import ROOT

ENV_PAGE = ROOT / "docs/environment.md"
CODE_DIRS = ["autograder", "tests", "benchmarks", "docker", "scripts", "solutions", "assignments"]
ENV_VAR = re.compile(r"\bTORCHGRADER_[A-Z][A-Z0-9_]*\b")
# a repository path as docs and docstrings write it: tests/x/y.py, docs/z.md, docker/cpu/Dockerfile ...
PATH_REF = re.compile(
    r"(?<![\w./-])((?:tests|autograder|docs|benchmarks|docker|scripts)/[A-Za-z0-9_./-]*[A-Za-z0-9_](?:\.py|\.md|\.toml|\.sh|/Dockerfile))"
)
PLACEHOLDER = re.compile(r"\.\.\.|<|\bID\b|\bEXERCISE\b|\bNAME\b")


def _files(dirs: list[str], suffixes: tuple[str, ...]) -> list[Path]:
    out: list[Path] = []
    for d in dirs:
        base = ROOT / d
        if base.is_dir():
            out += [p for p in base.rglob("*") if p.is_file() and (p.suffix in suffixes or p.name == "Dockerfile")]
    return out


def _code_env_vars() -> set[str]:
    found: set[str] = set()
    for p in _files(CODE_DIRS, (".py", ".sh", ".toml")):
        if p.resolve() == Path(__file__).resolve():
            continue
        found |= set(ENV_VAR.findall(p.read_text(errors="replace")))
    run = ROOT / ".ci/run"
    if run.exists():
        found |= set(ENV_VAR.findall(run.read_text()))
    return found


def _documented_env_vars() -> set[str]:
    rows = [line for line in ENV_PAGE.read_text().splitlines() if line.startswith("| `TORCHGRADER_")]
    return {ENV_VAR.search(r).group(0) for r in rows if ENV_VAR.search(r)}  # type: ignore[union-attr]


def test_every_environment_variable_the_code_reads_is_on_the_one_page():
    code, documented = _code_env_vars(), _documented_env_vars()
    assert code, "the scan found no TORCHGRADER_ variable at all: the pattern is broken"
    assert not code - documented, f"read in the code but missing from docs/environment.md: {sorted(code - documented)}"
    assert not documented - code, f"documented in docs/environment.md but read nowhere: {sorted(documented - code)}"


def test_no_other_doc_documents_variables_the_page_does_not():
    documented = _documented_env_vars()
    for doc in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        stray = set(ENV_VAR.findall(doc.read_text())) - documented
        assert not stray, f"{doc.relative_to(ROOT)} names {sorted(stray)}, which docs/environment.md does not list"


def _pointers() -> list[tuple[Path, str]]:
    docs = [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]
    sources = docs + _files(["autograder", "benchmarks", "docker"], (".py", ".md"))
    out = []
    for src in sources:
        for m in PATH_REF.finditer(src.read_text(errors="replace")):
            ref = m.group(1)
            if not PLACEHOLDER.search(ref):
                out.append((src, ref))
    return out


def test_every_file_the_docs_and_docstrings_name_exists():
    pointers = _pointers()
    assert len(pointers) > 20, "the scan found almost no file references: the pattern is broken"
    missing = sorted({f"{src.relative_to(ROOT)} names {ref}" for src, ref in pointers if not (ROOT / ref).exists()})
    assert not missing, "stale pointers:\n" + "\n".join(missing)


def test_the_pointer_scan_sees_a_stale_name(tmp_path):
    """The scan itself: a made-up path is reported, a placeholder path is not."""
    text = "see tests/test_no_such_file.py and solutions/ID/EXERCISE/test_hidden.py"
    refs = [m.group(1) for m in PATH_REF.finditer(text) if not PLACEHOLDER.search(m.group(1))]
    assert refs == ["tests/test_no_such_file.py"]


def test_the_stage_numbers_agree_with_the_architecture_doc():
    """docs/architecture.md numbers the engine's stages; the README and the modules use the same numbers."""
    arch = (ROOT / "docs/architecture.md").read_text()
    stages = dict(re.findall(r"(\d)\. (\w+)\s+autograder/", arch))
    assert stages == {"1": "load", "2": "session", "3": "judge", "4": "report"}
    readme = (ROOT / "README.md").read_text()
    assert dict(re.findall(r"^(\d)\. \*\*(\w+)\*\*", readme, re.M)) == stages
    for p in (ROOT / "autograder").rglob("*.py"):
        text = p.read_text()
        named = re.findall(r"\b[Ss]tage (\d) \((\w+)", text)
        assert len(named) == len(re.findall(r"\b[Ss]tage \d", text)), f"{p.relative_to(ROOT)}: write 'Stage N (name)'"
        for num, name in named:
            assert stages.get(num) == name, f"{p.relative_to(ROOT)} calls stage {num} {name!r}"


def test_the_one_source_of_truth_table_names_what_exists():
    """Each `module.Name` in architecture.md's table of single sources is an attribute of that module."""
    import importlib

    arch = (ROOT / "docs/architecture.md").read_text()
    table = arch.split("## One source of truth per fact", 1)[1].split("\n## ", 1)[0]
    refs = re.findall(r"`((?:[a-z_]+\.)+)([A-Za-z_][A-Za-z0-9_]*)`", table)
    assert len(refs) >= 5
    wrong = []
    top = {p.stem for p in (ROOT / "autograder").iterdir()}
    for module, name in refs:
        if module.split(".")[0] not in top:  # `item.stash` and the like: not a path into the package
            continue
        if name in ("py", "toml"):  # a file's name (`warmup.py`, `assignment.toml`), not module.Name
            continue
        mod = "autograder." + module.rstrip(".")
        try:
            if not hasattr(importlib.import_module(mod), name):
                importlib.import_module(f"{mod}.{name}")  # a submodule, such as batch.backends.worker
        except ImportError:
            wrong.append(f"{mod} has no {name}")
    assert not wrong, wrong
