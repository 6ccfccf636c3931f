"""reshape to (numel,) (copies only when needed); shares_storage from the storages' addresses and
sizes; the table measured on a tensor of its own with each operation spelled differently;
the snippet run as given."""

# torchgrader: whole-file
import torch


def shares_storage(a, b):
    sa, sb = a.untyped_storage(), b.untyped_storage()
    return (sa.device, sa.data_ptr(), sa.nbytes()) == (sb.device, sb.data_ptr(), sb.nbytes())


def view_or_copy():
    x = torch.rand(3, 5) - 0.5
    made = {
        "basic_slice": x[1:, 0::2],
        "select": x.select(1, 1),
        "transpose": x.transpose(0, 1),
        "permute": x.permute(1, 0),
        "expand": x[:1].expand(3, 5),
        "unsqueeze": x[None],
        "narrow": x.narrow(0, 1, 2),
        "fancy_index": x[torch.tensor([0, 2])],
        "bool_mask": x[x > 0],
        "reshape_contiguous": x.reshape(5, 3),
        "reshape_transposed": x.transpose(0, 1).reshape(15),
        "contiguous_of_transposed": x.transpose(0, 1).contiguous(),
        "clone": x.clone(),
        "detach": x.detach(),
        "arithmetic": x.add(1),
        "cat": torch.cat((x,)),
        "to_float64": x.double(),
    }
    return {k: "view" if shares_storage(x, v) else "copy" for k, v in made.items()}


def flatten_any(x):
    return x.reshape(x.numel())


def exercise_result():
    x = torch.zeros(2, 3)
    a = x[0]
    b = x[:, [0, 2]]
    c = x.reshape(3, 2)
    a += 1
    b += 10
    c[2, 1] = 5
    return x
