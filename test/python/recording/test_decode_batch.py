"""Launches decoded together (decode_batch, kept_decoding.decode_window)
equal each launch decoded alone, whatever mix of kernels, layouts and
timings a window holds; batches the decoder cannot do exactly fall back
to one launch at a time, errors still naming their launch."""

import dataclasses

import numpy as np
import pytest

import synthetic_buffers as synthetic
from proton.contract.events import LaunchEvents
from proton.recording import decode, decode_batch, kept_decoding
from proton.recording.buffer import BufferFormatError

from test_decode import make


def later(launch):
    """make()'s buffer as launch `launch` of a loop: later clocks and timer
    stamps, a slightly different clock rate."""
    return make(ctas=3, clk0=10**12 + 7_919 * launch, gt0=1_763_000_000 * 10**9 + 5_003 * launch)[0]


def assert_same(got: LaunchEvents, want: LaunchEvents):
    for f in dataclasses.fields(LaunchEvents):
        a, b = getattr(got, f.name), getattr(want, f.name)
        if isinstance(b, np.ndarray):
            assert a.dtype == b.dtype and a.shape == b.shape and (a == b).all(), f.name
        elif f.name == "asynchronous":
            assert a.num_events == b.num_events == 0 and a.num_values == b.num_values == 0
        else:
            assert a == b, f.name


@pytest.mark.parametrize("cost", [0.0, 3.5])
@pytest.mark.parametrize("clock_bits", [64, 32])
def test_a_batch_equals_each_launch_decoded_alone(cost, clock_bits):
    buffers, want = [], []
    for launch in range(5):
        data, meta = make(ctas=3, clock_bits=clock_bits, clk0=10**12 + 1_000_003 * launch, gt0=10**18 + 777 * launch)
        buffers.append(data)
        want.append(decode.decode(data, meta, 3, kernel="k", launch=launch + 10, record_cost_cycles=cost))
    got = decode_batch.decode_launches(
        np.stack(buffers), meta, kernel="k", launches=list(range(10, 15)), record_cost_cycles=cost
    )
    assert len({ev.origin_ns for ev in got}) == 5
    for g, w in zip(got, want):
        assert_same(g, w)


def test_lost_records_and_warps_of_different_sequences():
    """Full rings (records lost, unmatched ones) and warps that wrote
    different sequences: the pairing's general path, split per launch."""
    rng = np.random.default_rng(11)
    scopes = [("kernel", -1), ("a", 0), ("b", 0)]
    lay = synthetic.layout(num_warps=2, segment_bytes=128)  # 16 records a warp
    buffers, want = [], []
    for launch in range(4):
        n = 20
        patterns = [[(0, 0), (1, 0), (1, 1), (0, 1)], [(2, 0), (2, 1)]]
        tags = synthetic.pattern_tags(rng, patterns, 3, 2, n)
        start = np.uint64(10**10 + 10**7 * launch) + rng.integers(0, 1000, size=(3, 2)).astype(np.uint64)
        clocks = start[:, :, None] + np.cumsum(rng.integers(1, 300, size=(3, 2, n)), axis=2).astype(np.uint64)
        end = clocks[:, :, -1] + np.uint64(40)
        gt0 = np.uint64(1_700_000_000 * 10**9)
        data = synthetic.build(
            lay,
            tags,
            clocks,
            clk_start=start,
            clk_end=end,
            gt_start=gt0 + start // np.uint64(2),
            gt_end=gt0 + end // np.uint64(2),
        )
        meta = synthetic.metadata(scopes, lay)
        buffers.append(data)
        want.append(decode.decode(data, meta, 3, kernel="k", launch=launch))
    assert any(ev.dropped.sum() for ev in want) and any(ev.unmatched for ev in want)
    got = decode_batch.decode_launches(buffers, meta, kernel="k", launches=list(range(4)))
    for g, w in zip(got, want):
        assert_same(g, w)


class FakeSlice:
    """A kept launch's buffer, read as the device memory reads one."""

    def __init__(self, data):
        self.data, self.nbytes = data, data.nbytes

    def read(self, out=None):
        if out is None:
            return self.data.copy()
        out[:] = self.data
        return out


@dataclasses.dataclass
class FakeKept:
    buffer: FakeSlice
    index: int
    call_stack: tuple = ()


def test_a_window_of_interleaved_kernels_and_layouts():
    """Kernels a, b (another layout), a, c (a bad buffer), b, a: each
    launch as decode.decode gives it, in the window's order."""
    a, meta_a = make(ctas=3)
    b, meta_b = make(ctas=2, segments=2, segment_bytes=512, kernel_id=8)
    bad = a.copy()
    bad[:4] = 0  # no header magic
    plan = [
        ("a", a, meta_a),
        ("b", b, meta_b),
        ("a", a, meta_a),
        ("c", bad, meta_a),
        ("b", b, meta_b),
        ("a", a, meta_a),
    ]
    window = []
    for index, (kernel, data, meta) in enumerate(plan):
        data = later(index) if kernel == "a" else data
        kept = FakeKept(FakeSlice(data), index, call_stack=(f"step {index}",))
        window.append(kept_decoding.KeptBuffer(kept, kernel, meta))
    results = kept_decoding.decode_window(window, 0.0)
    for item, result in zip(window, results):
        data = item.kept.buffer.data
        ctas = data.nbytes // item.meta.layout.bytes_per_cta
        if item.kernel == "c":
            assert isinstance(result, BufferFormatError) and "CTA 0 segment 0" in str(result)
            continue
        want = decode.decode(data, item.meta, ctas, kernel=item.kernel, launch=item.kept.index)
        want.call_stack = item.kept.call_stack
        assert_same(result, want)


def test_what_the_batch_cannot_do_exactly_is_refused():
    data, meta = make(ctas=3)
    with pytest.raises(decode_batch.NotBatchable):
        decode_batch.decode_launches([data, data[:-8]], meta, kernel="k", launches=[0, 1])
    long, meta32 = make(ctas=3, clock_bits=32)
    stretched = long.copy()
    # A warp that lived past a 32-bit clock wrap: decoded one launch at a time.
    from proton.recording import buffer as raw_buffer

    words = stretched.view(np.uint32).reshape(3, 4, -1)
    words[0, 0, raw_buffer.W_CLOCK_END + 1] += 2
    with pytest.raises((decode_batch.NotBatchable, BufferFormatError)):
        decode_batch.decode_launches([long, stretched], meta32, kernel="k", launches=[0, 1])


@pytest.mark.parametrize("workers", [2, 3])
def test_a_window_decoded_on_threads_equals_one_thread(monkeypatch, workers):
    """Batches cut into parts on threads (a bad buffer in one part): each
    launch as decode.decode gives it, in the window's order."""
    monkeypatch.setattr(kept_decoding, "MIN_PART", 2)
    a, meta_a = make(ctas=3)
    bad = a.copy()
    bad[:4] = 0
    window = []
    for index in range(11):
        data = bad if index == 7 else later(index)
        window.append(kept_decoding.KeptBuffer(FakeKept(FakeSlice(data), index, (f"s{index}",)), "a", meta_a))
    threaded = kept_decoding.decode_window(window, 0.0, workers=workers)
    alone = kept_decoding.decode_window(window, 0.0)
    for index, (got, want) in enumerate(zip(threaded, alone)):
        if index == 7:
            assert isinstance(got, BufferFormatError) and str(got) == str(want)
            continue
        assert_same(got, want)
        assert got.call_stack == (f"s{index}",)
