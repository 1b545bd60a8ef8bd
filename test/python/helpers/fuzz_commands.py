"""Bounded, seeded fuzzing of the commands, run as a child process by
test_fuzz_commands.py (a crash of the child is a failure, not the test
runner's): `python fuzz_commands.py KIND SEED COUNT WORKDIR` prints one JSON
line {"runs", "statuses", "problems"}.

Kinds: "merge" (corrupted .pftrace inputs to proton-merge-traces), "insert"
(random scope specifications and names to insert_proton_records), "view"
(hostile .hatchet trees to proton-view), "outputs" (proton-view --timeline
and proton-merge-traces -o to destinations of every kind: files, links,
directories, FIFOs with and without a reader, sockets, "-"; a destination
keeps its kind) and "inputs" (FIFOs, directories, devices, sockets and bad
links given as inputs: refused). Every run must end with exit status 0 or 2
and no traceback, leave its inputs unchanged, and leave no partial output
(a failed run writes nothing)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import socket
import stat
import sys
import threading
from pathlib import Path


def call(main, argv) -> tuple[int, str]:
    """(exit status, stdout + stderr) of a command's main, in this process
    (standard output with bytes under it, for outputs written to "-")."""
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            status = main(argv)
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else 2
        except Exception as e:  # noqa: BLE001 - the failure this fuzzing looks for
            return -1, f"Traceback: {type(e).__name__}: {e}"
    out.flush()
    return status or 0, out.buffer.getvalue().decode("utf-8", "replace")


def mutate(rng: random.Random, data: bytes) -> bytes:
    data = bytearray(data)
    how = rng.randrange(5)
    if how == 0:  # flip bytes
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif how == 1:  # truncate
        del data[rng.randrange(len(data)) :]
    elif how == 2:  # insert garbage
        at = rng.randrange(len(data))
        data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
    elif how == 3:  # zero a range
        at = rng.randrange(len(data))
        data[at : at + rng.randint(1, 64)] = bytes(min(64, len(data) - at))
    else:  # a packet's length varint made huge
        at = rng.randrange(len(data))
        data[at : at + 1] = b"\xff\xff\xff\xff\x0f"
    return bytes(data)


def merge_case(rng, work: Path, n: int, valid: list[bytes]):
    from proton.commands.merge_traces import main

    a, b = work / f"a{n}.pftrace", work / f"b{n}.pftrace"
    a.write_bytes(mutate(rng, valid[0]))
    b.write_bytes(valid[1])
    return main, ["-o", str(work / f"out{n}.pftrace"), str(a), str(b)], [a, b], work / f"out{n}.pftrace"


SPEC_PIECES = [
    "a",
    '"',
    ":",
    "re:",
    "1",
    "3",
    "12",
    "99999",
    "\\",
    "(",
    "[",
    ";",
    " ",
    "é",
    "\n",
    "scf",
    "tt.load",
    "*",
]


def insert_case(rng, work: Path, n: int, valid: list[bytes]):
    from proton.commands.insert_proton_records import main

    f = work / f"k{n}.ttgir"
    f.write_bytes(valid[0])
    spec = "".join(rng.choice(SPEC_PIECES) for _ in range(rng.randint(1, 8)))
    argv = rng.choice(
        [
            ["--scope", spec],
            ["--wrap-op", spec],
            ["--wrap-op", "tt.load", "--name", spec],
            ["--for-body", spec],
            ["--scope", f"x:{rng.randint(0, 12)}:{rng.randint(0, 12)}"],
        ]
    )
    return main, [*argv, str(f)], [], None  # the file itself may be rewritten: checked by verify below


def view_case(rng, work: Path, n: int, valid: list[bytes]):
    from proton.viewer import main

    tree = json.loads(valid[0])
    node = tree[0]
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(6)
        if not isinstance(node.get("metrics"), dict):
            node["metrics"] = {}
        if not isinstance(node.get("frame"), dict):
            node["frame"] = {}
        if kind == 0:
            node["metrics"]["time (ns)"] = rng.choice([10**400, -(10**30), "1e400", float("nan"), None, [], "x" * 10])
        elif kind == 1:
            node["frame"]["name"] = rng.choice(["\x1b[31mred", "a\nb", "", 5, None])
        elif kind == 2:  # a chain of nodes 10 or 3,000 deep, written as text
            if not isinstance(node.get("children"), list):
                node["children"] = []
            node["children"].append(f"__DEEP_{rng.choice([10, 3000])}__")
        elif kind == 3:
            node["children"] = rng.choice([None, "x", [1, 2], [{}]])
            continue
        elif kind == 4:
            if not isinstance(node.get("children"), list):
                node["children"] = []
            node["children"].append({"frame": {"name": "x"}})  # no metrics, no children
        else:
            node["metrics"] = rng.choice([None, [], {"count": "many"}, {"time (ns)": 2**70}])
    if rng.random() < 0.1:  # not a tree at all
        tree = rng.choice([[], {}, [tree[0]], "x", [None, {}], [[], []]])
    text = json.dumps(tree, allow_nan=True) if not isinstance(tree, str) else tree
    for depth in (10, 3000):
        link = '{"frame": {"name": "d", "type": "function"}, "metrics": {"time (ns)": 1}, "children": ['
        text = text.replace(f'"__DEEP_{depth}__"', link * depth + "]}" * depth)
    path = work / f"t{n}.hatchet"
    path.write_text(text)
    metric = rng.choice(["time/ns", "time/s", "avg_time/us", "count"])
    argv = [str(path), "-m", metric] + rng.choice([[], ["-t", "nan"], ["-t", "1e309"], ["-d", "3"], ["--print-sorted"]])
    return main, argv, [path], None


DESTINATIONS = [
    "new file",
    "existing file",
    "link to a file",
    "link to nothing yet",
    "link to a link",
    "link into no directory",
    "directory",
    "FIFO read",
    "FIFO unread",
    "socket listening",
    "socket unheard",
    "standard output",
    "below a file",
]


def _shape(path: Path):
    """What a destination is (its type, a link's target): a run never changes it."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    return stat.S_IFMT(mode), os.readlink(path) if stat.S_ISLNK(mode) else None


def _destination(rng, work: Path, n: int):
    """(path to write, what it is, the file a success must fill, cleanup)."""
    kind = rng.choice(DESTINATIONS)
    path = work / f"dest{n}"
    filled, cleanup = None, lambda: None
    if kind == "new file":
        filled = path
    elif kind == "existing file":
        path.write_bytes(b"old")
        filled = path
    elif kind.startswith("link"):
        target = {"link into no directory": f"nodir{n}/t"}.get(kind, f"target{n}")
        if kind == "link to a file":
            (work / target).write_bytes(b"old")
        if kind == "link to a link":
            (work / f"middle{n}").symlink_to(target)
            path.symlink_to(f"middle{n}")
        else:
            path.symlink_to(target)
        filled = None if kind == "link into no directory" else work / target
    elif kind == "directory":
        path.mkdir()
    elif kind.startswith("FIFO"):
        os.mkfifo(path)
        if kind == "FIFO read":
            cleanup = _reader(path)
    elif kind.startswith("socket"):
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(path))
        if kind == "socket listening":
            cleanup = _listener(server)
        else:
            cleanup = server.close
    elif kind == "standard output":
        path = Path("-")
    else:  # below a file
        (work / f"file{n}").write_bytes(b"x")
        path = work / f"file{n}" / "out"
    return path, kind, filled, cleanup


