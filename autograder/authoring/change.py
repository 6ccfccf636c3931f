"""A mutant written as a change to its exercise's reference: these lines, changed like this.

The reference stays the single source of the exercise's code; a mutant holds only
what it changes. Its file is still a Python module in ``mutants/``: a docstring
naming the misconception, the ``# misconception:`` header, and ``CHANGE``, a
string holding hunks in the form ``diff -U0 reference.py edited.py`` prints::

    CHANGE = r'''
    @@ -9 +9 @@ def softmax_ce_grad(logits, target):
    -    grad[torch.arange(n), target] -= 1
    +    grad[torch.arange(n), target] += 1
    '''

``-`` lines are the reference's lines the mutant removes, ``+`` lines what it
writes there, `` `` (space) lines unchanged context. The ``-N`` of a header
says where its lines stand in the reference (a hunk with no ``-`` or context
line inserts after line N); the counts after the commas and the text after
the second ``@@`` are for people and are not read. Applying checks every ``-``
and context line against the reference: a hunk whose lines moved is found
where they now stand (when they stand in exactly one place), and one whose
lines are gone is an authoring error that names the mutant, the hunk and what
to do (:class:`ChangeMismatch`), as validate's static pass reports it.

:func:`minimal_change` writes the smallest such change between two texts
(what ``torchgrader tidy-mutants`` and ``new-mutant`` write); :func:`legacy_target`
reads an older mutant (whole functions appended after the reference, or a
``# torchgrader: whole-file`` copy) as the reference it stands for.
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from autograder.errors import AssignmentError, ChangeMismatch

NAME = "CHANGE"  # the module-level string a change mutant defines
_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
WHOLE_FILE = "# torchgrader: whole-file"


@dataclass
class Hunk:
    """One ``@@`` block: where it stands in the reference, and its lines."""

    number: int  # 1-based, within the mutant
    header: str
    file_line: int  # the line of its ``@@`` header in the mutant file
    start: int  # the reference line (1-based) of its first old line; a pure insertion goes after this line
    old: list[str]  # context and removed lines: what the reference must read there
    new: list[str]  # context and added lines: what stands there afterwards


def change_node(tree: ast.Module) -> ast.Assign | None:
    """The module-level ``CHANGE = "..."`` assignment, or None (the file is an older, full-code mutant)."""
    for node in tree.body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id == NAME and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            return node
    return None


def is_change(text: str) -> bool:
    """Whether a mutant's source is a change (defines ``CHANGE``) rather than code appended after the reference."""
    if f"{NAME} =" not in text:
        return False
    try:
        return change_node(ast.parse(text)) is not None
    except SyntaxError:
        return False


def read_hunks(path: Path, text: str | None = None) -> list[Hunk]:
    """The hunks of a change mutant's ``CHANGE``; :class:`ChangeMismatch` names the line when one cannot be read."""
    text = path.read_text(encoding="utf-8") if text is None else text
    try:
        node = change_node(ast.parse(text))
    except SyntaxError as e:
        raise ChangeMismatch(path, e.lineno, f"does not parse ({e.msg})") from None
    if node is None:
        raise ChangeMismatch(path, None, f"defines no {NAME} string")
    value = node.value
    assert isinstance(value, ast.Constant) and isinstance(value.value, str)
    # the string's first line is the line after `CHANGE = r'''` when it starts with a newline
    first = node.lineno
    lines = value.value.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    hunks: list[Hunk] = []
    for offset, line in enumerate(lines):
        where = first + offset
        m = _HEADER.match(line)
        if m:
            hunks.append(Hunk(len(hunks) + 1, line, where, int(m[1]), [], []))
            continue
        if not line.strip() and not hunks:
            continue
        if not hunks:
            raise ChangeMismatch(path, where, f"{NAME} must start with a hunk header such as `@@ -9 +9 @@` "
                                 f"(the reference line it changes); found {line.strip()[:60]!r}")
        h = hunks[-1]
        tag, body = (line[0], line[1:]) if line else (" ", "")
        if tag == "\\":  # "\ No newline at end of file"
            continue
        if tag not in " -+":
            raise ChangeMismatch(path, where, f"hunk {h.number} line {line[:60]!r} starts with neither `-` "
                                 "(a reference line it removes), `+` (a line it adds) nor a space (unchanged context)")
        if tag in " -":
            h.old.append(body)
        if tag in " +":
            h.new.append(body)
    if not hunks:
        raise ChangeMismatch(path, node.lineno, f"its {NAME} holds no hunk (`@@ -9 +9 @@` and the lines it changes): "
                             "the mutant would be the reference itself")
    return hunks


