"""Section `dobench`: the wall time of a whole profiling session around a
do_bench-style run of vector add 1M, and the sizes of the traces written."""

import os
import time

from .cases import make_case
from .ptx import ptx_info, ptx_problems
from .timing import estimate_do_bench_ms, replay_do_bench
from .util import cache_entries, median, ratio


def run_dobench(bench):
    torch, triton = bench.torch, bench.triton
    import kernels

    args = bench.args
    sec = bench.results["dobench"]
    print(f"[dobench] vector add 1M: session wall time ({args.dobench_reps} timed reps)", flush=True)
    case = make_case("vector_add_1m")
    # Calibrate like do_bench on the plain kernel: its per-call estimate fixes
    # the warm-up count (warmup ms / estimate) and the rep= for ~N repetitions.
    plain_fn = kernels.build("vector_add", "plain")
    plain_buf = case.output()
    est = max(1e-6, median([estimate_do_bench_ms(lambda: case.launch(plain_fn, plain_buf)) for _ in range(5)]))
    n_warmup = max(1, int(args.dobench_warmup_ms / est))
    rep_ms = est * (args.dobench_reps + 0.5)
    sec["calibration"] = {
        "plain_estimate_ms": est,
        "n_warmup": n_warmup,
        "n_repeat": args.dobench_reps,
        "do_bench_warmup_ms": args.dobench_warmup_ms,
        "do_bench_rep_ms": rep_ms,
        "launches_per_fixed_session": 1 + 5 + n_warmup + args.dobench_reps,
    }
    expected = case.x + case.y
    fixed = sec["fixed"] = {
        "how": "explicit replay of triton.testing.do_bench's schedule with plain's counts "
        "(1 + 5 estimate + n_warmup + n_repeat launches, L2 clear before each timed one), "
        "identical for every variant; window = start -> launches -> synchronize -> finalize",
        "variants": {},
    }
    real = sec["do_bench"] = {
        "how": "triton.testing.do_bench(fn, warmup=W, rep=R) with R = plain's estimate x n_repeat; "
        "do_bench derives its counts from its own estimate, so slower variants run fewer "
        "launches (counted); window = start -> do_bench -> finalize",
        "variants": {},
    }
    data = args.reference_dobench_data

    # All do_bench sessions of a variant share one session name (LABEL), so
    # that a profiler whose cache key depends on it still hits the kernel the
    # untimed warm-up session compiled.
    LABEL = "dobench"

    def timed(variant, rec, phase, body):
        # A fresh JITFunction: its first launch loads the kernel from Triton's
        # disk cache (filled by the warm-up session) inside the window, for
        # every variant alike, so a profiler sees the load in its own session.
        fn = kernels.build("vector_add", variant)
        out = case.output()
        count = [0]
        first = {}

        def call():
            count[0] += 1
            if count[0] == 1:
                t = time.perf_counter()
                case.launch(fn, out)
                first["s"] = time.perf_counter() - t
            else:
                case.launch(fn, out)

        info = rec["session"] = {}
        builds_before = cache_entries(bench.cache_dir)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with bench.sessions.session(variant, LABEL, info, data=data, phase=phase):
            result = body(call)
            torch.cuda.synchronize()
        rec["wall_s"] = time.perf_counter() - t0
        rec["first_call_ms"] = first.get("s", 0) * 1e3  # includes loading the kernel from the disk cache
        new_builds = cache_entries(bench.cache_dir) - builds_before
        if new_builds:
            bench.fail(
                f"dobench/{phase}/{variant}",
                rec,
                f"{len(new_builds)} new Triton cache entries appeared: "
                "the kernel was compiled inside the timed window (the warm-up's build was not reused)",
            )
        rec["launches"] = count[0]
        rec["wall_per_launch_us"] = rec["wall_s"] / count[0] * 1e6 if count[0] else None
        rec["equal_to_torch"] = bool(torch.equal(out, expected))
        if not rec["equal_to_torch"]:
            bench.fail(f"dobench/{phase}/{variant}", rec, "result differs from x + y")
        if info.get("finalize_error"):
            bench.fail(f"dobench/{phase}/{variant}", rec, "finalize: " + info["finalize_error"])
        return result

    for variant in args.variants:
        rec = fixed["variants"][variant] = {}

        def run_fixed(variant=variant, rec=rec):
            # Untimed warm-up session: compiles (session active, so instrumented) into the disk cache.
            warm = {}
            with bench.sessions.session(variant, LABEL, warm, data="tree", phase="dobench_warmup"):
                compiled = case.launch(kernels.build("vector_add", variant), case.output())
                torch.cuda.synchronize()
            rec["warmup_session"] = warm
            rec.update(ptx_info(compiled))
            for problem in ptx_problems(variant, rec):
                bench.fail(f"dobench/fixed/{variant}", rec, problem)
            times = timed(variant, rec, "fixed", lambda call: replay_do_bench(call, n_warmup, args.dobench_reps))
            rec["kernel_event_ms_median"] = median(times)

        bench.guarded(f"dobench/fixed/{variant}", rec, variant, "vector_add", run_fixed)
        if rec.get("wall_s") is not None:
            print(
                f"    fixed    {variant:9} {rec['launches']:5d} launches  wall {rec['wall_s'] * 1e3:10.1f} ms "
                f"(start {1e3 * rec['session'].get('start_s', 0):.1f}, finalize "
                f"{1e3 * rec['session'].get('finalize_s', 0):.1f})",
                flush=True,
            )
    for variant in args.variants:
        rec = real["variants"][variant] = {}

        def run_real(variant=variant, rec=rec):
            rec["do_bench_ms"] = timed(
                variant,
                rec,
                "do_bench",
                lambda call: triton.testing.do_bench(call, warmup=args.dobench_warmup_ms, rep=rep_ms),
            )

        bench.guarded(f"dobench/do_bench/{variant}", rec, variant, "vector_add", run_real)
        if rec.get("wall_s") is not None:
            print(
                f"    do_bench {variant:9} {rec['launches']:5d} launches  wall {rec['wall_s'] * 1e3:10.1f} ms",
                flush=True,
            )
    for part in (fixed, real):
        plain = part["variants"].get("plain", {})
        for rec in part["variants"].values():
            rec["ratio"] = ratio(rec.get("wall_s"), plain.get("wall_s"))
            rec["ratio_per_launch"] = ratio(rec.get("wall_per_launch_us"), plain.get("wall_per_launch_us"))
    sec["trace_size"] = trace_size_comparison(fixed["variants"])
    bench.save()


