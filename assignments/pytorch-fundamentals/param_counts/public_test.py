"""Public tests for `param_counts` (the hidden suite checks much more)."""

from autograder.judge import check


def test_linear_param_count_example(student):
    """linear_param_count(20, 30)"""
    got = student.linear_param_count(20, 30)
    check(got == 630, f"linear_param_count(20, 30) returned {got!r}; nn.Linear(20, 30) has "
                      "a 30x20 weight and a bias of 30.")


def test_mlp_param_count_example(student):
    """mlp_param_count([784, 256, 10])"""
    got = student.mlp_param_count([784, 256, 10])
    check(got == 203530, f"mlp_param_count([784, 256, 10]) returned {got!r}, expected 203530.")


def test_layerstack_builds(student, sandbox):
    """LayerStack(2, 3) can be built and is an nn.Module"""
    m = student.LayerStack(2, 3)
    check("torch.nn.modules.module.Module" in m.remote_mro,
          "LayerStack(2, 3) should be an instance of nn.Module.")


def test_count_parameters_of_a_linear_layer(student, sandbox):
    """count_parameters(nn.Linear(4, 3))"""
    got = student.count_parameters(sandbox.ref("torch.nn.Linear")(4, 3))
    check(got == 15, f"count_parameters(nn.Linear(4, 3)) returned {got!r}: a 3x4 weight and a bias of 3 are 15.")