def _reader(path: Path):
    """A thread reading the FIFO to its end; the cleanup lets it end even
    when the command never opened the FIFO."""
    thread = threading.Thread(target=lambda: open(path, "rb").read(), daemon=True)
    thread.start()

    def cleanup():
        if thread.is_alive():
            with contextlib.suppress(OSError):
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(10)

    return cleanup


def _listener(server):
    server.listen(1)
    server.settimeout(10)

    def serve():
        with contextlib.suppress(OSError):
            connection, _ = server.accept()
            while connection.recv(1 << 16):
                pass
            connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    def cleanup():
        thread.join(0.5)
        server.close()

    return cleanup


def outputs_case(rng, work: Path, n: int, valid: list[bytes]):
    """proton-view --timeline and proton-merge-traces -o against a destination of every kind."""
    from proton.writers import files
    from proton.commands.merge_traces import main as merge
    from proton.viewer import main as view

    files.FIFO_READER_WAIT_S = 0.3
    trace, a, b = (work / f"in{n}.{ext}" for ext in ("chrome_trace", "a.pftrace", "b.pftrace"))
    trace.write_bytes(valid[2])
    a.write_bytes(valid[0])
    b.write_bytes(valid[1])
    dest, kind, filled, cleanup = _destination(rng, work, n)
    if rng.random() < 0.5:
        command, argv = view, ["--timeline", str(dest), str(trace)]
    else:
        command, argv = merge, ["-o", str(dest), *(["--force"] if rng.random() < 0.7 else []), str(a), str(b)]
    shape = _shape(dest) if kind != "standard output" else None

    def check(status: int, text: str):
        cleanup()
        if kind != "standard output" and kind not in ("new file", "link to nothing yet") and _shape(dest) != shape:
            return f"the {kind} destination became {_shape(dest)}"
        if status == 0 and filled is not None and not (filled.is_file() and filled.read_bytes() != b"old"):
            return f"succeeded, but {filled.name} was not written"
        return None

    return command, argv, [trace, a, b], None, check


SPECIAL_INPUTS = ["FIFO", "directory", "link to a FIFO", "character device", "broken link", "link loop", "socket"]


