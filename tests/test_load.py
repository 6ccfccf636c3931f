"""Loading submissions: nothing executes, every problem gets a message a student can act on."""

from __future__ import annotations

import json

import nbformat
import pytest

from autograder.load import LoadError, load, neutralise


def write_nb(path, cells, version=4):
    nb = nbformat.v4.new_notebook()
    for kind, src in cells:
        nb.cells.append(nbformat.v4.new_code_cell(src) if kind == "code" else nbformat.v4.new_markdown_cell(src))
    nbformat.write(nb, str(path))
    return path


def test_notebook_code_cells_keep_their_position(tmp_path):
    p = write_nb(tmp_path / "alice.ipynb", [("md", "# Title"), ("code", "x = 1"), ("md", "text"), ("code", "y = 2")])
    sub = load(p)
    assert sub.name == "alice"
    assert [(c.index, c.source) for c in sub.cells] == [(2, "x = 1"), (4, "y = 2")]
    assert sub.cells[0].label == "cell 2 (`x = 1`)"
    assert len(sub.sha256) == 64


def test_nbformat_v3_notebooks_are_converted(tmp_path):
    v3 = {
        "nbformat": 3,
        "nbformat_minor": 0,
        "metadata": {"name": "old"},
        "worksheets": [
            {
                "cells": [
                    {
                        "cell_type": "code",
                        "input": "def f():\n    return 3",
                        "language": "python",
                        "outputs": [],
                        "metadata": {},
                    },
                ],
                "metadata": {},
            }
        ],
    }
    p = tmp_path / "old.ipynb"
    p.write_text(json.dumps(v3))
    sub = load(p)
    assert sub.cells[0].source == "def f():\n    return 3"


@pytest.mark.parametrize(
    "content,needle",
    [
        (b"", "empty"),
        (b"{not json", "not a readable Jupyter notebook"),
        (b'{"cells": 3}', "not a readable Jupyter notebook"),
        (b"\xff\xfe\x00garbage", "not a text file"),
    ],
)
def test_corrupt_notebooks_get_a_clear_error(tmp_path, content, needle):
    p = tmp_path / "bob.ipynb"
    p.write_bytes(content)
    with pytest.raises(LoadError, match=needle) as e:
        load(p)
    assert "bob.ipynb" in str(e.value)


def test_notebook_without_code_is_an_error(tmp_path):
    p = write_nb(tmp_path / "empty.ipynb", [("md", "just words")])
    with pytest.raises(LoadError, match="no code cells"):
        load(p)


def test_other_files_are_refused(tmp_path):
    p = tmp_path / "essay.docx"
    p.write_text("x")
    with pytest.raises(LoadError, match="neither a notebook"):
        load(p)


def test_magics_and_shell_are_neutralised_not_run():
    src = "%matplotlib inline\n!rm -rf /\nfiles = !ls\nx = 1\nif x:\n    %time y = 2\nlen?\n"
    out = neutralise(src)
    compile(out, "<cell>", "exec")  # valid Python now
    assert "rm -rf" not in out.replace("# neutralised: !rm -rf /", "")
    assert out.splitlines()[3] == "x = 1"
    assert len(out.splitlines()) == len(src.splitlines())


def test_cell_magics():
    body = "%%time\ndef f():\n    return 1\n"
    kept = neutralise(body)
    ns = {}
    exec(compile(kept, "<cell>", "exec"), ns)
    assert ns["f"]() == 1  # %%time's body is ordinary Python and still runs
    dropped = neutralise("%%bash\nrm -rf /\necho hi\n")
    assert all(ln.startswith("#") for ln in dropped.splitlines())


def test_py_files_split_at_percent_markers_with_file_line_numbers(tmp_path):
    p = tmp_path / "carol.py"
    p.write_text("import torch\n# %%\ndef f(:\n    pass\n# %%\ndef g():\n    return 2\n")
    cells = load(p).cells
    assert len(cells) == 3
    assert not cells[1].in_notebook and cells[1].label.startswith("the code at line 2")
    # a syntax error is reported at the file's own line number
    with pytest.raises(SyntaxError) as e:
        compile(cells[1].source, "<cell>", "exec")
    assert cells[1].location(e.value.lineno) == "line 3"


def test_py_loading_is_linear_in_the_file_size(tmp_path):
    """60,000 `# %%` cells: no cell is padded to its line number (that was quadratic: gigabytes)."""
    p = tmp_path / "many.py"
    p.write_text("".join(f"# %%\nx{i} = {i}\n" for i in range(60_000)))
    cells = load(p).cells
    assert len(cells) == 60_000
    assert sum(len(c.source) for c in cells) <= p.stat().st_size
    assert cells[-1].location(1) == f"line {2 * 60_000 - 1}"


def test_py_files_without_markers_split_at_top_level_definitions(tmp_path):
    p = tmp_path / "dave.py"
    p.write_text("import torch\n\ndef f(:\n    pass\n\n@decorator\ndef g():\n    return 2\n\nclass C:\n    pass\n")
    cells = load(p).cells
    assert [c.index for c in cells] == [1, 3, 6, 10]


def test_defines_finds_top_level_definitions_only():
    from autograder.load import defines

    src = "import torch\n\ndef f(x):\n    g = 1\n\nclass C:\n    pass\n\nh: int = 3\nk=4\n"
    assert all(defines(src, n) for n in ("f", "C", "h", "k"))
    assert not defines(src, "g") and not defines(src, "torch") and not defines(src, "ff")
