"""Runs Triton's own Proton tests (third_party/proton/test) and intra-kernel
tutorial against this package or against Triton's own profiler, as an
outside check of the API contract (docs/compatibility.md, "Upstream's own
tests"). Upstream's files are never part of this repository: this script
fetches nothing and stores no upstream text; it works on a checkout given to
it and copies the tests to a temporary directory.

    # a Triton checkout (or a bare git directory and a commit) -> a folder of tests
    python tools/upstream_compat/run_upstream_tests.py extract --git-dir DIR --commit 004d7f5f --to .upstream/3.6
    # run them against one profiler (on a GPU machine), writing outcomes per test
    python tools/upstream_compat/run_upstream_tests.py run --tests .upstream/3.6 --profiler ours --out ours.json
    python tools/upstream_compat/run_upstream_tests.py run --tests .upstream/3.6 --profiler upstream --out theirs.json
    # side by side, as Markdown
    python tools/upstream_compat/run_upstream_tests.py compare theirs.json ours.json > table.md

Mapping for `--profiler ours`, and nothing else: the module `triton.profiler`
becomes `proton` (imports, `python -m`), the command `proton` becomes
`proton-profile` and `proton-viewer` becomes `proton-view`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
from pathlib import Path

#: What a run copies from a Triton checkout.
UPSTREAM_PATHS = ("third_party/proton/test", "third_party/proton/tutorials/intra_kernel", "third_party/proton/scripts")

#: The intra-kernel tutorial's steps, as its README gives them (run in its folder).
TUTORIAL_STEPS = (
    ("example_dsl.py", "python3 example_dsl.py", {}),
    ("example_dsl.py --op-measure", "python3 example_dsl.py --op-measure", {}),
    (
        "example_dsl.py --warp-sampling",
        'python3 example_dsl.py --warp-sampling --warp-ids "0,1,2,3" --gmem_buffer',
        {},
    ),
    ("example_dsl.py --increase-accuracy", "python3 example_dsl.py --increase-accuracy", {}),
    ("dump_ttgir.sh", "bash ../../scripts/dump_ttgir.sh python3 example_override.py --increase-accuracy", {}),
    ("insert_proton_records", "python3 ./insert_proton_records", {}),
    (
        "example_override.py (override)",
        "python3 example_override.py --increase-accuracy",
        {"TRITON_ALWAYS_COMPILE": "1", "TRITON_KERNEL_OVERRIDE": "1", "TRITON_OVERRIDE_DIR": "ttgir_dump"},
    ),
)

#: (pattern, replacement) applied to every copied text file for --profiler ours.
OURS = (
    (re.compile(r"\btriton\.profiler\b"), "proton"),
    (re.compile(r"""(["'])proton-viewer\1"""), r"\1proton-view\1"),
    (re.compile(r"""(\[\s*)(["'])proton\2"""), r"\1\2proton-profile\2"),
    (re.compile(r"^(\s*)proton-viewer\b", re.M), r"\1proton-view"),
    (re.compile(r"^(\s*)proton(\s+-)", re.M), r"\1proton-profile\2"),
)


def extract(git_dir: str, commit: str, to: str) -> None:
    """Copies UPSTREAM_PATHS of `commit` into `to` (git archive)."""
    target = Path(to)
    target.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "--git-dir", git_dir, "archive", commit, *UPSTREAM_PATHS], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive, check=True)
    print(f"extracted {', '.join(UPSTREAM_PATHS)} of {commit} into {target}")


def map_to_ours(root: Path) -> int:
    """Applies OURS to every text file under root; returns the files changed."""
    changed = 0
    for path in root.rglob("*"):
        if not path.is_file() or path.suffix not in (".py", ".sh", ".md", "") or path.stat().st_size > 1 << 20:
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        new = text
        for pattern, replacement in OURS:
            new = pattern.sub(replacement, new)
        if new != text:
            path.write_text(new)
            changed += 1
    return changed