def _same(a: list[str], b: list[str]) -> bool:
    return len(a) == len(b) and all(x.rstrip() == y.rstrip() for x, y in zip(a, b, strict=True))


def _find(ref: list[str], old: list[str], after: int) -> list[int]:
    return [i for i in range(after, len(ref) - len(old) + 1) if _same(ref[i:i + len(old)], old)]


def apply_hunks(reference: list[str], hunks: list[Hunk], path: Path, reference_path: Path) -> list[str]:
    """The reference's lines with each hunk applied, in order; :class:`ChangeMismatch` when one does not fit."""
    out: list[str] = []
    pos = 0  # the next reference line (0-based) not yet copied
    for h in hunks:
        at = h.start - 1 if h.old else h.start
        if not _same(reference[at:at + len(h.old)], h.old) or at < pos:
            found = _find(reference, h.old, pos) if h.old else []
            if len(found) != 1:
                raise ChangeMismatch(path, h.file_line, _mismatch(h, reference, at, len(found), reference_path))
            at = found[0]
        if at > len(reference):
            raise ChangeMismatch(path, h.file_line, f"hunk {h.number} (`{h.header}`) inserts after line "
                                 f"{h.start}, but {reference_path.name} has {len(reference)} lines: "
                                 + _what_to_do(reference_path))
        out += reference[pos:at] + h.new
        pos = at + len(h.old)
    return out + reference[pos:]


def _what_to_do(reference_path: Path) -> str:
    return (f"the reference changed since this mutant was written. Write the change again against it (edit a "
            f"copy of {reference_path.name} and paste `diff -U0 {reference_path.name} COPY` into CHANGE), or put "
            "the old lines back in the reference")


def _mismatch(h: Hunk, ref: list[str], at: int, found: int, reference_path: Path) -> str:
    first = next((x for x in h.old if x.strip()), h.old[0]).strip()
    there = ref[at].strip() if 0 <= at < len(ref) else "(past its end)"
    where = (f"they stand in {found} places there, so the hunk needs a line of context (a line that follows "
             "unchanged, written with a leading space) to say which" if found
             else f"they stand nowhere in it (line {h.start} reads `{there[:80]}`); " + _what_to_do(reference_path))
    return (f"hunk {h.number} (`{h.header}`) no longer matches {reference_path}: it changes "
            f"{len(h.old)} line(s) starting `{first[:80]}`, and {where}")


def applied(path: Path, reference_path: Path, text: str | None = None) -> str:
    """The code a change mutant stands for: its reference with the change applied."""
    try:
        reference = reference_path.read_text(encoding="utf-8")
    except OSError as e:
        raise ChangeMismatch(path, None, f"its reference {reference_path} cannot be read ({e.strerror})") from None
    lines = apply_hunks(reference.splitlines(), read_hunks(path, text), path, reference_path)
    return "\n".join(lines) + "\n"


