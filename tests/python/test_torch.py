"""cks.torch without a GPU: the op's registration, checks, fake implementation, autograd formula and
the mapping of PyTorch's row-major (and transposed-view) tensors onto the runtime's column-major
problem, checked by computing that problem on the CPU exactly as the runtime reads memory.

Skipped without torch (CI installs none); the GPU half is scripts/device/python_check.sh."""

from __future__ import annotations

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")
ct = pytest.importorskip("cks.torch")


def bf16(*shape: int, device: str = "cpu") -> torch.Tensor:
    return torch.randn(*shape, dtype=torch.bfloat16, device=device)


def test_the_op_is_registered() -> None:
    assert hasattr(torch.ops.cks, "mm")
    assert "cks::mm(Tensor a, Tensor b) -> Tensor" in str(torch.ops.cks.mm.default._schema)


def test_bad_tensors_raise() -> None:
    with pytest.raises(ValueError, match=r"^cks.torch.mm: expected CUDA tensors on one device \(got cpu and cpu\)$"):
        ct.mm(bf16(16, 8), bf16(8, 4))
    with pytest.raises(ValueError, match="expected torch.bfloat16 tensors"):
        ct.mm(torch.zeros(16, 8, device="meta"), torch.zeros(8, 4, device="meta"))
    with pytest.raises(ValueError, match="expected 2-D tensors"):
        ct.mm(bf16(2, 16, 8, device="meta"), bf16(8, 4, device="meta"))
    with pytest.raises(ValueError, match=r"shapes \(16, 8\) and \(6, 4\) cannot be multiplied"):
        ct.mm(bf16(16, 8, device="meta"), bf16(6, 4, device="meta"))


def test_fake_tensors_and_autograd_shapes() -> None:
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        a = torch.empty(64, 32, dtype=torch.bfloat16, device="cuda")
        b = torch.empty(16, 32, dtype=torch.bfloat16, device="cuda").t()
        out = ct.mm(a, b)
        assert (out.shape, out.stride(), out.device.type) == ((64, 16), (16, 1), "cuda")
    a = bf16(64, 32, device="meta").requires_grad_()
    b = bf16(32, 16, device="meta").requires_grad_()
    ct.mm(a, b).sum().backward()
    assert a.grad is not None and b.grad is not None
    assert (a.grad.shape, b.grad.shape) == ((64, 32), (32, 16))


def test_traced_as_one_op() -> None:
    from torch.fx.experimental.proxy_tensor import make_fx

    graph = make_fx(lambda x, y: ct.mm(x, y) * 2, tracing_mode="fake")(bf16(64, 32, device="meta"), bf16(32, 16, device="meta"))
    assert "torch.ops.cks.mm.default" in graph.code
    compiled = torch.compile(lambda x, y: ct.mm(x, y) + 1, backend="aot_eager", fullgraph=True)
    assert compiled(bf16(64, 32, device="meta"), bf16(32, 16, device="meta")).shape == (64, 16)


def column_major_gemm(m: int, n: int, k: int, layout: str, first: torch.Tensor, second: torch.Tensor) -> torch.Tensor:
    """What the runtime computes from the operands' memory (packed, as it reads it): D (m x n,
    column-major) = A (m x k) B (k x n), A column-major ("n", lda = m) or row-major ("t", lda = k),
    B column-major ("n", ldb = k) or row-major ("t", ldb = n); returns D's memory, m * n values."""

    def memory(t: torch.Tensor) -> torch.Tensor:  # the packed operand's elements in memory order
        return torch.as_strided(t, (t.numel(),), (1,))

    a = memory(first).reshape(k, m).t() if layout[0] == "n" else memory(first).reshape(m, k)
    b = memory(second).reshape(n, k).t() if layout[1] == "n" else memory(second).reshape(k, n)
    return (a.double() @ b.double()).t().reshape(-1)  # column-major: column after column


@pytest.mark.parametrize("a_t", [False, True])
@pytest.mark.parametrize("b_t", [False, True])
@pytest.mark.parametrize("strided", [False, True])
def test_layout_mapping(a_t: bool, b_t: bool, strided: bool) -> None:
    M, N, K = 24, 40, 16
    a = torch.randn(K, M).t() if a_t else torch.randn(M, K)  # a transposed view: column-major
    b = torch.randn(N, K).t() if b_t else torch.randn(K, N)
    if strided:  # every other column: neither layout, copied
        a = torch.randn(M, 2 * K)[:, ::2]
    m, n, k, layout, first, second = ct._plan(a, b)
    assert (m, n, k) == (N, M, K)  # row-major C = A B is column-major C^T = B^T A^T
    assert layout == ("t" if b_t else "n") + ("t" if a_t and not strided else "n")
    assert first.data_ptr() == b.data_ptr()
    assert (second.data_ptr() == a.data_ptr()) == (not strided)  # a view is passed as it is, no copy
    out = column_major_gemm(m, n, k, layout, first, second).reshape(M, N)  # D's memory read as row-major C
    torch.testing.assert_close(out, (a.double() @ b.double()))


