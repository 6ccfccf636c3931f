"""The one escaper of student-controlled text: nothing it returns can act on a terminal, and all of it encodes."""

from __future__ import annotations

import pytest

from autograder.printable import is_printable, printable

# every C0 control but \t and \n, DEL, every C1 control: each must come out as a visible escape
CONTROLS = [chr(c) for c in [*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F, *range(0x80, 0xA0)]]


@pytest.mark.parametrize("ch", CONTROLS, ids=lambda c: f"U+{ord(c):04X}")
def test_every_control_character_is_escaped(ch):
    out = printable(f"a{ch}b")
    assert ch not in out and out.startswith("a\\") and out.endswith("b")
    assert printable(f"a{ch}b", lines=True) == out  # blocks escape them too


def test_escapes_read_like_python():
    assert printable("\x1b[2Jname\rfake\x9b31m") == "\\x1b[2Jname\\rfake\\x9b31m"
    assert printable("evil\u202etxt.py") == "evil\\u202etxt.py"


def test_one_line_unless_asked_for_a_block():
    assert printable("a\nb\tc") == "a\\nb\\tc"
    assert printable("a\r\nb\n\tc\rd", lines=True) == "a\nb\n\tc\\rd"
    assert printable("x\u2028y", lines=True) == "x\\u2028y"


def test_a_lone_surrogate_becomes_encodable():
    out = printable("boom \ud800 \udfff")
    out.encode("utf-8")  # raises if a surrogate were left
    assert out == "boom \\ud800 \\udfff"


def test_ordinary_text_of_any_script_is_unchanged():
    for s in ["Zoë Ñúñez", "王小明", "Ахмед", "naïve café 🚀", "C:\\path\\x"]:
        assert printable(s) == s and is_printable(s)
    assert not is_printable("\x1b") and is_printable("a\nb", lines=True) and not is_printable("a\nb")


def test_non_strings_are_shown_as_their_str():
    assert printable(3.5) == "3.5"


def test_escaping_twice_changes_nothing_more():
    """Sinks (progress lines) escape again what their callers escaped: that must be harmless."""
    for s in ["a\x1b[2J\r\nb\ud800\u202e", "plain", "C:\\x1b already"]:
        for lines in (False, True):
            once = printable(s, lines=lines)
            assert printable(once, lines=lines) == once
