"""insert_proton_records' time against the size of its input (CPU): a kernel
of N loads gets N + 1 scopes from the default strategy. Writes
bench/results/latest/insert_records_cpu.json.

    python bench/bench_insert_records.py [--sizes 2000,16000,64000]
"""

import argparse
import json
import os
import platform
import time

from proton.instrument.ttgir_rewriter import rewrite_text


def ttgir(loads: int) -> str:
    body = "".join(f"    %v{i} = tt.load %x : !tt.ptr<f32>\n" for i in range(loads))
    return "module {\n  tt.func public @k(%x: !tt.ptr<f32>) {\n" + body + "    tt.return\n  }\n}\n"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--sizes", default="2000,16000,64000")
    p.add_argument(
        "--out", default=os.path.join(os.path.dirname(__file__), "results", "latest", "insert_records_cpu.json")
    )
    args = p.parse_args()
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        text = ttgir(n)
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            result = rewrite_text(text, path="bench.ttgir")
            best = min(best, time.perf_counter() - t0)
        rows.append({"loads": n, "scopes": len(result.scopes), "bytes": len(text), "seconds": round(best, 3)})
        print(f"{n:>7} loads, {len(text) / 1e6:6.2f} MB: {len(result.scopes)} scopes in {best:.3f} s")
    with open(args.out, "w") as f:
        json.dump({"machine": platform.processor() or platform.machine(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