def case_code(path: Path, reference_path: Path) -> tuple[str, bool]:
    """(code, replaces): what a case file puts in its exercise's place in a submission.

    A change mutant replaces the reference with its applied change; a ``# torchgrader: whole-file`` case
    replaces it with the file; any other case (an alternative, an older mutant) is appended after the
    reference, as a student's later cell redefines an earlier one.
    """
    text = path.read_text(encoding="utf-8")
    if is_change(text):
        return applied(path, reference_path, text), True
    return text, is_whole_file(text)


def is_whole_file(text: str) -> bool:
    """A case file that replaces the reference instead of redefining part of it.

    Most older mutants and alternatives change one or two functions: they are written
    as those functions alone and appended to the reference. A case that must *delete*
    code (a mutant missing a function) says so on a line of its own.
    """
    return any(line.strip() == WHOLE_FILE for line in text.splitlines())


# ---------------------------------------------------------------------- writing a change
def _context_for(ref: list[str], at: int) -> tuple[int, str] | None:
    """A non-blank reference line next to insertion point ``at`` (before it if it can), to anchor an insertion."""
    for i in (at - 1, at):
        if 0 <= i < len(ref) and ref[i].strip():
            return i, ref[i]
    return None


def _def_line(ref: list[str], at: int) -> str:
    """The nearest ``def``/``class`` line at or above reference line ``at`` (0-based), as git shows in headers."""
    for i in range(min(at, len(ref) - 1), -1, -1):
        if re.match(r"^\s*(async\s+def|def|class)\s", ref[i]):
            return ref[i].strip()
    return ""


def minimal_change(reference: str, target: str) -> str:
    """The body of ``CHANGE`` that turns ``reference`` into ``target``: ``diff -U0`` hunks, each insertion
    anchored by one line of context, so that no run of the reference's lines is copied unchanged."""
    ref, new = reference.splitlines(), target.splitlines()
    out: list[str] = []
    ops = difflib.SequenceMatcher(None, ref, new, autojunk=False).get_opcodes()
    for tag, i1, i2, j1, j2 in ops:
        if tag == "equal":
            continue
        old_lines, new_lines = ref[i1:i2], new[j1:j2]
        before = after = ""
        start = i1 + 1
        if not old_lines:
            anchor = _context_for(ref, i1)
            if anchor is not None:
                i, line = anchor
                if i < i1:
                    before, start = line, i + 1
                else:
                    after = line
        header = f"@@ -{start},{len(old_lines) + bool(before or after)} +{j1 + 1},{len(new_lines)} @@"
        fn = _def_line(ref, i1 if old_lines else i1 - 1)
        out.append(f"{header} {fn}".rstrip())
        if before:
            out.append(f" {before}")
        out += [f"-{x}" for x in old_lines] + [f"+{x}" for x in new_lines]
        if after:
            out.append(f" {after}")
    return "\n".join(out) + "\n" if out else ""


def render(prelude: str, body: str) -> str:
    """A change mutant's file: its prelude (docstring and ``# misconception:`` header) and ``CHANGE``."""
    quote = next((q for q in ("'''", '"""') if q not in body), None)
    if quote is None or body.endswith("\\"):
        raise AssignmentError("the change holds both ''' and \"\"\": write its CHANGE by hand")
    return f"{prelude.rstrip()}\n\n{NAME} = r{quote}\n{body}{quote}\n"


def prelude(mutant: str) -> str:
    """An older mutant's docstring and ``# misconception:`` header, as written, in their order."""
    tree, lines = ast.parse(mutant), mutant.splitlines()
    parts: list[tuple[int, str]] = []
    if tree.body and ast.get_docstring(tree) is not None:
        node = tree.body[0]
        parts.append((node.lineno, "\n".join(lines[node.lineno - 1:node.end_lineno])))
    parts += [(i, x) for i, x in enumerate(lines, start=1) if x.strip().startswith("# misconception:")][:1]
    return "\n".join(text for _, text in sorted(parts))


