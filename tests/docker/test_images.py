"""The grader images install what the grader needs to run (read from pyproject.toml, so they cannot drift)."""

from __future__ import annotations

import re
import tomllib

import pytest

from tests.helpers import ROOT

IMPORT_NAMES = {"scikit-learn": "sklearn"}


def runtime_modules() -> set[str]:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    reqs = meta["dependencies"] + meta["optional-dependencies"]["data"]
    names = {re.split(r"[<>=!~\[ ;]", r, maxsplit=1)[0] for r in reqs}
    return {IMPORT_NAMES.get(n, n) for n in names}


@pytest.mark.parametrize("image", ["cpu", "gpu"])
def test_every_runtime_dependency_is_installed_and_checked(image):
    text = (ROOT / "docker" / image / "Dockerfile").read_text()
    assert "--no-deps" not in text  # the GPU image once skipped matplotlib and rich: the class report crashed
    assert re.search(r'pip install (-c \S+ )?"/opt/torchgrader\[data\]"', text)
    smoke = [m for m in re.findall(r'python -c "import ([\w, ]+);', text) if "autograder" in m]
    assert smoke, "the image's build ends with an import check of the grader and its dependencies"
    assert runtime_modules() <= {m.strip() for m in smoke[0].split(",")}


def test_the_gpu_image_keeps_its_cuda_torch():
    text = (ROOT / "docker" / "gpu" / "Dockerfile").read_text()
    assert "print('torch==' + torch.__version__)\" > /tmp/keep-torch.txt" in text
    assert "pip install -c /tmp/keep-torch.txt" in text
