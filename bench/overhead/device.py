"""Section `device`: CUPTI device time of each case and variant, with the
results checked against torch (plain) and against plain (instrumented)."""

import time

from .cases import make_case
from .config import DEVICE_CASES
from .ptx import ptx_info, ptx_problems
from .timing import cupti_kernel_durations_us
from .util import err_str, mean, median, ratio


def _rotated(variants, k):
    k %= len(variants)
    return variants[k:] + variants[:k]


def _time_round(bench, entry, case, kernel_key, key, warm, n, rnd):
    """Round `rnd` of every variant (--device-rounds), in an order rotated by
    the round: the kernel's median duration only (round 0 did the checks)."""
    import kernels

    for variant in _rotated(bench.args.variants, rnd):
        rec = entry["variants"][variant]
        if rec.get("error") or "round_medians_us" not in rec:
            continue

        def measure(variant=variant):
            fn = kernels.build(case.template, variant, case.tag)
            out = case.output()
            data = bench.args.reference_device_data
            with bench.sessions.session(variant, f"device_{key}_round{rnd}", {}, data=data, proton_data=data):
                compiled = case.launch(fn, out)
                for _ in range(warm):
                    case.launch(fn, out)
                durations, _ = _durations(bench, case, fn, out, n, compiled.name)
            return median(durations) if len(durations) == n else None

        value = bench.guarded(f"device/{key}/{variant}/round{rnd}", rec, variant, kernel_key, measure)
        rec["round_medians_us"].append(value)


def _durations(bench, case, fn, out, n, name):
    """CUPTI durations (us) of `n` launches of `fn` after a synchronize."""
    from torch.profiler import ProfilerActivity, profile

    bench.torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            case.launch(fn, out)
        bench.torch.cuda.synchronize()
    return cupti_kernel_durations_us(prof, name)


def _paired_ratios(entry):
    """Per round, each variant's median over plain's of the same round; their
    median is `ratio_paired` (what the summary reports when rounds > 1)."""
    plain = entry["variants"].get("plain", {}).get("round_medians_us") or []
    for rec in entry["variants"].values():
        mine = rec.get("round_medians_us") or []
        ratios = [m / p for m, p in zip(mine, plain) if m and p]
        rec["paired_ratios"] = [round(r, 4) for r in ratios]
        rec["ratio_paired"] = median(ratios) if ratios else None


def run_device(bench):
    torch = bench.torch
    import kernels

    for key in bench.args.cases:
        kernel_key, what = DEVICE_CASES[key]
        warm, n = next(c for g, c in bench.args.device_counts.items() if key.startswith(g))
        entry = bench.results["device"][key] = {"what": what, "warmup": warm, "launches": n, "variants": {}}
        print(f"[device] {key}: {what} ({n} launches)", flush=True)
        try:
            case = make_case(key)
        except Exception as exc:  # noqa: BLE001
            entry["error"] = err_str(exc)
            bench.note_failure(f"device/{key}", entry["error"])
            continue
        plain_out = None
        for variant in bench.args.variants:
            rec = entry["variants"][variant] = {}
            where = f"device/{key}/{variant}"

            def measure(variant=variant, rec=rec, where=where, case=case):
                fn = kernels.build(case.template, variant, case.tag)
                out = case.output()
                info = rec["session"] = {}
                data = bench.args.reference_device_data  # both profilers write the same kind of output
                with bench.sessions.session(variant, f"device_{key}", info, data=data, proton_data=data):
                    t0 = time.perf_counter()
                    compiled = case.launch(fn, out)  # compiles (outside the measured window)
                    torch.cuda.synchronize()
                    rec["first_launch_s"] = time.perf_counter() - t0
                    for _ in range(warm):
                        case.launch(fn, out)
                    torch.cuda.synchronize()
                    rec.update(ptx_info(compiled))
                    for problem in ptx_problems(variant, rec):
                        bench.fail(where, rec, problem)
                    out.fill_(float("nan"))
                    durations, others = _durations(bench, case, fn, out, n, compiled.name)
                if info.get("finalize_error"):
                    bench.fail(where, rec, "finalize: " + info["finalize_error"])
                rec["durations_us"] = [round(d, 3) for d in durations]
                rec["matched_events"] = len(durations)
                rec["median_us"] = median(durations)
                rec["mean_us"] = mean(durations)
                rec["min_us"] = min(durations) if durations else None
                if len(durations) != n:
                    bench.fail(
                        where,
                        rec,
                        f"CUPTI matched {len(durations)} of {n} launches of "
                        f"{compiled.name!r}; other kernels seen: {others}",
                    )
                return out

            out = bench.guarded(where, rec, variant, kernel_key, measure)
            if out is None:
                continue
            if variant == "plain":
                plain_out = out
                rec["checks"] = case.sanity(out)
                if rec["checks"].get("within_tolerance") is False:
                    bench.fail(where, rec, f"plain result is off the torch reference: {rec['checks']}")
            elif plain_out is not None:
                checks, ok = case.compare(out, plain_out)
                rec["checks"] = checks
                if not ok:
                    bench.fail(where, rec, f"result differs from plain: {checks}")
            if rec.get("median_us") is not None:
                print(
                    f"    {variant:9} {rec['kernel_name']:24} median {rec['median_us']:10.2f} us  "
                    f"mean {rec['mean_us']:10.2f} us  clocks {rec['ptx_clock_reads']}",
                    flush=True,
                )
            if variant != "plain":
                del out
        plain = entry["variants"].get("plain", {})
        for variant, rec in entry["variants"].items():
            rec["ratio_median"] = ratio(rec.get("median_us"), plain.get("median_us"))
            rec["ratio_mean"] = ratio(rec.get("mean_us"), plain.get("mean_us"))
        if bench.args.device_rounds > 1:
            entry["rounds"] = bench.args.device_rounds
            for rec in entry["variants"].values():
                if rec.get("median_us") is not None and not rec.get("error"):
                    rec["round_medians_us"] = [rec["median_us"]]
            for rnd in range(1, bench.args.device_rounds):
                _time_round(bench, entry, case, kernel_key, key, warm, n, rnd)
                _paired_ratios(entry)
                bench.save()  # a run cut short keeps its complete rounds
            for variant, rec in entry["variants"].items():
                if rec.get("ratio_paired") is not None:
                    print(
                        f"    {variant:9} paired over {len(rec['paired_ratios'])} rounds: "
                        f"{rec['ratio_paired']:.3f}x {rec['paired_ratios']}",
                        flush=True,
                    )
        del case, plain_out
        torch.cuda.empty_cache()
        bench.save()
