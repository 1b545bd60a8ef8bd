"""Bounded work for any input: each case runs in a child process with a
memory limit (RLIMIT_AS, what `ulimit -v` sets) and a time limit, so that
a regression fails the test instead of the machine: --ctas/--warps ranges
held as ranges, compressed packets inflated within a budget, record tables
whose parents form a cycle refused, and special files refused as inputs at
once (a FIFO would block a reader forever)."""

import json
import os
import resource
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pytest

from proton.contract import kernel_metadata
from proton.writers import perfetto_deflate
from proton.writers.perfetto_packets import trace_packet, varint_bytes

from test_decode import make
from test_timeline_svg import trace_file
import suite_paths

MEMORY_LIMIT = 1 << 30  # bytes of address space for the child: imports take about 400 MB
TIME_LIMIT = 60  # seconds


def bounded(code: str, *args) -> subprocess.CompletedProcess:
    """Runs `code` (sys.argv[1:] = args) with MEMORY_LIMIT and TIME_LIMIT."""

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))

    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    # The child imports the suite's modules by name, as the tests do (suite_paths).
    env["PYTHONPATH"] = os.pathsep.join([*suite_paths.IMPORT_PATH, *filter(None, [os.environ.get("PYTHONPATH")])])
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
        preexec_fn=limit,
        capture_output=True,
        text=True,
        timeout=TIME_LIMIT,
        env=env,
        cwd=suite_paths.ROOT,
    )


COMMAND = """
import sys
from {module} import main
sys.exit(main(sys.argv[1:]))
"""


def command(module: str, *args) -> subprocess.CompletedProcess:
    return bounded(COMMAND.format(module=module), *args)


def test_huge_cta_and_warp_ranges_cost_what_small_ones_do(tmp_path):
    trace = trace_file(tmp_path)
    out = tmp_path / "t.svg"
    done = command(
        "proton.viewer", "--timeline", out, "--ctas", "0-9999999999999", "--warps", "1,0-99999999999999", trace
    )
    assert done.returncode == 0, done.stderr
    assert out.read_text().count('class="scope"') == 3 * 4 * 3  # every CTA and warp of the trace


def test_a_compression_bomb_is_refused_within_the_budget(tmp_path):
    # 512 MiB of zeros deflate (level 9) to about 0.5 MB: 1,000 times the file.
    body = zlib.compress(bytes(512 << 20), 9)
    bomb = tmp_path / "bomb.pftrace"
    bomb.write_bytes(trace_packet(perfetto_deflate.COMPRESSED_PACKETS_TAG + varint_bytes(len(body)) + body))
    other = tmp_path / "other.pftrace"
    other.write_bytes(bomb.read_bytes())
    done = command("proton.commands.merge_traces", "-o", tmp_path / "m.pftrace", bomb, other)
    assert done.returncode == 2, done.stderr
    assert f"inflate past {perfetto_deflate.MAX_INFLATE_RATIO} times the file's" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "m.pftrace").exists()


def test_merge_reports_running_out_of_memory_in_one_line(tmp_path, monkeypatch, capsys):
    from proton.commands import merge_traces

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(merge_traces, "merge", no_memory)
    assert merge_traces.main(["-o", str(tmp_path / "m.pftrace"), "a.pftrace"]) == 2
    err = capsys.readouterr().err
    assert err == "proton-merge-traces: error: not enough memory to merge these inputs; nothing written\n"


def cyclic_metadata() -> dict:
    _, meta = make(ctas=1, kernel_id=77)
    d = meta.to_dict()
    d["scopes"][0]["parent"], d["scopes"][1]["parent"] = 1, 0  # kernel <-> load
    return d


def test_a_record_table_whose_parents_cycle_is_refused(tmp_path):
    with pytest.raises(ValueError, match=r"record table of k: its parents form a cycle \(0 -> 1 -> 0\)"):
        kernel_metadata.KernelMetadata.from_dict(cyclic_metadata())
    d = cyclic_metadata()
    d["scopes"][0]["parent"] = 9
    with pytest.raises(ValueError, match="row 0 has parent 9, which is no row"):
        kernel_metadata.KernelMetadata.from_dict(d)


def test_a_cyclic_table_from_triton_s_cache_warns_and_finalize_ends(tmp_path, fake_gpu_memory_path):
    # What a corrupted cache entry hands the load hook; the session then
    # finalizes in bounded time and memory, naming the launch it could not decode.
    from proton.compiling.stage_hook import METADATA_KEY

    group = tmp_path / "k.json"
    group.write_text(json.dumps({METADATA_KEY: json.dumps(cyclic_metadata())}))
    buffer = tmp_path / "buffer.bin"
    make(ctas=1, kernel_id=77)[0].tofile(buffer)
    done = bounded(
        """
        import sys, warnings
        import numpy as np
        import proton
        from proton.compiling.stage_hook import register_loaded_kernel
        from proton.device import memory as device_memory
        from test_long_runs import launch
        device_memory.use(device_memory.DeviceMemory(device_memory.CudaDriver(sys.argv[4])))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            register_loaded_kernel(None, None, "k", {"k.json": sys.argv[1]}, "hash")
        print(caught[0].message)
        session = proton.start(sys.argv[3], backend="instrumentation", quiet=True)
        launch(session, np.fromfile(sys.argv[2], dtype=np.uint8), "k")
        print(proton.finalize().errors)
        """,
        group,
        buffer,
        tmp_path / "run",
        fake_gpu_memory_path,
    )
    assert done.returncode == 0, done.stderr
    warning, errors = done.stdout.strip().splitlines()
    assert "kernel k from Triton's cache" in warning and "its parents form a cycle (0 -> 1 -> 0)" in warning
    assert "no metadata for kernel id 77 of k" in errors


@pytest.fixture
def special_inputs(tmp_path):
    """A FIFO (no writer: reading it would wait forever), and a character device."""
    fifo = tmp_path / "fifo.hatchet"
    os.mkfifo(fifo)
    return {"a FIFO": fifo, "a character device": Path(os.devnull)}


def test_special_files_are_refused_as_inputs_at_once(tmp_path, special_inputs):
    trace = trace_file(tmp_path)
    ttgir = tmp_path / "dump"
    ttgir.mkdir()
    os.mkfifo(ttgir / "k.ttgir")  # met while walking a directory
    for kind, path in special_inputs.items():
        for module, args in (
            ("proton.viewer", [path]),
            ("proton.viewer", ["--diff-profile", path, path]),
            ("proton.viewer", ["--timeline", tmp_path / "t.svg", path]),
            ("proton.commands.merge_traces", ["-o", tmp_path / "m.pftrace", path, trace]),
            ("proton.commands.insert_proton_records", [path]),
        ):
            done = command(module, *args)
            assert done.returncode == 2, (module, args, done.stderr)
            assert f"{path}: cannot read: is {kind}, not a regular file" in done.stderr, (module, done.stderr)
            assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    done = command("proton.commands.insert_proton_records", ttgir)
    assert done.returncode == 2 and "k.ttgir: cannot read: is a FIFO, not a regular file" in done.stderr
    assert not (tmp_path / "t.svg").exists() and not (tmp_path / "m.pftrace").exists()