def inputs_case(rng, work: Path, n: int, valid: list[bytes]):
    """A command given a special file as its input: refused at once (status 2)."""
    from proton.commands.insert_proton_records import main as insert
    from proton.commands.merge_traces import main as merge
    from proton.viewer import main as view

    kind = rng.choice(SPECIAL_INPUTS)
    path = work / f"in{n}.ttgir"
    if kind == "FIFO":
        os.mkfifo(path)
    elif kind == "directory":
        path = work / f"dir{n}"
        path.mkdir()
    elif kind == "link to a FIFO":
        os.mkfifo(work / f"fifo{n}")
        path.symlink_to(f"fifo{n}")
    elif kind == "character device":
        path = Path(os.devnull)
    elif kind == "broken link":
        path.symlink_to(f"nothing{n}")
    elif kind == "link loop":
        path.symlink_to(path.name)
    else:
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(path))
        server.close()
    other = work / f"other{n}.pftrace"
    other.write_bytes(valid[0])
    command, argv = rng.choice(
        [
            (view, [str(path)]),
            (view, ["--timeline", str(work / f"t{n}.svg"), str(path)]),
            (merge, ["-o", str(work / f"m{n}.pftrace"), str(path), str(other)]),
            (merge, ["-o", str(work / f"m{n}.pftrace"), str(other), str(path)]),
            (insert, [str(path)]),
        ]
    )

    def check(status: int, text: str):
        if kind == "directory" and command is insert:
            return None  # a directory is walked: it holds no .ttgir, which is its own error
        return None if status == 2 else f"a {kind} input gave status {status}"

    return command, argv, [other], None, check


CASES = {
    "merge": merge_case,
    "insert": insert_case,
    "view": view_case,
    "outputs": outputs_case,
    "inputs": inputs_case,
}


def valid_inputs(kind: str, work: Path) -> list[bytes]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the suite's root: suite_paths
    import suite_paths

    sys.path[:0] = suite_paths.IMPORT_PATH
    if kind == "merge":
        from proton.recording import decode
        from proton.writers import perfetto_trace
        from test_decode import make

        out = []
        for rank in range(2):
            buf, meta = make(ctas=2, segments=2)
            ev = decode.decode(buf, meta, 2, kernel=f"k{rank}")
            path = work / f"valid{rank}.pftrace"
            perfetto_trace.write(str(path), [ev], f"GPU {rank}")
            out.append(path.read_bytes())
        return out
    if kind == "insert":
        from test_override_library import EARLY_RETURN

        return [EARLY_RETURN.encode()]
    if kind in ("outputs", "inputs"):  # two .pftrace files and an intra-kernel Chrome trace
        from proton.recording import decode
        from proton.writers import chrome_trace, perfetto_trace
        from test_decode import make

        out = []
        ev = decode.decode(*make(ctas=2, segments=2), 2, kernel="k")
        for rank in range(2):
            path = work / f"valid{rank}.pftrace"
            perfetto_trace.write(str(path), [ev], f"GPU {rank}")
            out.append(path.read_bytes())
        chrome_trace.write(str(work / "valid.chrome_trace"), [ev], ev.origin_ns)
        return out + [(work / "valid.chrome_trace").read_bytes()]
    tree = [
        {
            "frame": {"name": "ROOT", "type": "function"},
            "metrics": {"time (ns)": 0, "count": 0},
            "children": [
                {"frame": {"name": "k", "type": "function"}, "metrics": {"time (ns)": 100, "count": 1}, "children": []}
            ],
        },
        {},
    ]
    return [json.dumps(tree).encode()]


def main() -> int:
    kind, seed, count, work = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4])
    rng = random.Random(seed)
    valid = valid_inputs(kind, work)
    statuses: dict[str, int] = {}
    problems = []
    for n in range(count):
        command, argv, inputs, output, *check = CASES[kind](rng, work, n, valid)
        before = [p.read_bytes() for p in inputs]
        status, text = call(command, argv)
        problem = check[0](status, text) if check else None
        if problem:
            problems.append(f"run {n} {argv!r}: {problem}")
        statuses[str(status)] = statuses.get(str(status), 0) + 1
        what = f"run {n} {argv!r}"
        if status not in (0, 2) or "Traceback" in text:
            problems.append(f"{what}: status {status}: {text[-300:]}")
        if [p.read_bytes() for p in inputs] != before:
            problems.append(f"{what}: an input changed")
        if output is not None and status != 0 and output.exists():
            problems.append(f"{what}: failed but left {output.name}")
        partial = [p.name for p in work.iterdir() if p.name.endswith(".partial")]
        if partial:
            problems.append(f"{what}: partial files left: {partial}")
        if kind == "insert" and status == 0:
            from proton.compiling.ttgir_rewriter import RewriteError, verify_records

            try:
                verify_records(Path(argv[-1]).read_text(), argv[-1])  # what it wrote reads back
            except RewriteError as e:
                problems.append(f"{what}: wrote records that do not verify: {e}")
    print(json.dumps({"runs": count, "statuses": statuses, "problems": problems[:20]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
