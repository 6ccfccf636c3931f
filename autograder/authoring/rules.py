"""Rule coverage: every rule of the contract is checked by a hidden test that says so.

The contract's rules have ids in the course's own material (``exercise.toml``'s ``[rules]`` and
``assignment.toml``'s ``[conventions]``, read by :mod:`autograder.assignment`); each hidden test declares
the ones it checks with ``@pytest.mark.rules("id", ...)`` (read by :mod:`autograder.judge.collect`).
A mistake nobody listed is caught only where its rule is checked at all: a rule no test declares is
a hole in the suite, and ``validate`` fails on it, with the coverage per exercise in its table.
"""

from __future__ import annotations

from autograder.assignment import EXERCISE_TOML, Assignment, closest
from autograder.authoring.lint import CollectedTest, ExerciseFacts, Problem


def declares_rules(assignment: Assignment) -> bool:
    """Whether the assignment names its rules at all (conventions or any exercise's rules): a course that
    does not is not held to coverage (its tests need no ``rules`` mark)."""
    return bool(assignment.conventions) or any(e.rules for e in assignment.exercises)


def rule_coverage(assignment: Assignment, by_ex: dict[str, list[CollectedTest]],
                  facts: dict[str, ExerciseFacts]) -> list[Problem]:
    """Fill each exercise's ``facts.rules`` (rule -> tests declaring it) and ``facts.exempt``; the authoring
    problems: a hidden test without a ``rules`` mark, a mark naming an id the exercise does not have, an
    exemption from a convention the assignment does not declare."""
    problems: list[Problem] = []
    if not declares_rules(assignment):
        return problems
    for ex in assignment.exercises:
        known = assignment.rules_of(ex)
        covered: dict[str, list[str]] = {rid: [] for rid in known}
        for rid in ex.conventions_exempt:
            if rid not in assignment.conventions:
                problems.append(Problem(ex.toml, None, f"`conventions_exempt` names {rid!r}, which is not a "
                                        f"convention of {assignment.id} (its conventions: "
                                        f"{', '.join(assignment.conventions) or 'none'})", ex.id))
        for t in by_ex.get(ex.id, []):
            test = t.nodeid.split("::")[-1]
            if t.rules is None:
                problems.append(Problem(t.path, t.line, f"{test} has no @pytest.mark.rules(...): declare the "
                                        f"rules of the contract it checks (ids: {', '.join(known)})", ex.id))
                continue
            if not t.rules:
                problems.append(Problem(t.path, t.line, f"{test}: @pytest.mark.rules() names no rule", ex.id))
            for rid in t.rules:
                if rid in covered:
                    covered[rid].append(test)
                else:
                    why = (" (this exercise is exempt from it)" if rid in ex.conventions_exempt else
                           closest(rid, list(known)))
                    problems.append(Problem(t.path, t.line, f"{test} declares the rule {rid!r}, which "
                                            f"{ex.id}'s {EXERCISE_TOML} [rules] and the assignment's "
                                            f"[conventions] do not define{why}", ex.id))
        if ex.id in facts:
            facts[ex.id].rules = covered
            facts[ex.id].exempt = dict(ex.conventions_exempt)
    return problems


def coverage(f: ExerciseFacts) -> tuple[bool, str]:
    """(every rule checked, the coverage line of validate's table) for one exercise."""
    unchecked = [rid for rid, tests in f.rules.items() if not tests]
    counts = ", ".join(f"{rid} ({len(tests)})" for rid, tests in f.rules.items() if tests)
    exempt = "; exempt: " + ", ".join(f"{rid} ({why})" for rid, why in f.exempt.items()) if f.exempt else ""
    if unchecked:
        return False, (f"{len(f.rules) - len(unchecked)}/{len(f.rules)} rules of the contract checked; no hidden "
                       f"test checks {', '.join(f'`{r}`' for r in unchecked)}: a mistake against it earns full "
                       "marks. Add a test that checks it and declares it (@pytest.mark.rules(...)); checked: "
                       f"{counts or 'none'}{exempt}")
    return True, f"{len(f.rules)}/{len(f.rules)} rules of the contract checked (tests per rule): {counts}{exempt}"
