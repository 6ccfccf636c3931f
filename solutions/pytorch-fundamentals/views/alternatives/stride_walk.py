"""Decides by hand whether a flat view exists (walking the strides, skipping size-1 dimensions)
and builds it with as_strided; otherwise copies through clone. The storage comparison goes
through a byte view of each storage; the snippet's result is replayed element by element."""

# torchgrader: whole-file
import torch


def shares_storage(a, b):
    sa = torch.empty(0, dtype=torch.uint8, device=a.device).set_(a.untyped_storage())
    sb = torch.empty(0, dtype=torch.uint8, device=b.device).set_(b.untyped_storage())
    return a.device == b.device and sa.data_ptr() == sb.data_ptr()


def view_or_copy():
    table = {}
    for name in [
        "basic_slice",
        "select",
        "transpose",
        "permute",
        "expand",
        "unsqueeze",
        "narrow",
        "reshape_contiguous",
        "detach",
    ]:
        table[name] = "view"
    for name in [
        "fancy_index",
        "bool_mask",
        "reshape_transposed",
        "contiguous_of_transposed",
        "clone",
        "arithmetic",
        "cat",
        "to_float64",
    ]:
        table[name] = "copy"
    return table


def flatten_any(x):
    n = x.numel()
    dims = [(size, stride) for size, stride in zip(x.shape, x.stride()) if size != 1]
    flat_ok = n == 0 or all(dims[i][1] == dims[i + 1][1] * dims[i + 1][0] for i in range(len(dims) - 1))
    if flat_ok:
        step = dims[-1][1] if dims else 1
        return x.as_strided((n,), (step,), x.storage_offset())
    return x.clone(memory_format=torch.contiguous_format).as_strided((n,), (1,))


def exercise_result():
    x = [[0.0] * 3 for _ in range(2)]
    for j in range(3):  # a = x[0] is a view: a += 1
        x[0][j] += 1
    # b = x[:, [0, 2]] is a copy: b += 10 changes only b
    flat = 2 * 2 + 1  # c = x.reshape(3, 2) is a view: c[2, 1] is flat index 5
    x[flat // 3][flat % 3] = 5.0
    return torch.tensor(x, dtype=torch.float32)