# ---------------------------------------------------------------------- reading an older mutant
def _segment(lines: list[str], node: ast.stmt, *, comments: bool) -> tuple[int, int]:
    """The (0-based start, end) lines of a top-level statement, with its decorators (and the comment block
    right above it, with ``comments``)."""
    start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1
    if comments:
        while start > 0 and lines[start - 1].lstrip().startswith("#") and not _is_marker(lines[start - 1]):
            start -= 1
    return start, node.end_lineno or node.lineno


def _is_marker(line: str) -> bool:
    s = line.strip()
    return s == WHOLE_FILE or s.startswith("# misconception:")


def _key(node: ast.stmt) -> str | None:
    """The name a top-level statement binds, when it is a definition or a one-name assignment."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def legacy_target(reference: str, mutant: str) -> str:
    """The reference an older mutant stands for, written in place.

    A whole-file mutant is its own code, less its docstring and markers. Otherwise each definition
    (or one-name assignment) the mutant writes replaces the reference's of that name where it stands;
    an import the reference already has is dropped, and whatever else the mutant holds follows the
    reference, in its order, as it did when appended.
    """
    mtree, mlines = ast.parse(mutant), mutant.splitlines()
    body = mtree.body[1:] if ast.get_docstring(mtree) is not None else mtree.body
    if is_whole_file(mutant):
        start = _segment(mlines, body[0], comments=True)[0] if body else len(mlines)
        return "\n".join(x for x in mlines[start:] if not _is_marker(x)) + "\n"
    rtree, rlines = ast.parse(reference), reference.splitlines()
    ref_imports = {ast.dump(n) for n in rtree.body if isinstance(n, ast.Import | ast.ImportFrom)}
    ref_at = {k: n for n in rtree.body if (k := _key(n)) is not None}
    replace: dict[int, list[str]] = {}  # reference start line -> new lines (the old node's lines go)
    ends: dict[int, int] = {}
    tail: list[list[str]] = []
    later = {k for n in body if (k := _key(n)) in ref_at}  # names a later statement redefines in place
    for node in body:
        later.discard(_key(node) or "")
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} & later
        if used and not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            raise AssignmentError(f"module-level code at line {node.lineno} uses {', '.join(sorted(used))} as the "
                                  "reference defines it, before redefining it: write its CHANGE by hand")
        s, e = _segment(mlines, node, comments=True)
        seg = mlines[s:e]
        if isinstance(node, ast.Import | ast.ImportFrom) and ast.dump(node) in ref_imports:
            continue
        key = _key(node)
        old = ref_at.get(key) if key else None
        rs, re_ = _segment(rlines, old, comments=False) if old is not None else (-1, -1)
        if old is not None and type(old) is type(node) and rs not in replace:
            replace[rs], ends[rs] = seg, re_
        else:
            tail.append(seg)
    out: list[str] = []
    i = 0
    while i < len(rlines):
        if i in replace:
            out += replace[i]
            i = ends[i]
        else:
            out.append(rlines[i])
            i += 1
    for seg in tail:
        out += ["", "", *seg]
    return "\n".join(out) + "\n"


def tidied(path: Path, reference_path: Path) -> tuple[str, str]:
    """(new file text, the code it stands for): a mutant rewritten as its minimal change.

    An older mutant is read as :func:`legacy_target` reads it; a change mutant keeps its text up to
    ``CHANGE`` and loses any context its hunks need not carry.
    """
    text, reference = path.read_text(encoding="utf-8"), reference_path.read_text(encoding="utf-8")
    if is_change(text):
        target = applied(path, reference_path, text)
        node = change_node(ast.parse(text))
        assert node is not None
        head = "\n".join(text.splitlines()[:node.lineno - 1])
    else:
        target, head = legacy_target(reference, text), prelude(text)
    body = minimal_change(reference, target)
    out = render(head, body)
    if applied(path, reference_path, out) != target:  # the change must stand for exactly that code
        raise AssignmentError(f"{path}: its change does not reproduce its code; write its CHANGE by hand")
    return out, target
