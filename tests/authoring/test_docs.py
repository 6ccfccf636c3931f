"""The staff guide and the CLI agree: every option the docs give a command exists, and the inner loop comes first."""

from __future__ import annotations

import argparse
import re

from autograder.cli import build_parser
from tests.helpers import ROOT

DOCS = [ROOT / "docs/authoring.md", ROOT / "README.md"]


def _options(parser: argparse.ArgumentParser) -> dict[str, set[str]]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {name: {s for act in p._actions for s in act.option_strings} for name, p in sub.choices.items()}


def test_every_documented_option_of_a_command_exists():
    known = _options(build_parser())
    seen = 0
    for doc in DOCS:
        text = doc.read_text()
        # `torchgrader CMD ... --opt` in code and prose, and "**`CMD ASSIGNMENT ... [--opt]`**" headings
        for m in re.finditer(r"(?:torchgrader |\*\*`)([a-z][a-z-]*)\b([^`\n|#]*)", text):
            cmd, rest = m.group(1), m.group(2)
            if cmd not in known:
                continue
            for opt in re.findall(r"(?<![\w-])(--?[a-z][a-z-]*)", rest):
                seen += 1
                assert opt in known[cmd], f"{doc.name}: `{cmd} {opt}` is documented but the CLI has no {opt}"
    assert seen > 20
    # the default the docs state for validate is the CLI's
    args = build_parser().parse_args(["validate", "demo"])
    assert args.quick is False and "By default (`--full`) every mutant and alternative" in DOCS[0].read_text()
    assert build_parser().parse_args(["validate", "demo", "--quick"]).quick is True


def test_the_guide_shows_the_inner_loop_first():
    headings = re.findall(r"^## (.+)$", DOCS[0].read_text(), re.M)
    assert headings[0].startswith("The inner loop")
    assert "torchgrader try" in DOCS[0].read_text().split("## The workflow")[0]
