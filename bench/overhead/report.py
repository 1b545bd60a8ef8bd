"""The results as text: the summary rows against the targets, the printed
summary table and the Markdown file written beside the JSON."""

import os

from .config import TARGETS


def fmt_ratio(x):
    if x is None:
        return "-"
    if x < 10:
        return f"{x:.3f}x"
    return f"{x:,.1f}x" if x < 1000 else f"{x:,.0f}x"


def fmt_target(t):
    return f"{t[0]} {t[1]:.2f}x" if t else "-"


def fmt_num(x, digits=2):
    return "-" if x is None else f"{x:,.{digits}f}"


def fmt_bytes(x):
    if x is None:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(x) < 1024 or unit == "GiB":
            return f"{x:,.0f} {unit}" if unit == "B" else f"{x:,.1f} {unit}"
        x /= 1024


def _verdict(value, target):
    if value is None or target is None:
        return "n/a"
    op, bound = target
    ok = value <= bound if op == "<=" else value >= bound
    return "yes" if ok else "NO"


def _rec_status(rec):
    if not rec:
        return "not run"
    if rec.get("error"):
        return "ERROR"
    if rec.get("problems"):
        return "problem"
    return ""


def summary_rows(results):
    """One row per target: proton's value, the reference's, the target, pass."""
    rows = []
    for key, rec in (results.get("device") or {}).items():
        if not isinstance(rec, dict):
            continue
        if "variants" not in rec:
            rows.append(
                {
                    "metric": f"device time {key}",
                    "proton": None,
                    "reference": None,
                    "target": TARGETS.get(f"device:{key}"),
                    "pass": "n/a",
                    "status": "ERROR " + str(rec.get("error", ""))[:200].replace("|", "/"),
                }
            )
            continue
        v = rec["variants"]
        target = TARGETS.get(f"device:{key}")
        p, r = v.get("proton", {}), v.get("reference", {})
        if rec.get("rounds", 1) > 1:
            metric = f"device time {key} (median of {rec['rounds']} rounds' ratios, CUPTI)"
            rows.append(_paired_row(metric, p, r, "ratio_paired", target))
        else:
            rows.append(_paired_row(f"device time {key} (median, CUPTI)", p, r, "ratio_median", target))
    db = results.get("dobench") or {}
    for part, label in (
        ("fixed", "do_bench session wall (fixed counts)"),
        ("do_bench", "do_bench session wall (real do_bench)"),
    ):
        if part in db:
            v = db[part]["variants"]
            p, r = v.get("proton", {}), v.get("reference", {})
            target = TARGETS["dobench:session"] if part == "fixed" else None
            rows.append(_paired_row(label, p, r, "ratio", target))
    ts = db.get("trace_size")
    if ts:
        target = TARGETS["dobench:trace_size"]
        rows.append(
            {
                "metric": "trace size: reference trace / proton .pftrace",
                "proton": ts.get("ratio_reference_over_pftrace"),
                "reference": None,
                "target": target,
                "pass": _verdict(ts.get("ratio_reference_over_pftrace"), target),
                "status": "",
            }
        )
        rows.append(
            {
                "metric": "trace size per recorded launch (same ratio)",
                "proton": ts.get("ratio_per_launch"),
                "reference": None,
                "target": None,
                "pass": "n/a",
                "status": "",
            }
        )
    for key, rec in (results.get("compile") or {}).items():
        if not isinstance(rec, dict) or "variants" not in rec:
            continue
        v = rec["variants"]
        p, r = v.get("proton", {}), v.get("reference", {})
        target = TARGETS["compile"]
        rows.append(_paired_row(f"cold compile {key}", p, r, "ratio", target))
    return rows


