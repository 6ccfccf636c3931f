"""Public tests for compile: the hidden suite uses other sizes and weights,
counts graphs with its own backend and checks compile_dynamic's recompiles."""
import torch


def _weights(d_in, d_h, d_out):
    return {"fc1.weight": torch.randn(d_h, d_in), "fc1.bias": torch.randn(d_h),
            "fc2.weight": torch.randn(d_out, d_h) * 0.5, "fc2.bias": torch.randn(d_out)}


def test_same_function_as_chatty(student):
    """CompileFriendlyMLP gives ChattyMLP's outputs for ChattyMLP's weights"""
    sd = _weights(3, 7, 2)
    chatty = student.ChattyMLP(3, 7, 2)
    chatty.load_state_dict(sd)
    friendly = student.CompileFriendlyMLP(3, 7, 2)
    friendly.load_state_dict(sd)
    for scale in (3.0, 0.05):      # some activations above 6, then none
        x = torch.randn(10, 3) * scale
        expected, got = chatty(x), friendly(x)
        assert torch.allclose(got, expected, rtol=1e-5, atol=1e-5), (
            f"CompileFriendlyMLP differs from ChattyMLP (input scale {scale}): "
            f"max abs difference {(got - expected).abs().max().item():.3g}")


def test_fullgraph_compiles(student, sandbox):
    """torch.compile(CompileFriendlyMLP, fullgraph=True) runs without a graph break"""
    model = student.CompileFriendlyMLP(3, 7, 2)
    compiled = sandbox.ref("torch.compile")(model, backend="eager", fullgraph=True)
    out = compiled(torch.randn(4, 3))
    assert tuple(out.shape) == (4, 2), f"unexpected output shape {tuple(out.shape)}"


def test_compile_dynamic_returns_a_compiled_model(student, sandbox):
    """compile_dynamic(model) returns torch.compile's wrapper of the model"""
    compiled = student.compile_dynamic(sandbox.ref("torch.nn.Linear")(3, 2))
    mro = getattr(compiled, "remote_mro", ())
    assert any(name.endswith("OptimizedModule") for name in mro), (
        f"compile_dynamic(model) returned {mro[0] if mro else type(compiled).__name__}, not a compiled model: "
        "return what torch.compile gives back (the hidden tests also check that it does not recompile when the "
        "batch size changes).")
