"""Misconception: torch.compile without dynamic=True (or mark_dynamic)
specializes on the first batch size and recompiles for the next one."""
# misconception: recompiles

import torch
import torch.nn as nn


def compile_dynamic(model):
    return torch.compile(model, backend="aot_eager")
