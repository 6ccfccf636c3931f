"""The command line: one record per command, and every default read from the one place that writes it."""

from __future__ import annotations

import argparse

import pytest

from autograder.cli import BY_NAME, COMMANDS, build_parser, main
from autograder.defaults import default_of


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


@pytest.fixture(scope="module")
def commands() -> dict[str, argparse.ArgumentParser]:
    return _commands(build_parser())  # every command's arguments, as for --help


def _with_defaults(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The options whose default means something (flags, and options that are absent unless given, do not)."""
    return [a for a in parser._actions
            if a.option_strings and a.default not in (None, "", argparse.SUPPRESS)
            and not isinstance(a, argparse._StoreTrueAction | argparse._StoreFalseAction | argparse._HelpAction)]


def test_each_command_is_one_record_and_the_parser_offers_exactly_them(commands):
    assert list(commands) == [c.name for c in COMMANDS] == list(BY_NAME)
    for c in COMMANDS:
        assert c.help and c.arguments and c.handler


def test_every_default_is_its_owners_and_help_shows_it(commands):
    """Issue 21: a default is written once, by its owner (a settings dataclass or a function); the CLI reads it
    from there, so `grade --cell-timeout`, the service's cell_timeout and Budget can never disagree."""
    checked = owned = 0
    for name, parser in commands.items():
        text = parser.format_help()
        for action in _with_defaults(parser):
            where = f"torchgrader {name} {action.option_strings[-1]}"
            assert hasattr(action, "owner"), f"{where}: its default is written in the parser (use add_option)"
            if action.owner is not None:
                assert action.default == action.owner.value(), where
                owned += 1
            assert f"(default: {action.default}" in " ".join(text.split()), f"{where}: --help does not show it"
            checked += 1
    assert checked >= 14 and owned >= 11


def test_the_grading_defaults_are_the_settings_own():
    """What each option says it reads is what the settings dataclasses write (the owner is the right one)."""
    from autograder.batch.runner import BatchOptions
    from autograder.options import Budget
    from autograder.sandbox.isolation import Limits
    from autograder.service.config import ServiceConfig

    args = build_parser("grade").parse_args(["grade", "x", "--assignment", "a", "--out", "o"])
    budget, limits, batch = Budget(), Limits(), BatchOptions(out=None, worker=None)  # type: ignore[arg-type]
    assert args.cell_timeout == budget.cell_seconds and args.submission_timeout == budget.submission_seconds
    assert args.memory_gb * 2**30 == limits.memory_bytes
    assert (args.backend, args.docker_image, args.gpus, args.progress) == (
        batch.backend, batch.docker_image, batch.docker_gpus, batch.progress)
    cfg = ServiceConfig()
    assert (cfg.cell_timeout, cfg.submission_timeout, cfg.memory_gb * 2**30) == (
        budget.cell_seconds, budget.submission_seconds, limits.memory_bytes)
    assert (cfg.backend, cfg.docker_image) == (batch.backend, batch.docker_image)


def test_default_of_reads_fields_factories_and_keywords():
    from autograder.authoring.scaffold import scaffold
    from autograder.options import GradeOptions

    assert default_of(scaffold, "points") == 10
    assert default_of(GradeOptions, "protected") == []
    with pytest.raises(KeyError, match="no default"):
        default_of(scaffold, "course")


def test_dispatch_goes_through_the_record(capsys, tmp_path):
    """`main` runs the handler the command's record names (here: a staff command, imported only then)."""
    with pytest.raises(SystemExit):
        main(["notebook", "--help"])
    assert "what the code cells hold (default: stub)" in " ".join(capsys.readouterr().out.split())
    assert main(["try", "no-such-assignment", "basics", "--course", str(tmp_path)]) == 2
    assert "no-such-assignment" in capsys.readouterr().err
