"""Every writer and command of Proton against device-node destinations, run
by test_output_destinations.py as a child process inside a private mount
namespace, on a tmpfs of its own (never against the machine's /dev):

    python destination_cases.py DIR

makes, in DIR, character devices that act as /dev/null and /dev/full
(mknod as root; otherwise /dev/null and /dev/full bind-mounted onto files),
writes to each with proton-view --timeline, proton-merge-traces -o, an
instrumentation session's three outputs and the task exporter, and prints
one JSON line {"checked": N, "problems": [...]}. Every device must still be
the device afterwards; writing /dev/null succeeds; /dev/full gives a
command's one-line error (status 2) and a session's or the exporter's
fallback file in the temporary directory, named in its report."""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the suite's root: suite_paths
import suite_paths  # noqa: E402

sys.path[:0] = suite_paths.IMPORT_PATH

DEVICES = {"null": (1, 3), "full": (1, 7)}


def make_device(path: Path, which: str) -> None:
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(*DEVICES[which]))
    except PermissionError:  # a user namespace: no mknod, but bind mounts
        path.touch()
        subprocess.run(["mount", "--bind", f"/dev/{which}", str(path)], check=True)


def call(main, argv) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            status = main(argv)
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else 2
    return status or 0, out.getvalue()


def inputs(work: Path) -> tuple[str, list[str]]:
    """An intra-kernel Chrome trace and two .pftrace files."""
    from proton.recording import decode
    from proton.writers import chrome_trace, perfetto_trace
    from test_decode import make

    ev = decode.decode(*make(ctas=2, segments=2), 2, kernel="k")
    trace = work / "in.chrome_trace"
    chrome_trace.write(str(trace), [ev], ev.origin_ns)
    traces = []
    for rank in range(2):
        path = work / f"in{rank}.pftrace"
        perfetto_trace.write(str(path), [ev], f"GPU {rank}")
        traces.append(str(path))
    return str(trace), traces


def main() -> int:
    import numpy as np

    import proton
    from proton.commands.merge_traces import main as merge
    from proton.recording.instrumentation_session import OUTPUT_SUFFIXES
    from proton.tasks import host as tasks
    from proton.viewer import main as view

    work = Path(sys.argv[1])
    trace, traces = inputs(work)
    problems, checked = [], 0

    def still_device(path: Path, what: str) -> None:
        if not stat.S_ISCHR(os.lstat(path).st_mode):
            problems.append(f"{what}: {path.name} is no longer a character device")

    for which in DEVICES:
        target = work / f"dev_{which}"
        make_device(target, which)
        for what, command, argv in (
            ("proton-view --timeline", view, ["--timeline", str(target), trace]),
            ("proton-merge-traces -o", merge, ["-o", str(target), *traces]),
        ):
            status, text = call(command, argv)
            checked += 1
            still_device(target, what)
            expected = 0 if which == "null" else 2
            if status != expected or "Traceback" in text:
                problems.append(f"{what} {which}: status {status}, expected {expected}: {text[-300:]}")
            lines = text.strip().splitlines()
            full = [line for line in lines if "No space left on device" in line]
            if which == "full" and (full != lines[-1:] or "cannot write" not in full[0]):
                problems.append(f"{what} full: not one error line naming the full disk: {text!r}")

        names = {kind: work / f"{which}_run{ext}" for kind, ext in OUTPUT_SUFFIXES.items()}
        for path in names.values():
            make_device(path, which)
        proton.start(str(work / f"{which}_run"), backend="instrumentation", quiet=True)
        report = proton.finalize()
        checked += 1
        for kind, path in names.items():
            still_device(path, f"session {kind}")
            written = report.files.get(kind, "")
            if which == "null" and written != str(path):
                problems.append(f"session {kind} null: wrote {written!r}, not {path}")
            if which == "full" and not (written.startswith(os.environ["TMPDIR"]) and os.path.getsize(written)):
                problems.append(f"session {kind} full: no fallback file, report says {written!r}")
        if which == "full" and sum("No space left" in w for w in report.warnings) != len(names):
            problems.append(f"session full: the warnings do not name the full disk: {report.warnings}")

        words = np.zeros(tasks.HEADER_WORDS + tasks.ENTRY_WORDS * 4, dtype=np.int64)
        words[0] = np.uint64(tasks.MAGIC).view(np.int64)
        words[1] = 4
        task_file = work / f"dev_task_{which}"
        make_device(task_file, which)
        with contextlib.redirect_stderr(io.StringIO()) as err:
            exported = tasks.export_to_perfetto_trace(words, ["t"], str(task_file), gpu_name="GPU 0")
        checked += 1
        still_device(task_file, "export_to_perfetto_trace")
        if which == "null" and exported.file != str(task_file):
            problems.append(f"export_to_perfetto_trace null: wrote {exported.file}")
        if which == "full" and ("No space left" not in err.getvalue() or exported.file == str(task_file)):
            problems.append(f"export_to_perfetto_trace full: no fallback named: {err.getvalue()!r}")
    print(json.dumps({"checked": checked, "problems": problems}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
