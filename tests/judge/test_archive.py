"""A student's checkpoint is never decoded by the judge: its declared sizes are checked first (issue 22)."""

from __future__ import annotations

import io
import zipfile

import torch

from autograder.judge.archive import MAX_INFLATION, declared_size_problem


def _saved(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def deflate_bomb(megabytes: int = 64) -> bytes:
    """A torch.save archive whose storage is recompressed with DEFLATE: small file, huge declared size."""
    src = zipfile.ZipFile(io.BytesIO(_saved({"w": torch.zeros(megabytes << 18)})))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            z.writestr(info.filename, src.read(info))
    return out.getvalue()


def test_an_honest_checkpoint_passes():
    model = torch.nn.Linear(30, 20)
    assert declared_size_problem(_saved({"model": model.state_dict(), "epoch": 3})) is None


def test_a_compressed_storage_is_refused_before_anything_is_decompressed():
    bomb = deflate_bomb(64)
    assert len(bomb) < 1 << 20
    problem = declared_size_problem(bomb)
    assert problem is not None and f"more than {MAX_INFLATION} times its size" in problem


def test_bytes_that_are_not_an_archive_are_left_to_the_decoder():
    assert declared_size_problem(b"not a zip at all") is None


# ---------------------------------------------------------------- the decoder's sandbox, per submission

def _session(server, tmp_path, name):
    from autograder.load import load
    from autograder.options import Budget
    from autograder.sandbox.client import SandboxConfig
    from autograder.session import Session

    p = tmp_path / f"{name}.py"
    p.write_text("X = 1\n")
    return Session(server, load(p), SandboxConfig(), Budget(cell_seconds=20))


def _grading(session, *, timeout=None, student_first=True):
    """As the ``sandbox`` fixture: the student's sandbox is started (unless not ``student_first``), then the
    test's clock (the exercise's default limit unless ``timeout``)."""
    from autograder.judge.proxy import Context, SandboxFixture

    ctx = Context()
    ctx.session = session
    if timeout is not None:
        ctx.timeout = timeout
    if student_first:
        session.ensure()
    ctx.restart_clock()
    return ctx, SandboxFixture(ctx)


def _decoder_pid(session):
    from autograder.judge.archive import DECODER

    return session._clean[DECODER].pid


def test_one_submission_decodes_in_one_clean_sandbox_and_the_next_student_gets_another(server, tmp_path):
    """Every file of a submission is decoded where no student code ran, in one sandbox kept for that submission
    only (issue 25: a sandbox each time cost a fork per file); another submission never meets it."""
    first = _session(server, tmp_path, "first")
    ctx, sandbox = _grading(first)
    try:
        student_pid = first.ensure().pid
        a, err_a = sandbox.load_weights_only(_saved({"w": torch.ones(3)}))
        pid = _decoder_pid(first)
        b, err_b = sandbox.load_weights_only(_saved({"epoch": 2}))
        assert err_a is None and err_b is None
        assert torch.equal(a["w"], torch.ones(3)) and b == {"epoch": 2}
        assert _decoder_pid(first) == pid != student_pid
        kept = first._clean
        first.close()
        assert not kept, "the decoder's sandbox outlived its submission"
    finally:
        ctx.stop_clock()
    second = _session(server, tmp_path, "second")
    ctx, sandbox = _grading(second)
    try:
        _, err = sandbox.load_weights_only(_saved([1, 2]))
        assert err is None and _decoder_pid(second) != pid
    finally:
        ctx.stop_clock()
        second.close()


def test_a_decoder_sandbox_that_failed_is_replaced_for_the_next_file(server, tmp_path):
    import os
    import signal

    import pytest

    from autograder.errors import StudentCrash

    session = _session(server, tmp_path, "crash")
    ctx, sandbox = _grading(session)
    try:
        sandbox.load_weights_only(_saved({"w": torch.zeros(2)}))
        pid = _decoder_pid(session)
        os.kill(pid, signal.SIGKILL)  # as a file that stops the decoder would
        with pytest.raises(StudentCrash, match="stopped the decoder"):
            sandbox.load_weights_only(_saved({"w": torch.zeros(2)}))
        value, err = sandbox.load_weights_only(_saved({"w": torch.full((2,), 7.0)}))
        assert err is None and torch.equal(value["w"], torch.full((2,), 7.0))
        assert _decoder_pid(session) != pid
    finally:
        ctx.stop_clock()
        session.close()


def test_the_decoders_start_up_is_not_the_students_time(tmp_path):
    """The decoder's sandbox is the grader's: its spawn may wait for a server that is still importing torch or
    warming up for another judge. That wait left a 10 s test too little time on a loaded machine (CI, stop 34)."""
    from autograder.sandbox.client import SandboxServer

    with SandboxServer(warm_compiler=False) as fresh:  # not ready: its first spawn waits for `import torch`
        session = _session(fresh, tmp_path, "slow-start")
        ctx, sandbox = _grading(session, timeout=1.0, student_first=False)
        try:
            value, err = sandbox.load_weights_only(_saved({"w": torch.ones(2)}))
            assert err is None and torch.equal(value["w"], torch.ones(2))
        finally:
            ctx.stop_clock()
            session.close()
        assert not ctx.overran
