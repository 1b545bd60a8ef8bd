"""Launches the benchmark's attention kernel plain and instrumented (three
launches each, the instrumented ones in a proton session), for `ncu` to
compare the two (e.g. `ncu --clock-control none --kernel-name
regex:attention --launch-skip 2 --launch-count 1 --section WarpStateStats
python bench/probe_attention_ncu.py causal`)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402

import kernels  # noqa: E402
from overhead.cases import Attention  # noqa: E402


def main(argv):
    causal = "causal" in argv
    case = Attention(kernels.ATTENTION_SHAPE, causal=causal)
    out = case.output()
    grid, args, options = case.call(out)
    plain = kernels.build("attention_fwd", "plain", case.tag)
    for _ in range(3):
        plain[grid](*args, **options)
    torch.cuda.synchronize()
    import proton

    instrumented = kernels.build("attention_fwd", "proton", case.tag)
    proton.start("/tmp/probe_attention", backend="instrumentation")
    for _ in range(3):
        instrumented[grid](*args, **options)
    torch.cuda.synchronize()
    proton.finalize()


if __name__ == "__main__":
    main(sys.argv[1:])
