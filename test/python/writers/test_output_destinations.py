"""Where outputs go (proton.writers.files): every writer and command writes a
destination that is not a regular file (device node, FIFO, socket, a
process's open file such as /dev/stdout) directly, never renaming over it;
follows a symbolic link and keeps it; "-" is standard output for the
commands that write one file. Device nodes are tested in a private mount
namespace on a tmpfs of its own (destination_cases.py), never on the
machine's /dev; the other kinds in the test's own directory."""

import json
import os
import socket
import stat
import subprocess
import sys
import threading
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest

import proton
from proton.writers import files
from proton import viewer
from proton.commands.merge_traces import main as merge
from proton.tasks import host as tasks

from test_merge_traces import two_gpus
from test_timeline_svg import trace_file
import suite_paths

pytestmark = pytest.mark.usefixtures("no_instrumentation_session_left")


def _unshare_prefix() -> list[str]:
    return ["unshare", "--mount"] + ([] if os.geteuid() == 0 else ["--map-root-user"])


def test_device_destinations_in_a_private_mount_namespace(tmp_path):
    probe = subprocess.run([*_unshare_prefix(), "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"unshare --mount is not permitted here: {probe.stderr.strip()}")
    mount_point, temporary = tmp_path / "mnt", tmp_path / "tmp"
    mount_point.mkdir()
    temporary.mkdir()
    done = subprocess.run(
        [
            *_unshare_prefix(),
            "sh",
            "-c",
            'mount -t tmpfs proton-test "$1" && exec "$2" "$3" "$1"',
            "sh",
            str(mount_point),
            sys.executable,
            str(suite_paths.HELPERS / "destination_cases.py"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, TMPDIR=str(temporary)),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["problems"] == [] and result["checked"] == 8
    # /dev/full sent each session output and the export to the temporary directory.
    assert len(os.listdir(temporary)) == 4 and not os.listdir(mount_point)  # the tmpfs went with the namespace


def _session(name: str, outputs=("chrome_trace",)):
    proton.start(name, backend="instrumentation", outputs=outputs, quiet=True)
    return proton.finalize()


def _task_words() -> np.ndarray:
    words = np.zeros(tasks.HEADER_WORDS + tasks.ENTRY_WORDS * 4, dtype=np.int64)
    words[0] = np.uint64(tasks.MAGIC).view(np.int64)
    words[1] = 4
    return words


def _writers(tmp_path):
    """(what, write(destination) -> exit status) for every writer and command."""
    trace = str(trace_file(tmp_path))
    _, _, traces = two_gpus(tmp_path)

    def session(dest):
        name = dest[: -len(".chrome_trace")]
        return 0 if _session(name).files["chrome_trace"] == os.path.abspath(dest) else 1

    def export(dest):
        return 0 if tasks.export_to_perfetto_trace(_task_words(), ["t"], dest, gpu_name="GPU 0").file == dest else 1

    return [
        ("proton-view --timeline", lambda dest: viewer.main(["--timeline", dest, trace])),
        ("proton-merge-traces -o", lambda dest: merge(["--force", "-o", dest, *traces])),
        ("a session's output", session),
        ("export_to_perfetto_trace", export),
    ]


def test_a_symbolic_link_is_followed_and_kept(tmp_path, capsys):
    for n, (what, write) in enumerate(_writers(tmp_path)):
        for target_exists in (True, False):
            target = tmp_path / f"target{n}{target_exists}.chrome_trace"
            if target_exists:
                target.write_text("old")
            link = tmp_path / f"link{n}{target_exists}.chrome_trace"
            link.symlink_to(target.name)  # relative, as `ln -s` makes it
            assert write(str(link)) == 0, what
            assert link.is_symlink() and os.readlink(link) == target.name, what
            assert target.is_file() and target.read_bytes() not in (b"", b"old"), what
    capsys.readouterr()
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".partial")]


def test_a_fifo_is_written_to_by_a_reader_and_refused_without_one(tmp_path, monkeypatch, capsys):
    for n, (what, write) in enumerate(_writers(tmp_path)):
        fifo = tmp_path / f"fifo{n}.chrome_trace"
        os.mkfifo(fifo)
        got = []
        reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
        reader.start()
        assert write(str(fifo)) == 0, what
        reader.join(timeout=60)
        assert got and len(got[0]) > 0 and stat.S_ISFIFO(os.lstat(fifo).st_mode), what
    # No reader: a bounded wait, then a command's one-line error or a session's fallback.
    monkeypatch.setattr(files, "FIFO_READER_WAIT_S", 0.2)
    capsys.readouterr()
    trace = str(trace_file(tmp_path))
    fifo = tmp_path / "unread.chrome_trace"
    os.mkfifo(fifo)
    assert viewer.main(["--timeline", str(fifo), trace]) == 2
    err = capsys.readouterr().err
    assert "no process opened the FIFO for reading within 0.2 s" in err and len(err.strip().splitlines()) == 1
    report = _session(str(tmp_path / "unread"))
    assert report.files["chrome_trace"] != str(fifo) and os.path.getsize(report.files["chrome_trace"]) > 0
    assert any("no process opened the FIFO" in w for w in report.warnings)
    os.remove(report.files["chrome_trace"])
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_socket_receives_the_output_whole(tmp_path, capsys):
    for n, (what, write) in enumerate(_writers(tmp_path)):
        path = tmp_path / f"s{n}.chrome_trace"
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(path))
        server.listen(1)
        got = []

        def serve():
            connection, _ = server.accept()
            data = b""
            while chunk := connection.recv(1 << 16):
                data += chunk
            got.append(data)
            connection.close()

        thread = threading.Thread(target=serve)
        thread.start()
        assert write(str(path)) == 0, what
        thread.join(timeout=60)
        server.close()
        assert got and len(got[0]) > 0 and stat.S_ISSOCK(os.lstat(path).st_mode), what
    # A socket no one listens on: a one-line error naming it.
    capsys.readouterr()
    assert viewer.main(["--timeline", str(tmp_path / "s0.chrome_trace"), str(trace_file(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert "s0.chrome_trace: cannot write: cannot send to the socket" in err and len(err.strip().splitlines()) == 1


def _command(args: list, **kwargs):
    code = f"import sys; from {args[0]} import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args[1:]], timeout=120, **kwargs)


def test_dash_is_standard_output(tmp_path):
    trace = str(trace_file(tmp_path))
    done = _command(["proton.viewer", "--timeline", "-", trace], capture_output=True)
    assert done.returncode == 0 and done.stderr == b""
    assert ElementTree.fromstring(done.stdout).tag == "{http://www.w3.org/2000/svg}svg"
    _, _, traces = two_gpus(tmp_path)
    merged = tmp_path / "merged.pftrace"
    assert merge(["-o", str(merged), *traces]) == 0
    done = _command(["proton.commands.merge_traces", "-o", "-", *traces], capture_output=True)
    assert done.returncode == 0 and done.stdout == merged.read_bytes()
    assert b"wrote standard output" in done.stderr
    assert sorted(os.listdir(tmp_path)) == ["merged.pftrace", "rank0.pftrace", "rank1.pftrace", "t.chrome_trace"]


def test_a_path_to_a_processs_open_file_is_written_not_replaced(tmp_path):
    # A replica of /dev/stdout: a link to /proc/self/fd/1 (a bug would replace the link, not the machine's /dev).
    stdout_link = tmp_path / "stdout"
    stdout_link.symlink_to("/proc/self/fd/1")
    trace = str(trace_file(tmp_path))
    log = tmp_path / "log.svg"
    with open(log, "wb") as out:
        done = _command(["proton.viewer", "--timeline", str(stdout_link), trace], stdout=out, stderr=subprocess.PIPE)
    assert done.returncode == 0, done.stderr
    text = log.read_text()
    assert text.startswith("<svg") and text.rstrip().endswith(f"wrote {stdout_link}")
    assert stdout_link.is_symlink() and os.readlink(stdout_link) == "/proc/self/fd/1"
    piped = _command(["proton.viewer", "--timeline", str(stdout_link), trace], capture_output=True)
    assert piped.returncode == 0 and piped.stdout.startswith(b"<svg")


def test_a_directory_destination_is_a_one_line_error(tmp_path, capsys):
    trace = str(trace_file(tmp_path))
    assert viewer.main(["--timeline", str(tmp_path), trace]) == 2
    assert f"{tmp_path}: cannot write: is a directory" in capsys.readouterr().err
