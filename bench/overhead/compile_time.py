"""Section `compile`: cold compile time per kernel and variant, a fresh
Triton cache directory for every compile."""

import shutil
import tempfile
import time

from .cases import make_case
from .config import COMPILE_KERNELS
from .ptx import ptx_info, ptx_problems
from .report import fmt_ratio
from .util import median, ratio


def run_compile(bench):
    torch, triton = bench.torch, bench.triton
    import kernels

    reps = bench.args.compile_reps
    sec = bench.results["compile"]
    print(f"[compile] cold compiles, fresh cache dir each ({reps} timed rounds after 1 discarded)", flush=True)
    cases = {k: make_case(k, small=True) for k in COMPILE_KERNELS}
    for k in COMPILE_KERNELS:
        sec[k] = {"variants": {v: {"times_s": []} for v in bench.args.variants}}
    for rnd in range(reps + 1):
        for k in COMPILE_KERNELS:
            case = cases[k]
            for variant in bench.args.variants:
                rec = sec[k]["variants"][variant]
                if rec.get("error"):
                    continue

                def once(variant=variant, rec=rec, case=case, k=k):
                    cache = tempfile.mkdtemp(prefix="cc-", dir=bench.tmp_root)
                    saved = triton.knobs.cache.dir
                    triton.knobs.cache.dir = cache
                    try:
                        fn = kernels.build(case.template, variant, case.tag)
                        out = case.output()
                        info = {}
                        with bench.sessions.session(
                            variant, f"compile_{k}", info, data=bench.args.reference_device_data
                        ):
                            torch.cuda.synchronize()
                            t0 = time.perf_counter()
                            compiled = case.compile_only(fn, out)
                            dt = time.perf_counter() - t0
                        if info.get("finalize_error"):
                            rec["finalize_error"] = info["finalize_error"]
                        if rnd == 0:
                            rec["warmup_round_s"] = dt
                            rec.update(ptx_info(compiled))
                            for problem in ptx_problems(variant, rec):
                                bench.fail(f"compile/{k}/{variant}", rec, problem)
                        else:
                            rec["times_s"].append(dt)
                    finally:
                        triton.knobs.cache.dir = saved
                        shutil.rmtree(cache, ignore_errors=True)

                bench.guarded(f"compile/{k}/{variant}", rec, variant, k, once)
    for k in COMPILE_KERNELS:
        variants = sec[k]["variants"]
        for rec in variants.values():
            rec["median_s"] = median(rec["times_s"])
        plain = variants.get("plain", {})
        for variant, rec in variants.items():
            rec["ratio"] = ratio(rec.get("median_s"), plain.get("median_s"))
            if rec.get("median_s") is not None:
                print(
                    f"    {k:14} {variant:9} median {rec['median_s']:7.3f} s  ratio {fmt_ratio(rec['ratio'])}",
                    flush=True,
                )
    bench.save()
