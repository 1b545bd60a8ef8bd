"""The differential harness: third-party Triton libraries' programs run plain
several times (to learn which outputs are deterministic), in plain PyTorch (to know
which results are right), then under every session kind; every output that
is deterministic in plain runs must be bit-identical under every session,
every instrumented kernel must record, and no report may hold an error.

    python3 bench/differential/run.py --out DIR [--libraries flaggems,liger,fla]
        [--kinds host,host_hook,pcsampling,instrumentation,mma,override,scopes]
        [--sanitize memcheck --sanitize-kinds plain,mma] [--no-caching]

Each run is its own process (driver.py). Results: DIR/summary.json and
DIR/summary.md; exit status 1 if any check failed. The GPU machine needs the
libraries importable (flag_gems with GEMS_VENDOR=nvidia, liger_kernel,
fla-core); the README of bench/ says how to carry them."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from differential import compare, sessions  # noqa: E402
from differential.programs import LIBRARIES  # noqa: E402

DRIVER = os.path.join(HERE, "driver.py")


def _command(module: str, *args: str) -> list[str]:
    """A console command of the package, through this Python."""
    return [sys.executable, "-c", f"import sys; from proton.commands.entry_points import {module} as m; m()", *args]


class Runner:
    def __init__(self, out: str, args):
        self.out = out
        self.args = args
        self.log = open(os.path.join(out, "runs.log"), "a")

    def driver(self, library: str, kind: str, name: str, env=None, reference=False, wrap=()) -> dict:
        """One driver.py process; its report.json with the exit status and
        the time the process took."""
        run_dir = os.path.join(self.out, library, name)
        command = [*wrap, sys.executable, DRIVER, "--library", library, "--kind", kind, "--out", run_dir]
        if reference:
            command.append("--reference")
        if self.args.parts:
            command += ["--parts", self.args.parts]
        return self._process(command, run_dir, env)

    def _process(self, command, run_dir, env=None) -> dict:
        os.makedirs(run_dir, exist_ok=True)
        full_env = dict(os.environ, **(env or {}))
        if self.args.no_caching:
            full_env["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"
        begin = time.time()
        with open(os.path.join(run_dir, "log.txt"), "w") as log:
            try:
                status = subprocess.run(
                    command, stdout=log, stderr=subprocess.STDOUT, env=full_env, timeout=self.args.timeout
                ).returncode
            except subprocess.TimeoutExpired:
                status = "timeout"
        seconds = round(time.time() - begin, 1)
        print(f"{run_dir}: exit {status} in {seconds} s", file=self.log, flush=True)
        result = {"status": status, "process_seconds": seconds, "dir": run_dir}
        report = os.path.join(run_dir, "report.json")
        if status == 0 and os.path.exists(report):
            with open(report) as f:
                result.update(json.load(f))
        else:
            with open(os.path.join(run_dir, "log.txt"), errors="replace") as f:
                result["log_tail"] = f.read()[-3000:]
        return result

    def override(self, library: str) -> dict:
        """The override workflow: proton-dump-ttgir over a plain run,
        insert_proton_records on every file, then the run with Triton's
        TRITON_KERNEL_OVERRIDE and an instrumentation session."""
        dump = os.path.join(self.out, library, "ttgir_dump")
        dumped = self._process(
            _command(
                "dump_ttgir",
                "--out",
                dump,
                sys.executable,
                DRIVER,
                "--library",
                library,
                "--kind",
                "plain",
                "--out",
                os.path.join(self.out, library, "override_dump_run"),
                *(["--parts", self.args.parts] if self.args.parts else []),
            ),
            os.path.join(self.out, library, "override_dump"),
        )
        inserted = self._process(
            _command("insert_proton_records", dump), os.path.join(self.out, library, "override_insert")
        )
        env = {"TRITON_ALWAYS_COMPILE": "1", "TRITON_KERNEL_OVERRIDE": "1", "TRITON_OVERRIDE_DIR": dump}
        result = self.driver(library, "override", "override", env=env)
        result["dump_status"], result["insert_status"] = dumped["status"], inserted["status"]
        if inserted["status"] != 0:
            result.setdefault("problems", []).append(f"insert_proton_records exit {inserted['status']}")
        return result


def check(kind: sessions.Kind, result: dict, plain: dict, names: list[str]) -> list[str]:
    """What is wrong with one session run."""
    if result["status"] != 0:
        return [f"exit status {result['status']}: {result.get('log_tail', '')[-600:]}"]
    problems = list(result.get("problems", []))
    changed = compare.changed_by_session(plain, compare.load(result["dir"]), names)
    result["changed"] = changed
    if changed:
        problems.append(f"{len(changed)} deterministic outputs changed: {', '.join(sorted(changed)[:12])}")
    report = result.get("report", {})
    if report.get("errors"):
        problems.append(f"{len(report['errors'])} report errors, first: {report['errors'][0]}")
    if kind.instrumented:
        silent = [k for k, v in report.get("per_kernel", {}).items() if v.get("kept") and not v.get("events")]
        if silent:
            problems.append(f"kernels kept without events: {', '.join(silent)}")
        uncompiled = [k for k, v in report.get("unrecorded", {}).items() if v["reason"] != "nothing to record"]
        if uncompiled:
            problems.append(f"kernels launched without records although instrumented: {', '.join(uncompiled)}")
        if kind.name != "mma" and not report.get("events"):  # MMA mode records only kernels with MMAs
            problems.append("no events recorded")
    if kind.start is not None and kind.start.get("backend") in (None, "cupti") and not report.get("kernels"):
        problems.append("the host session saw no kernel")
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True)
    parser.add_argument("--libraries", default=",".join(LIBRARIES))
    parser.add_argument("--kinds", default=",".join(k for k in sessions.KINDS if k != "plain"))
    parser.add_argument("--parts", default="", help="comma-separated program parts (default: all)")
    parser.add_argument("--sanitize", default="", help="compute-sanitizer tool for --sanitize-kinds runs")
    parser.add_argument("--sanitize-kinds", default="")
    parser.add_argument("--no-caching", action="store_true", help="PYTORCH_NO_CUDA_MEMORY_CACHING=1 in every run")
    parser.add_argument("--no-reference", action="store_true")
    parser.add_argument("--plain-runs", type=int, default=3, help="plain runs that must agree (at least 2)")
    parser.add_argument("--timeout", type=float, default=900)
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    runner = Runner(args.out, args)
    kinds = [k for k in args.kinds.split(",") if k]
    summary = {"kinds": kinds, "libraries": {}}
    failed = False
    for library in [lib for lib in args.libraries.split(",") if lib]:
        entry = summary["libraries"][library] = {"runs": {}}
        plains = [runner.driver(library, "plain", f"plain_{i}") for i in range(args.plain_runs)]
        entry["runs"].update({f"plain_{i}": run for i, run in enumerate(plains)})
        if any(run["status"] != 0 for run in plains):
            entry["problems"] = ["a plain run failed"]
            failed = True
            continue
        first = compare.load(plains[0]["dir"])
        names = sorted(first)
        for other in plains[1:]:
            names = [n for n in compare.deterministic(first, compare.load(other["dir"]))[0] if n in names]
        entry["outputs"], entry["deterministic"] = len(first), len(names)
        entry["nondeterministic"] = sorted(set(first) - set(names))
        if not args.no_reference:
            reference = runner.driver(library, "plain", "reference", reference=True)
            entry["runs"]["reference"] = reference
            if reference["status"] == 0:
                entry["far_from_pytorch"] = compare.against_reference(first, compare.load(reference["dir"]))
        for name in kinds:
            kind = sessions.KINDS[name]
            wrap = ()
            if args.sanitize and name in args.sanitize_kinds.split(","):
                wrap = ("compute-sanitizer", "--tool", args.sanitize, "--print-limit", "20", "--error-exitcode", "0")
            result = runner.override(library) if kind.override else runner.driver(library, name, name, wrap=wrap)
            result["problems"] = check(kind, result, first, names)
            failed |= bool(result["problems"])
            entry["runs"][name] = result
            write_summary(args.out, summary)
        for name in args.sanitize_kinds.split(",") if args.sanitize else ():
            if name == "plain":
                entry["runs"]["plain_sanitized"] = runner.driver(
                    library,
                    "plain",
                    "plain_sanitized",
                    wrap=("compute-sanitizer", "--tool", args.sanitize, "--print-limit", "20"),
                )
    write_summary(args.out, summary)
    print(markdown(summary))
    return 1 if failed else 0


def write_summary(out: str, summary: dict) -> None:
    """summary.json and summary.md as they stand (after every run, so that
    a harness stopped by a time limit leaves what it did)."""
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1, default=str)
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(markdown(summary))


def markdown(summary: dict) -> str:
    lines = [
        "| library | kind | exit | s | identical | events | problems |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for library, entry in summary["libraries"].items():
        total = entry.get("deterministic", 0)
        lines.append(
            f"| {library} | plain | | | {total}/{entry.get('outputs', 0)} deterministic | | "
            f"{'; '.join(entry.get('problems', []))} |"
        )
        far = entry.get("far_from_pytorch")
        if far:
            lines.append(
                f"| {library} | vs PyTorch | | | {len(far)} far: {', '.join(sorted(far)[:8])} | | library's own |"
            )
        for kind, run in entry["runs"].items():
            if kind.startswith("plain") or kind == "reference":
                continue
            report = run.get("report", {})
            same = total - len(run.get("changed", {})) if run["status"] == 0 else "-"
            events = report.get("events", report.get("kernels", ""))
            lines.append(
                f"| {library} | {kind} | {run['status']} | {run['process_seconds']} | {same}/{total} | {events} | "
                f"{'; '.join(run.get('problems', [])).replace('|', '/')[:300]} |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
