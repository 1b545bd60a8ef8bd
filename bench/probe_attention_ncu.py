"""Launches one of the benchmark's attention kernels plain, instrumented by
proton and (with `reference`) by Triton's own instrumentation, three launches
each (the instrumented ones in a session of their profiler), for `ncu` to
compare them, e.g.

    ncu --clock-control none --kernel-name regex:attention --launch-skip 2 \
        --launch-count 1 --section WarpStateStats \
        python bench/probe_attention_ncu.py causal

The first argument picks the kernel: fwd (the default), causal or bwd."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import kernels  # noqa: E402
from overhead.cases import Attention, AttentionBackward  # noqa: E402


def launch_three(case, variant, out):
    grid, args, options = case.call(out)
    fn = kernels.build(case.template, variant, case.tag)
    for _ in range(3):
        fn[grid](*args, **options)
    torch.cuda.synchronize()


def main(argv):
    which = argv[0] if argv else "fwd"
    if which == "bwd":
        case = AttentionBackward(kernels.ATTENTION_SHAPE)
    elif which in ("fwd", "causal"):
        case = Attention(kernels.ATTENTION_SHAPE, causal=which == "causal")
    else:
        raise SystemExit(f"unknown kernel {which!r}: fwd, causal or bwd")
    out = case.output()
    launch_three(case, "plain", out)
    import proton

    proton.start("/tmp/probe_attention", backend="instrumentation")
    launch_three(case, "proton", out)
    proton.finalize()
    if "reference" in argv[1:]:
        import triton.profiler as reference

        kernels.markers("reference")
        reference.start("/tmp/probe_attention_reference", backend="instrumentation")
        launch_three(case, "reference", out)
        reference.finalize()


if __name__ == "__main__":
    main(sys.argv[1:])
