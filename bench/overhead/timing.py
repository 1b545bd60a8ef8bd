"""How time is measured: CUPTI kernel durations through torch.profiler, and
triton.testing.do_bench's schedule replayed with fixed counts."""

import contextlib


def cupti_launch_durations_us(launch, launches, warmup=10):
    """Compiles (first call) and warms up `launch`, then times `launches`
    calls under torch.profiler; returns (compiled kernel, its CUPTI
    durations in us), checking that every launch was seen."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    compiled = launch()
    for _ in range(warmup):
        launch()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(launches):
            launch()
        torch.cuda.synchronize()
    durations, others = cupti_kernel_durations_us(prof, compiled.name)
    assert len(durations) == launches, f"CUPTI saw {len(durations)} of {launches} launches; others: {others}"
    return compiled, durations


def cupti_kernel_durations_us(prof, name):
    """Durations (us) of the GPU kernels called `name` in a finished
    torch.profiler.profile, and a few other kernel names seen (for errors)."""
    durations, others = [], {}
    events = None
    with contextlib.suppress(Exception):
        events = prof.profiler.kineto_results.events()
    if events is not None:
        for e in events:
            if not str(e.device_type()).endswith("CUDA"):
                continue
            if e.name() == name:
                durations.append(e.duration_ns() / 1000.0)
            else:
                others[e.name()] = others.get(e.name(), 0) + 1
    else:  # older/newer torch: the FunctionEvent list
        for e in prof.events():
            if not str(getattr(e, "device_type", "")).endswith("CUDA"):
                continue
            if e.name == name:
                durations.append(float(e.time_range.elapsed_us()))
            else:
                others[e.name] = others.get(e.name, 0) + 1
    return durations, dict(sorted(others.items(), key=lambda kv: -kv[1])[:5])


def replay_do_bench(fn, n_warmup, n_repeat):
    """triton.testing.do_bench's schedule (3.6) with fixed counts: one call,
    5 calls after L2 clears (its estimate), n_warmup calls, then n_repeat calls
    each after an L2 clear between CUDA events; returns the event times (ms)."""
    import torch

    driver, cache = _first_call(fn)
    _five_call_estimate_ms(fn, driver, cache)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    for _ in range(n_warmup):
        fn()
    for i in range(n_repeat):
        driver.clear_cache(cache)
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in zip(starts, ends)]


def estimate_do_bench_ms(fn):
    """do_bench's own per-call estimate (L2 clear + call), as it computes it."""
    driver, cache = _first_call(fn)
    return _five_call_estimate_ms(fn, driver, cache)


def _first_call(fn):
    """do_bench's opening: one call, then its L2-clearing buffer."""
    import torch
    import triton

    driver = triton.runtime.driver.active
    fn()
    torch.cuda.synchronize()
    return driver, driver.get_empty_cache_for_benchmark()


def _five_call_estimate_ms(fn, driver, cache):
    """do_bench's estimate: 5 calls, each after an L2 clear, timed together."""
    import torch

    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        driver.clear_cache(cache)
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 5
