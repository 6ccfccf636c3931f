"""An output folder that cannot be written is a sentence naming the option, before anything is graded."""

from __future__ import annotations

import os

import pytest

from autograder.cli import main
from autograder.errors import OutputFolderError
from autograder.report.files import writable_folder
from tests.helpers import ROOT


def _unwritable(tmp_path):
    """Paths no user can write: one below a plain file; and, for an ordinary user, a folder without write bits."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    paths = [blocker / "out", blocker]
    if os.geteuid() != 0:  # root writes whatever the mode bits say
        ro = tmp_path / "read-only"
        ro.mkdir(mode=0o555)
        paths.append(ro / "out")
    return paths


def test_writable_folder_names_the_option_and_the_reason(tmp_path):
    for path in _unwritable(tmp_path):
        with pytest.raises(OutputFolderError) as e:
            writable_folder(path, "--out")
        assert str(path) in e.value.message and "--out" in e.value.message
    made = writable_folder(tmp_path / "new" / "out")
    assert made.is_dir() and not any(made.iterdir())  # the write test leaves nothing behind


@pytest.mark.parametrize("command", [
    ["grade", str(ROOT / "samples/dave.py"), "--assignment", "pytorch-fundamentals", "--out", "{out}"],
    ["release", "pytorch-fundamentals", "--out", "{out}", "--unvalidated"],
])
def test_commands_refuse_an_unwritable_out_with_a_sentence_not_a_traceback(tmp_path, capsys, command):
    out = tmp_path / "a-file" / "out"
    (tmp_path / "a-file").write_text("")
    code = main([a.replace("{out}", str(out)) for a in command])
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err and "cannot write to" in err and "--out" in err
