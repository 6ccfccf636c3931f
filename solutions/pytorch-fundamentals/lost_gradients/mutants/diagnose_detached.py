# misconception: diagnose_detached
"""Misconception: thinks .to(device) detaches the tensor and that argmax merely detaches the
graph (instead of being non-differentiable)."""


def diagnose():
    return {1: "detached", 2: "not_retained", 3: "detached"}
