"""On a GPU (an H100): every corpus case with a `launch` runs plain, then in
an instrumentation session with the same seeds. The outputs must be
bit-identical, and the session must record exactly the scope events the case
expects (in total and per scope name, from the .hatchet tree)."""

import json
from collections import Counter

import pytest

torch = pytest.importorskip("torch")

import proton  # noqa: E402

from corpus import CASES  # noqa: E402

pytestmark = pytest.mark.gpu

LAUNCHED = [pytest.param(case, id=case.name) for case in CASES if case.launch is not None]


def _capability():
    return torch.cuda.get_device_capability() if torch.cuda.is_available() else (0, 0)


def _bits(t):
    """The tensor's bytes: equal bytes are bit-identical values, NaNs included."""
    return t.detach().contiguous().view(-1).view(torch.uint8)


def _scope_counts(tree_path):
    counts = Counter()

    def walk(node):
        for child in node["children"]:
            counts[child["frame"]["name"]] += child["metrics"]["count"]
            walk(child)

    root, _devices = json.load(open(tree_path))  # [ROOT, device info]
    for kernel in root["children"]:
        walk(kernel)
    return dict(counts)


@pytest.mark.parametrize("case", LAUNCHED)
def test_profiled_launch_is_bit_identical_and_counts_events(case, tmp_path):
    if "cuda:90" not in case.launch_targets or "cuda:90" not in case.targets:
        pytest.skip(f"{case.name} is not launched on NVIDIA")
    if _capability() < case.min_capability:
        pytest.skip(f"{case.name} needs sm_{case.min_capability[0]}{case.min_capability[1]}")

    plain = case.launch(case, "cuda")
    torch.cuda.synchronize()

    proton.start(str(tmp_path / case.name), backend="instrumentation", mode="default", quiet=True)
    try:
        profiled = case.launch(case, "cuda")
        torch.cuda.synchronize()
    finally:
        report = proton.finalize()

    assert len(profiled) == len(plain)
    for i, (a, b) in enumerate(zip(plain, profiled)):
        assert a.dtype == b.dtype and a.shape == b.shape
        if i in case.unstable_outputs:
            continue  # the plain build itself does not reproduce it (see the case)
        if case.exact:
            assert torch.equal(_bits(a), _bits(b)), f"output {i} differs between plain and profiled runs"
        else:
            torch.testing.assert_close(b, a, equal_nan=True)

    expected = case.events()
    assert report.errors == []
    assert report.dropped_events == 0 and report.unmatched_records == 0
    assert report.launches_kept == 1
    assert report.events == sum(expected.values())
    assert _scope_counts(report.files["tree"]) == expected