def run(tests: str, profiler: str, out: str, pytest_args: list[str], timeout: int) -> dict:
    """Copies the tests to a temporary directory, maps them for `profiler`,
    runs pytest there (a process per test file, `timeout` seconds each), then
    the tutorial's steps, and writes {"profiler", "pytest_status",
    "outcomes": {test: outcome}} (tutorial steps as "tutorial::<step>")."""
    source = Path(tests) / "third_party" / "proton"
    work = Path(tempfile.mkdtemp(prefix=f"upstream-proton-{profiler}-"))
    shutil.copytree(source, work / "proton")
    if profiler == "ours":
        changed = map_to_ours(work / "proton")
        print(f"mapped {changed} files to this package")
    env = dict(os.environ, TRITON_CACHE_DIR=str(work / "triton-cache"))
    # One process per test file: a file that holds a process-wide resource
    # (test_lib.py starts Triton's own C++ profiler directly, which keeps its
    # CUPTI subscription) cannot make the files after it fail.
    status, outcomes = {}, {}
    for test_file in sorted((work / "proton" / "test").glob("test_*.py")):
        junit = work / f"junit_{test_file.stem}.xml"
        command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={junit}"]
        command += [*pytest_args, test_file.name]
        print(" ".join(command), flush=True)
        try:
            done = subprocess.run(command, cwd=test_file.parent, env=env, timeout=timeout)
            status[test_file.name] = done.returncode
        except subprocess.TimeoutExpired:
            status[test_file.name] = "timeout"
        if junit.exists():
            outcomes.update(_junit_outcomes(junit))
    outcomes.update(_run_tutorial(work / "proton" / "tutorials" / "intra_kernel", env, timeout))
    result = {"profiler": profiler, "pytest_status": status, "outcomes": outcomes}
    Path(out).write_text(json.dumps(result, indent=1, sort_keys=True))
    counts = {}
    for outcome in outcomes.values():
        counts[outcome] = counts.get(outcome, 0) + 1
    print(f"{profiler}: {counts} -> {out}")
    return result


def _run_tutorial(folder: Path, env: dict, timeout: int) -> dict:
    """The tutorial's steps in order: "passed" for exit status 0, with the
    files each step left, else "failed"."""
    outcomes = {}
    for name, command, extra in TUTORIAL_STEPS:
        before = {p.name for p in folder.iterdir()}
        try:
            done = subprocess.run(command, shell=True, cwd=folder, env={**env, **extra}, timeout=timeout)
            ok = done.returncode == 0
        except subprocess.TimeoutExpired:
            ok = False
        made = sorted({p.name for p in folder.iterdir()} - before)
        outcomes[f"tutorial::{name}"] = "passed" if ok else "failed"
        print(f"tutorial {name}: {'passed' if ok else 'failed'}; new files: {made}", flush=True)
    return outcomes


def _junit_outcomes(path: Path) -> dict:
    """{file::test[param]: passed|failed|error|skipped} from pytest's JUnit XML."""
    outcomes = {}
    for case in ElementTree.parse(path).iter("testcase"):
        name = f"{case.get('classname', '').rsplit('.', 1)[-1]}.py::{case.get('name')}"
        children = {child.tag for child in case}
        outcome = (
            "failed"
            if "failure" in children
            else "error"
            if "error" in children
            else "skipped"
            if "skipped" in children
            else "passed"
        )
        # A test that failed in setup and teardown is listed once, as its worst.
        if outcomes.get(name) in (None, "passed"):
            outcomes[name] = outcome
    return outcomes


def compare(upstream: str, ours: str) -> str:
    """A Markdown table of both runs, per test, and the counts."""
    theirs_run, ours_run = json.loads(Path(upstream).read_text()), json.loads(Path(ours).read_text())
    theirs, mine = theirs_run["outcomes"], ours_run["outcomes"]
    lines = ["| test | Triton's profiler | this package |", "| --- | --- | --- |"]
    for test in sorted(set(theirs) | set(mine)):
        a, b = theirs.get(test, "-"), mine.get(test, "-")
        mark = " **regression**" if a == "passed" and b != "passed" else ""
        lines.append(f"| `{test}` | {a} | {b}{mark} |")
    both = sum(1 for t, o in theirs.items() if o == "passed" and mine.get(t) == "passed")
    lines += [
        "",
        f"passed: Triton's profiler {sum(o == 'passed' for o in theirs.values())}, this package "
        f"{sum(o == 'passed' for o in mine.values())}; passed by both {both}; passed upstream only "
        f"{sum(1 for t, o in theirs.items() if o == 'passed' and mine.get(t) != 'passed')}",
    ]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="verb", required=True)
    p = sub.add_parser("extract", help="copy upstream's tests out of a git directory")
    p.add_argument("--git-dir", required=True)
    p.add_argument("--commit", required=True)
    p.add_argument("--to", required=True)
    p = sub.add_parser("run", help="run the extracted tests against one profiler")
    p.add_argument("--tests", required=True, help="a folder holding third_party/proton (from extract or a checkout)")
    p.add_argument("--profiler", choices=("ours", "upstream"), required=True)
    p.add_argument("--out", required=True, help="JSON outcomes per test")
    p.add_argument("--timeout", type=int, default=900, help="seconds per test file")
    p.add_argument("pytest_args", nargs="*", help="more pytest arguments (after --)")
    p = sub.add_parser("compare", help="Markdown table of two runs")
    p.add_argument("upstream")
    p.add_argument("ours")
    args = parser.parse_args(argv)
    if args.verb == "extract":
        extract(args.git_dir, args.commit, args.to)
    elif args.verb == "run":
        run(args.tests, args.profiler, args.out, args.pytest_args, args.timeout)
    else:
        sys.stdout.write(compare(args.upstream, args.ours))
    return 0


if __name__ == "__main__":
    sys.exit(main())
