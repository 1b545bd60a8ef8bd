"""The differential harness's own logic on the CPU (bench/differential): its
comparisons of saved outputs (determinism, changes by a session, distance
from PyTorch, bf16 read by hand), the checks of a session run, and the
copy of a library kernel with a pl.scope (compiled for sm_90 with the
session's hook). The harness itself runs on the GPU (test_gpu_differential.py)."""

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from triton.backends.compiler import GPUTarget

from proton.compiling.compiler import PipelineOptions
from proton.compiling.stage_hook import StageHook

from kernels import compile_kernel
import suite_paths

sys.path.insert(0, str(suite_paths.REPO / "bench"))
from differential import compare, run, sessions  # noqa: E402


def save(folder: Path, outputs: dict) -> str:
    """Outputs as driver.py saves them: raw bytes plus dtype and shape."""
    folder.mkdir(parents=True)
    np.savez(
        folder / "outputs.npz",
        **{k: np.ascontiguousarray(v).reshape(-1).view(np.uint8) for k, (v, _) in outputs.items()},
    )
    described = {k: {"dtype": dtype, "shape": list(np.shape(v))} for k, (v, dtype) in outputs.items()}
    (folder / "outputs.json").write_text(json.dumps(described))
    return str(folder)


def bf16(values) -> np.ndarray:
    """float32 values truncated to bf16, as their 16-bit patterns."""
    return (np.asarray(values, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)


def test_bf16_bytes_are_read_as_their_values():
    raw = bf16([1.0, -2.5, 6.71875]).view(np.uint8)
    assert compare.values(raw, "bfloat16").tolist() == [1.0, -2.5, 6.71875]


def test_deterministic_outputs_and_what_a_session_changed(tmp_path):
    a = save(tmp_path / "a", {"x": (np.arange(4, dtype=np.float32), "float32"), "y": (bf16([1, 2]), "bfloat16")})
    b = save(tmp_path / "b", {"x": (np.arange(4, dtype=np.float32), "float32"), "y": (bf16([1, 3]), "bfloat16")})
    names, nondeterministic = compare.deterministic(compare.load(a), compare.load(b))
    assert names == ["x"] and nondeterministic == ["y"]
    changed_x = np.arange(4, dtype=np.float32)
    changed_x[2] = 8.9e37
    s = save(tmp_path / "s", {"x": (changed_x, "float32"), "y": (bf16([5, 5]), "bfloat16")})
    changed = compare.changed_by_session(compare.load(a), compare.load(s), names)
    assert set(changed) == {"x"}  # y is not deterministic: not held against the session
    assert changed["x"]["elements"] == 1 and changed["x"]["at"][0] == 2.0
    assert changed["x"]["at"][1] == pytest.approx(8.9e37, rel=1e-6)
    assert compare.changed_by_session(compare.load(a), compare.load(a), names) == {}
    missing = save(tmp_path / "m", {"y": (bf16([1, 2]), "bfloat16")})
    assert compare.changed_by_session(compare.load(a), compare.load(missing), names) == {"x": {"missing": True}}


def test_nan_in_both_runs_is_no_change(tmp_path):
    a = save(tmp_path / "a", {"x": (np.array([np.nan, 1.0], dtype=np.float32), "float32")})
    b = save(tmp_path / "b", {"x": (np.array([np.nan, 1.0], dtype=np.float32), "float32")})
    assert compare.changed_by_session(compare.load(a), compare.load(b), ["x"]) == {}


def test_outputs_far_from_pytorch_are_the_librarys_own(tmp_path):
    lib = save(tmp_path / "lib", {"loss": (bf16([0.00006]), "bfloat16"), "ok": (bf16([1.0, 2.0]), "bfloat16")})
    ref = save(tmp_path / "ref", {"loss": (bf16([6.71875]), "bfloat16"), "ok": (bf16([1.0, 2.0078125]), "bfloat16")})
    far = compare.against_reference(compare.load(lib), compare.load(ref))
    assert set(far) == {"loss"} and far["loss"]["reference_max"] == 6.71875


def test_a_session_run_is_checked_for_changes_errors_and_silent_kernels(tmp_path):
    plain = save(tmp_path / "plain", {"x": (np.arange(3, dtype=np.float32), "float32")})
    session = save(tmp_path / "mma", {"x": (np.array([0, 1, 7], dtype=np.float32), "float32")})
    result = {
        "status": 0,
        "dir": session,
        "report": {
            "events": 10,
            "errors": ["mm launch 1: no metadata for kernel id 5"],
            "per_kernel": {"mm": {"kept": 2, "events": 10}, "addmm": {"kept": 1, "events": 0}},
            "unrecorded": {"cached": {"launches": 3, "reason": "not compiled by the session"}},
        },
    }
    problems = run.check(sessions.KINDS["mma"], result, compare.load(plain), ["x"])
    assert any("1 deterministic outputs changed: x" in p for p in problems)
    assert any("1 report errors" in p for p in problems)
    assert any("kept without events: addmm" in p for p in problems)
    assert any("without records although instrumented: cached" in p for p in problems)
    clean = {"status": 0, "dir": plain, "report": {"kernels": 4}}
    assert run.check(sessions.KINDS["host"], clean, compare.load(plain), ["x"]) == []
    assert "saw no kernel" in run.check(sessions.KINDS["host"], {**clean, "report": {}}, compare.load(plain), ["x"])[0]
    assert "exit status 1" in run.check(sessions.KINDS["host"], {"status": 1}, compare.load(plain), ["x"])[0]


LIBRARY_KERNEL = '''
import triton
import triton.language as tl

SCALE = tl.constexpr(2.0)


@triton.jit(do_not_specialize=["n"])
def axpy_kernel(x, out, n, BLOCK: tl.constexpr, SKIP_TAIL: tl.constexpr):
    """A library's kernel: a docstring, a global, constexprs, an early return."""
    pid = tl.program_id(0)
    if SKIP_TAIL:
        if pid * BLOCK >= n:
            return
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, SCALE * tl.load(x + offs, mask=mask), mask=mask)
'''


def test_a_library_kernel_copied_with_a_scope_records_it(tmp_path, monkeypatch):
    (tmp_path / "somelib.py").write_text(LIBRARY_KERNEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    import somelib

    scoped = sessions.with_scope(somelib.axpy_kernel, "axpy_kernel", str(tmp_path))
    assert scoped.do_not_specialize == ["n"]
    source = Path(scoped.fn.__code__.co_filename).read_text()
    # Triton allows no `return` inside `with`: the scope ends before each return and at the end.
    assert source.count("_proton_pl.enter_scope('axpy_kernel')") == 1 and '"""A library' in source
    assert source.count("_proton_pl.exit_scope('axpy_kernel')") == 2
    signature = {"x": "*fp32", "out": "*fp32", "n": "i32"}
    for skip_tail in (False, True):
        with StageHook(PipelineOptions()):
            kernel = compile_kernel(scoped, signature, GPUTarget("cuda", 90, 32), BLOCK=256, SKIP_TAIL=skip_tail)
        scopes = json.loads(kernel.metadata.proton)["scopes"]
        assert [s["name"] for s in scopes] == ["axpy_kernel"] and kernel.metadata.profile_scratch_size > 0
    plain = compile_kernel(somelib.axpy_kernel, signature, GPUTarget("cuda", 90, 32), BLOCK=256, SKIP_TAIL=True)
    assert plain.metadata.profile_scratch_size == 0  # the library's own kernel is untouched