def _paired_row(metric, p, r, ratio, target):
    """A summary row comparing proton's variant `p` with the reference `r`."""
    status = " ".join(
        s
        for s in (_rec_status(p) and f"proton {_rec_status(p)}", _rec_status(r) and f"reference {_rec_status(r)}")
        if s
    )
    return {
        "metric": metric,
        "proton": p.get(ratio),
        "reference": r.get(ratio),
        "target": target,
        "pass": _verdict(p.get(ratio), target),
        "status": status,
    }


def _table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def render_summary_table(rows):
    body = []
    for r in rows:
        t = r.get("target")
        body.append(
            [
                r["metric"],
                fmt_ratio(r["proton"]),
                fmt_ratio(r["reference"]),
                fmt_target(t),
                r["pass"],
                r.get("status", ""),
            ]
        )
    return _table(["measurement (ratio vs plain)", "proton", "reference", "target (proton)", "met", "notes"], body)


def render_markdown(results):
    m = results.get("meta", {})
    c = results.get("config", {})
    out = [
        f"# Proton overhead: {m.get('gpu')}",
        "",
        f"- date: {m.get('date')}; torch {m.get('torch')} (CUDA {m.get('torch_cuda')}), triton {m.get('triton')}, "
        f"proton {m.get('proton')}, Python {m.get('python')}, git {m.get('git_commit')}",
        f"- command: `{m.get('command')}`",
        f"- modes: proton `{c.get('proton_mode')}` (max_launches_per_kernel {c.get('proton_max_launches_per_kernel')}),"
        f" reference `{c.get('reference_mode')}` (data: device/compile `{c.get('reference_device_data')}`, "
        f"do_bench `{c.get('reference_dobench_data')}`)",
        "",
        "## Summary",
        "",
        render_summary_table(results.get("summary") or summary_rows(results)),
        "",
    ]
    dev = results.get("device") or {}
    if dev:
        out += [
            "## Device time per kernel (CUPTI, torch.profiler)",
            "",
            "Median / mean kernel duration over the measured launches; the profiling session is active "
            "around them; compile and warm-up happen before the profiler window, finalize after it.",
            "",
        ]
        rows = []
        for key, e in dev.items():
            for variant, r in (e.get("variants") or {}).items():
                rows.append(
                    [
                        key,
                        variant,
                        r.get("kernel_name", "-"),
                        r.get("matched_events", "-"),
                        fmt_num(r.get("median_us")),
                        fmt_num(r.get("mean_us")),
                        fmt_ratio(r.get("ratio_median")),
                        fmt_ratio(r.get("ratio_mean")),
                        fmt_ratio(r.get("ratio_paired")) + _round_ratios(r),
                        r.get("ptx_clock_reads", "-"),
                        _checks(r.get("checks")),
                        _err(r),
                    ]
                )
        out += [
            _table(
                [
                    "case",
                    "variant",
                    "kernel",
                    "n",
                    "median us",
                    "mean us",
                    "ratio (median)",
                    "ratio (mean)",
                    "paired ratio over rounds",
                    "PTX clock reads",
                    "result",
                    "error / problems",
                ],
                rows,
            ),
            "",
        ]
    db = results.get("dobench") or {}
    if db:
        cal = db.get("calibration", {})
        out += [
            "## Profiling session around do_bench (vector add 1M)",
            "",
            f"plain do_bench estimate {fmt_num(cal.get('plain_estimate_ms'), 4)} ms/call -> n_warmup "
            f"{cal.get('n_warmup')}, n_repeat {cal.get('n_repeat')}, rep= {fmt_num(cal.get('do_bench_rep_ms'), 3)} "
            f"ms.",
            "",
        ]
        for part in ("fixed", "do_bench"):
            if part not in db:
                continue
            out += [f"**{part}**: {db[part].get('how', '')}", ""]
            rows = []
            for variant, r in db[part]["variants"].items():
                s = r.get("session") or {}
                rep = s.get("report") or {}
                rows.append(
                    [
                        variant,
                        r.get("launches", "-"),
                        fmt_num(_ms(r.get("wall_s")), 1),
                        fmt_num(_ms(s.get("start_s")), 1),
                        fmt_num(_ms(s.get("finalize_s")), 1),
                        fmt_ratio(r.get("ratio")),
                        fmt_ratio(r.get("ratio_per_launch")),
                        ", ".join(f"{os.path.basename(p)} {fmt_bytes(b)}" for p, b in (s.get("files") or {}).items())
                        or "-",
                        _report_str(rep),
                        _err(r),
                    ]
                )
            out += [
                _table(
                    [
                        "variant",
                        "launches",
                        "wall ms",
                        "start ms",
                        "finalize ms",
                        "ratio",
                        "ratio per launch",
                        "files",
                        "SessionReport",
                        "error / problems",
                    ],
                    rows,
                ),
                "",
            ]
        ts = db.get("trace_size")
        if ts:
            out += [
                "**Trace sizes** (fixed-count sessions): proton .pftrace "
                f"{fmt_bytes(ts.get('proton_pftrace_bytes'))} (.chrome_trace "
                f"{fmt_bytes(ts.get('proton_chrome_trace_bytes'))}; {ts.get('proton_launches_kept')} launches kept, "
                f"{ts.get('proton_launches_skipped')} skipped); reference ({ts.get('reference_data')}) "
                f"{fmt_bytes(ts.get('reference_bytes'))} for {ts.get('reference_launches')} launches "
                f"{ts.get('reference_files')}. Reference / pftrace: "
                f"{fmt_ratio(ts.get('ratio_reference_over_pftrace'))}; per recorded launch: "
                f"{fmt_ratio(ts.get('ratio_per_launch'))}. {ts.get('note', '')}",
                "",
            ]
    comp = results.get("compile") or {}
    if comp:
        out += [
            "## Cold compile time",
            "",
            "Fresh TRITON_CACHE_DIR per compile, `JITFunction.warmup` (compile only, no launch), session active "
            "for instrumented variants; one discarded round first.",
            "",
        ]
        rows = []
        for key, e in comp.items():
            if not isinstance(e, dict) or "variants" not in e:
                continue
            for variant, r in e["variants"].items():
                rows.append(
                    [
                        key,
                        variant,
                        fmt_num(r.get("median_s"), 3),
                        ", ".join(f"{t:.3f}" for t in r.get("times_s", [])) or "-",
                        fmt_ratio(r.get("ratio")),
                        r.get("ptx_clock_reads", "-"),
                        _err(r),
                    ]
                )
        out += [
            _table(["kernel", "variant", "median s", "times s", "ratio", "PTX clock reads", "error / problems"], rows),
            "",
        ]
    pre = results.get("preflight") or {}
    if pre:
        out += ["## Preflight (child process per instrumented variant)", ""]
        for variant, log in pre.items():
            for k, status in log.items():
                out.append(f"- {variant} / {k}: {status}")
        out.append("")
    fails = results.get("failures") or []
    if fails:
        out += ["## Problems", ""] + [f"- {f.splitlines()[0][:600]}" for f in fails] + [""]
    return "\n".join(out)


def _ms(s):
    return None if s is None else s * 1e3


def _round_ratios(rec):
    ratios = rec.get("paired_ratios") or []
    return f" ({', '.join(f'{x:.3f}' for x in ratios)})" if len(ratios) > 1 else ""


def _checks(checks):
    if not checks:
        return "-"
    return ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}" for k, v in checks.items())


def _err(rec):
    parts = []
    if rec.get("error"):
        parts.append(rec["error"].splitlines()[0][:300])
    parts += [p[:300] for p in rec.get("problems", [])]
    return "; ".join(parts).replace("|", "/") or ""


def _report_str(rep):
    if not rep:
        return "-"
    return ", ".join(f"{k}={rep.get(k)}" for k in ("events", "launches_kept", "launches_skipped", "dropped_events"))