@pytest.mark.parametrize("a_t", [False, True])
@pytest.mark.parametrize("v_view", [False, True])
def test_a_matrix_times_a_vector_is_the_runtimes_m_by_1(a_t: bool, v_view: bool) -> None:
    M, K = 24, 16
    a = torch.randn(K, M).t() if a_t else torch.randn(M, K)
    v = torch.randn(1, K).t() if v_view else torch.randn(K, 1)
    m, n, k, layout, first, second = ct._plan(a, v)
    assert (m, n, k, layout) == (M, 1, K, ("n" if a_t else "t") + "n")  # M is the runtime's M: the kernels run it
    assert first.data_ptr() == a.data_ptr() and second.data_ptr() == v.data_ptr()
    out = column_major_gemm(m, n, k, layout, first, second).reshape(M, 1)  # D (M x 1) is C's memory
    torch.testing.assert_close(out, a.double() @ v.double())
    # A column of a wider matrix (stride K x 2) is copied, then the same problem.
    w = torch.randn(K, 2)
    m2, n2, k2, layout2, _, second2 = ct._plan(a, w[:, :1])
    assert (m2, n2, k2, layout2) == (M, 1, K, layout) and second2.is_contiguous()


def test_problem_of_a_linear_layer() -> None:
    x, w = bf16(8, 4096), bf16(14336, 4096)
    assert ct.problem(x, w.t()) == (14336, 8, 4096, "tn")  # x @ w.t(): decode M = 8 is the runtime's N


def test_import_cks_does_not_import_torch() -> None:
    code = "import sys, cks; print('torch' in sys.modules); import cks.torch; print('torch' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["False", "True"]


def test_the_eager_fast_path_is_taken_only_without_dispatcher_work() -> None:
    from torch._subclasses.fake_tensor import FakeTensorMode

    # CPU and meta tensors, fake tensors and tensors that need autograd go through the op.
    assert not ct._eager_fast_path(bf16(16, 8), bf16(8, 4))
    assert not ct._eager_fast_path(bf16(16, 8, device="meta"), bf16(8, 4, device="meta"))
    with FakeTensorMode():
        a = torch.empty(16, 8, dtype=torch.bfloat16, device="cuda")
        b = torch.empty(8, 4, dtype=torch.bfloat16, device="cuda")
        assert not ct._eager_fast_path(a, b)


def test_the_module_counts_its_host_time(tmp_path) -> None:
    import json

    opts = {"kernel_cache": str(tmp_path / "k"), "tuning_file": str(tmp_path / "t.csv")}
    assert json.loads(ct.configure(**opts).describe())["autotune_host_us"] == 8
    assert json.loads(ct.configure(**opts, autotune_host_us=0).describe())["autotune_host_us"] == 0
    described = json.loads(ct.configure(**opts).describe())
    assert (described["autotune_lt_margin_pct"], described["autotune_lt_margin_us"]) == (3, 1)
    described = json.loads(ct.configure(**opts, autotune_lt_margin_pct=0, autotune_lt_margin_us=0).describe())
    assert (described["autotune_lt_margin_pct"], described["autotune_lt_margin_us"]) == (0, 0)
    ct.configure(**opts)  # the module's default again for the other tests


def test_autotune_compares_with_torch_matmul_only_when_asked(tmp_path, monkeypatch) -> None:
    opts = {"kernel_cache": str(tmp_path / "k"), "tuning_file": str(tmp_path / "t.csv")}
    monkeypatch.delenv("CKS_TORCH_COMPARE", raising=False)
    ct.configure(**opts, mode="autotune")
    assert not ct._compare, "off unless asked for"
    ct.configure(**opts, mode="autotune", compare_torch=True)
    assert ct._compare
    ct.configure(**opts, mode="select", compare_torch=True)  # only autotune mode compares
    assert not ct._compare
    monkeypatch.setenv("CKS_TORCH_COMPARE", "1")
    ct.configure(**opts, mode="autotune")
    assert ct._compare
    ct.configure(**opts, mode="autotune", compare_torch=False)  # the argument over the environment
    assert not ct._compare
    monkeypatch.setenv("CKS_TORCH_COMPARE", "yes")
    with pytest.raises(ValueError, match="CKS_TORCH_COMPARE"):
        ct.configure(**opts, mode="autotune")
    monkeypatch.delenv("CKS_TORCH_COMPARE")
    ct._routes[(0, 8, 8, 8, "nn")] = True
    ct.configure(**opts)  # a new runtime tunes afresh: no route survives it
    assert not ct._routes


def test_the_comparison_keeps_the_faster_in_the_median_round() -> None:
    # Round by round (the clock moves both of a round's times): cks slower in 3 of 5 rounds, by a
    # median 2 %: within the margin, the runtime keeps it; by 5 %, torch.matmul takes it.
    won, ratio = ct._verdict([10.0, 11.0, 9.0, 10.5, 10.2], [10.1, 10.0, 9.5, 10.0, 10.0])
    assert not won and ratio == pytest.approx(1.02)
    won, ratio = ct._verdict([10.5, 10.5, 9.0, 10.6, 10.0], [10.0, 10.0, 9.5, 10.0, 10.0])
    assert won and ratio == pytest.approx(1.05)
    won, ratio = ct._verdict([9.0, 9.1], [10.0, 10.0])
    assert not won and ratio == pytest.approx(0.905)
    with pytest.raises(ValueError, match="rounds"):
        ct._verdict([1.0], [])
