"""The package layout holds: no import cycles, and each package imports only from the layers below it.

Read from the source with ``ast`` (every ``import`` counts, in functions and
under ``TYPE_CHECKING`` too), so a lazy import cannot hide a dependency. A
module also depends on the ``__init__`` of every package it imports from.
The layers are docs/architecture.md's, bottom first.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import ROOT

PKG = ROOT / "autograder"

# Bottom first. A module may import from a strictly lower layer, or from its own top-level package
# (``autograder.batch.*`` within batch). Two packages in one layer are siblings: neither imports the other.
LAYERS: list[list[str]] = [
    ["autograder.errors"],  # the exception hierarchy's base: everything may raise its subclasses
    ["autograder.defaults"],  # reading a default from the one place that writes it (the CLI's options do)
    ["autograder.printable"],  # the one escaper of student- and LMS-controlled text shown to people
    ["autograder.gcpause"],  # importing torch without the garbage collector (server, worker, check)
    ["autograder.results", "autograder.assignment", "autograder.load"],
    ["autograder.caps"],  # judge-side caps on student-derived strings in results (session and judge use it)
    ["autograder.sandbox"],
    ["autograder.options"],  # the grading settings, light enough for the CLI process (no torch)
    ["autograder.warmup"],  # what to import ahead of grading, as each exercise declares it
    ["autograder.session"],
    ["autograder.judge"],
    ["autograder.grade"],
    ["autograder.report"],
    ["autograder.checker"],  # students' check: rendered from report's view-model of a result
    ["autograder.batch"],  # TAs' batch grading, and the workers every parallel grading runs on (backends/)
    # staff tools (validate grades its cases on the batch's process backend); the course's submission service
    # (`torchgrader serve`: a web tier in front of the batch's warm workers)
    ["autograder.authoring", "autograder.service"],
    ["autograder.cli"],
]


def _modules() -> dict[str, Path]:
    out = {}
    for p in PKG.rglob("*.py"):
        name = ".".join(p.relative_to(ROOT).with_suffix("").parts)
        out[name.removesuffix(".__init__")] = p
    return out


def _imports(path: Path, modules: dict[str, Path]) -> set[str]:
    out: set[str] = set()
    for n in ast.walk(ast.parse(path.read_text())):
        names: list[str] = []
        if isinstance(n, ast.Import):
            names = [a.name for a in n.names]
        elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
            names = [f"{n.module}.{a.name}" if f"{n.module}.{a.name}" in modules else n.module for a in n.names]
        out |= {m for m in names if m.split(".")[0] == "autograder"}
    return out


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps = set()
        for m in _imports(path, modules):
            parts = m.split(".")
            # importing a.b.c runs a.b's __init__ too (the root's is import-light: see the test below)
            deps |= {".".join(parts[:i]) for i in range(2, len(parts) + 1)}
        own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
        graph[name] = {d for d in deps if d not in own and d in modules}
    return graph


def _layer(module: str) -> tuple[int, str]:
    best = (-1, "", "")
    for i, layer in enumerate(LAYERS):
        for prefix in layer:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best[2]):
                best = (i, prefix, prefix)
    assert best[0] >= 0, f"{module} is in no layer: add it to LAYERS (and to docs/architecture.md)"
    return best[0], best[1]


def test_the_root_package_is_import_light():
    """The sandbox imports `autograder` next to student code: its module level imports nothing of ours."""
    tree = ast.parse((PKG / "__init__.py").read_text())
    top = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    assert [ast.unparse(n) for n in top if "autograder" in ast.unparse(n)] == []


def test_each_package_imports_only_downward():
    wrong = []
    for module, deps in _graph().items():
        if module == "autograder":
            continue  # the students' facade: imports the checker lazily, when check() is called
        level, package = _layer(module)
        for dep in deps:
            if dep == "autograder":
                continue  # its location and its IN_SANDBOX flag only (test above)
            dep_level, dep_package = _layer(dep)
            if dep_package != package and dep_level >= level:
                wrong.append(f"{module} -> {dep}")
    assert wrong == [], "imports that go up or sideways:\n" + "\n".join(sorted(wrong))


def test_there_is_no_import_cycle():
    graph = {m: {d for d in deps if d != "autograder"} for m, deps in _graph().items() if m != "autograder"}
    state: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[str] = []

    def visit(m: str) -> None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                cycles.append(" -> ".join([*stack[stack.index(d):], d]))
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    assert cycles == [], "import cycles:\n" + "\n".join(cycles)


def test_the_layers_name_every_package():
    packages = {p.parent.relative_to(ROOT).as_posix().replace("/", ".") for p in PKG.rglob("__init__.py")}
    for package in packages - {"autograder"}:
        _layer(package)


# Top-level test files that test the whole engine rather than one module (named for what they hold).
CROSS_CUTTING = {
    "test_benchmark_cpu",  # benchmarks/speed.py's CPU accounting (benchmarks/ is beside the package, not in it)
    "test_benchmark_chain",  # benchmarks/speed.py's compile chain runs the sandbox server's own steps
    "test_benchmark_floor",  # benchmarks/batch.py's floor grades each student on their own code
    "test_cold_start",  # what makes grading fast from cold, across cli, grade, server and worker
    "test_course_regression",  # validate on the real course and on a weakened copy
    "test_distributed",  # the distributed-training assignment end to end
    "test_docs_pointers",  # the docs against the code
    "test_exercise_schema",  # one exercise layout and schema for loading and the linter
    "test_gpu",  # the GPU image's exercises on a CUDA host
    "test_import_graph",  # this file
    "test_numpy_returns",  # return types from the student's process to the judge's checks
}
NOT_PACKAGES = {"course", "exploits", "exploits_distributed", "docker"}  # material and images, not code


def test_tests_sit_beside_what_they_test():
    """tests/ mirrors autograder/: tests/pkg/test_x.py tests autograder/pkg/, tests/test_x.py autograder/x.py."""
    tests = ROOT / "tests"
    wrong = []
    for p in sorted(tests.rglob("test_*.py")):
        rel = p.relative_to(tests)
        if rel.parts[0] in NOT_PACKAGES:
            continue
        if len(rel.parts) == 1:
            if p.stem not in CROSS_CUTTING and not (PKG / f"{p.stem[5:]}.py").exists():
                wrong.append(f"tests/{rel}: no autograder/{p.stem[5:]}.py (move it beside what it tests)")
        elif not (PKG.joinpath(*rel.parts[:-1]) / "__init__.py").exists():
            wrong.append(f"tests/{rel}: no package autograder/{'/'.join(rel.parts[:-1])}")
    assert not wrong, "\n".join(wrong)
    stray = sorted(f"tests/{m}.py" for m in CROSS_CUTTING if not (tests / f"{m}.py").exists())
    assert not stray, f"listed as cross-cutting but gone: {stray}"


def _own_names(path: Path) -> set[str]:
    """The names a module defines at its top level (a class, a function, an assignment), under ``if``/``try`` too."""
    names: set[str] = set()
    todo = list(ast.parse(path.read_text()).body)
    while todo:
        n = todo.pop()
        if isinstance(n, ast.If | ast.Try):
            todo += [*n.body, *n.orelse, *getattr(n, "finalbody", []), *(s for h in getattr(n, "handlers", [])
                                                                          for s in h.body)]
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(n.name)
        elif isinstance(n, ast.Assign | ast.AnnAssign | ast.AugAssign):
            for t in n.targets if isinstance(n, ast.Assign) else [n.target]:
                names |= {x.id for x in ast.walk(t) if isinstance(x, ast.Name)}
    return names


def test_each_name_is_imported_from_the_module_that_defines_it():
    """Our code imports a name from where it is written, never through a module that imports it itself.

    A module may re-export a name for code outside the project (staff suites import ``autograder.judge``'s
    names; older paths of the error classes stay importable: tests/test_errors.py), but a re-export inside
    the project hides where a name lives and which layer the import really reaches.
    """
    modules = _modules()
    own = {m: _own_names(p) for m, p in modules.items()}
    wrong = []
    for path in sorted(modules.values()):
        for n in ast.walk(ast.parse(path.read_text())):
            if isinstance(n, ast.ImportFrom) and n.level == 0 and n.module in own:
                wrong += [f"{path.relative_to(ROOT)}:{n.lineno}: {a.name} from {n.module}, which does not define it"
                          for a in n.names if a.name not in own[n.module] and f"{n.module}.{a.name}" not in modules]
    assert wrong == [], "import each name from the module that defines it:\n" + "\n".join(wrong)
