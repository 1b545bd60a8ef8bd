"""GPU: the Triton kernels of a torch.compile'd model are instrumented in MMA
mode (Inductor's matmul templates through max-autotune, with its default
compile workers, its benchmarking and with caches warmed by a plain run
first), a user kernel with a scope inside a compiled function records it,
and so do the kernels torch.compile's CUDA graph trees run (max-autotune).
Outputs are compared with the plain run's. Runs examples/torch_compile_model.py."""

import json
import os
import subprocess
import sys

import pytest
import suite_paths

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.gpu

EXAMPLE = suite_paths.EXAMPLES / "torch_compile_model.py"


def run(tmp_path, mode, *flags):
    env = dict(
        os.environ,
        TORCHINDUCTOR_CACHE_DIR=str(tmp_path / "inductor"),  # shared by both runs: warm caches
        TRITON_CACHE_DIR=str(tmp_path / "triton"),
    )
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--mode", mode, *flags],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-6000:]
    return done


@pytest.mark.parametrize("mode", ["max-autotune-no-cudagraphs", "max-autotune"])
def test_compiled_model_kernels_are_recorded_with_warm_caches(tmp_path, mode):
    run(tmp_path, mode, "--plain", "--save", "plain.pt")
    done = run(tmp_path, mode, "--save", "profiled.pt")
    plain, profiled = torch.load(tmp_path / "plain.pt"), torch.load(tmp_path / "profiled.pt")
    assert torch.allclose(plain["model"].float(), profiled["model"].float(), rtol=1e-2, atol=1e-2)
    assert torch.equal(plain["user"], profiled["user"])
    report = json.loads((tmp_path / "profiled.pt.json").read_text())["report"]
    assert report["errors"] == []
    recorded = {k: v["events"] for k, v in report["per_kernel"].items() if v["events"]}
    # The user's kernel: one scope per warp of its 64 CTAs (4 warps).
    user = [k for k in recorded if k.startswith("scaled_add")]
    assert len(user) == 1 and recorded[user[0]] == 64 * 4, recorded
    templates = [k for k in report["per_kernel"] if k.startswith("triton_tem")]
    assert templates, report
    # Inductor's matmul templates: MMA scopes in every launch, CUDA graph trees' included (their
    # warm-up runs are kept as any launch; captured launches write into the profiler's memory,
    # outside the trees' pool, and every replay is recorded).
    assert all(recorded.get(k) for k in templates), (recorded, report["unrecorded"])
    print(f"{mode}: recorded {recorded}; without records {list(report['unrecorded'])}; graphs {report['graphs']}")
    print(done.stderr[-3000:])