def trace_size_comparison(variants):
    """Proton's .pftrace vs the reference's trace, from the fixed-count sessions."""
    out = {}
    prot = variants.get("proton", {})
    ref = variants.get("reference", {})
    report = (prot.get("session") or {}).get("report") or {}
    files = report.get("files") or {}
    pftrace = (files.get("pftrace") or {}).get("bytes")
    chrome = (files.get("chrome_trace") or {}).get("bytes")
    ref_files = (ref.get("session") or {}).get("files") or {}
    ref_bytes = sum(ref_files.values()) if ref_files else None
    out["proton_pftrace_bytes"] = pftrace
    out["proton_chrome_trace_bytes"] = chrome
    out["proton_files"] = {k: v.get("bytes") for k, v in files.items()}
    out["proton_launches_kept"] = report.get("launches_kept")
    out["proton_launches_skipped"] = report.get("launches_skipped")
    out["proton_events"] = report.get("events")
    out["proton_dropped_events"] = report.get("dropped_events")
    out["reference_files"] = {os.path.basename(p): b for p, b in ref_files.items()}
    out["reference_bytes"] = ref_bytes
    out["reference_data"] = (ref.get("session") or {}).get("data")
    out["reference_launches"] = ref.get("launches")
    out["ratio_reference_over_pftrace"] = ratio(ref_bytes, pftrace)
    kept = report.get("launches_kept")
    per_p = pftrace / kept if pftrace and kept else None
    per_r = ref_bytes / ref["launches"] if ref_bytes and ref.get("launches") else None
    out["pftrace_bytes_per_kept_launch"] = per_p
    out["reference_bytes_per_launch"] = per_r
    out["ratio_per_launch"] = ratio(per_r, per_p)
    out["note"] = (
        "proton keeps the launches its retention policy keeps (launches_kept) while the reference "
        "records every launch; ratio_per_launch compares bytes per recorded launch"
    )
    return out
