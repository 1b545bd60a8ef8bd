"""Ends that were unclear, now one-line errors or well-formed outputs: the
SVG timeline is XML for any names (parsed back here) and refuses times that
are not finite; a standard output that cannot be written (ENOSPC) is one
line after the outputs were written, not a bug report; arguments of the
wrong type name the argument; labels that are not UTF-8 are named."""

import json
import os
import random
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest

import proton
from proton import viewer

from test_merge_traces import two_gpus
from test_override_library import EARLY_RETURN
from test_timeline_svg import trace_file

SVG = "{http://www.w3.org/2000/svg}"
PROGS = {"view": "proton-view", "merge_traces": "proton-merge-traces", "insert_proton_records": "insert_proton_records"}


def _renamed(path, rename):
    trace = json.load(open(path))
    for event in trace["traceEvents"]:
        rename(event)
    json.dump(trace, open(path, "w"))


def test_the_timeline_is_well_formed_xml_for_any_names(tmp_path, capsys):
    rng = random.Random(39)
    alphabet = ["\x00", "\x01", "\x1b", "\x7f", "\ud800", "\udcff", "\ufffe", "\uffff", "]]>", "<", "&", '"', "é", "a"]
    for n in range(40):
        name = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6)))
        trace = trace_file(tmp_path, ctas=1, segments=2, name=f"t{n}.chrome_trace")

        def rename(event, name=name):
            event["name"] = name
            event["tid"] = event["tid"] + " " + name  # the warp's label: "warp 0 <name>"

        _renamed(trace, rename)
        out = tmp_path / f"t{n}.svg"
        assert viewer.main(["--timeline", str(out), str(trace)]) == 0
        root = ElementTree.parse(out).getroot()  # raises on text XML forbids
        legend = [t.text for t in root.iter(f"{SVG}text") if t.get("class") == "legend"]
        assert len(legend) == 1 and "\\" in legend[0] or legend[0] == name
    capsys.readouterr()


@pytest.mark.parametrize("ts", ["NaN", "Infinity", "1e308"])
def test_the_timeline_refuses_times_that_are_not_finite(tmp_path, capsys, ts):
    trace = trace_file(tmp_path)
    text = trace.read_text()
    first = json.loads(text)["traceEvents"][0]
    _renamed(trace, lambda e: e.update(ts="__TS__") if e == first else None)
    trace.write_text(trace.read_text().replace('"__TS__"', ts))
    assert viewer.main(["--timeline", str(tmp_path / "t.svg"), str(trace)]) == 2
    err = capsys.readouterr().err
    assert "are not finite times" in err and f"event '{first['name']}'" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "t.svg").exists()


def _console(command: str, args: list, stdout) -> subprocess.CompletedProcess:
    """A console script as installed (proton.commands.entry_points), stdout to `stdout`."""
    code = f"import sys; from proton.commands.entry_points import {command}; sys.argv[0] = {command!r}; {command}()"
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, args)], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=120
    )


def test_a_full_standard_output_is_one_line_after_the_outputs(tmp_path):
    _, _, traces = two_gpus(tmp_path)
    (tmp_path / "k.ttgir").write_text(EARLY_RETURN)
    deep = tmp_path / "big.hatchet"
    children = [{"frame": {"name": f"k{i}"}, "metrics": {"time (ns)": i}, "children": []} for i in range(5000)]
    deep.write_text(json.dumps([{"frame": {"name": "ROOT"}, "metrics": {"time (ns)": 1}, "children": children}]))
    with open("/dev/full", "w") as full:  # opened as the commands' standard output, never written over
        for command, args, written in (
            ("view", [deep], None),  # fails mid-table
            ("merge_traces", ["-o", tmp_path / "m.pftrace", *traces], tmp_path / "m.pftrace"),
            ("insert_proton_records", [tmp_path / "k.ttgir"], tmp_path / "k.ttgir.bak"),
            ("view", ["--timeline", tmp_path / "t.svg", trace_file(tmp_path)], tmp_path / "t.svg"),
        ):
            done = _console(command, args, full)
            lines = [line for line in done.stderr.splitlines() if "aligned on" not in line]
            assert done.returncode == 2, (command, done.stderr)
            assert lines == [f"{PROGS[command]}: error: cannot write to standard output: No space left on device"]
            assert written is None or written.stat().st_size > 0
    # The picture to standard output, which is full: the command's own line.
    with open("/dev/full", "w") as full:
        done = _console("view", ["--timeline", "-", trace_file(tmp_path)], full)
    assert (
        done.returncode == 2 and done.stderr == "proton-view: standard output: cannot write: No space left on device\n"
    )


def test_arguments_of_the_wrong_type_name_the_argument():
    for call in (proton.activate, proton.deactivate, proton.finalize):
        with pytest.raises(proton.ProfilerError, match=r"the id proton.start returned \(an int\), got list \[0\]"):
            call([0])
    with pytest.raises(proton.ProfilerError, match="outputs is a list of .* got int"):
        proton.start("x", backend="instrumentation", outputs=5)
    with pytest.raises(proton.ModeError, match="optimizations must be a comma-separated string or a list, got int 123"):
        proton.mode.Default(optimizations=123)
    with pytest.raises(proton.ModeError, match="sampling_options must be .* got float 1.5"):
        proton.mode.Default(sampling_strategy="selective", sampling_options=1.5)


def test_labels_that_are_not_utf8_are_named(tmp_path):
    _, _, traces = two_gpus(tmp_path)
    code = "import sys; from proton.commands.merge_traces import main; sys.exit(main(sys.argv[1:]))"
    done = subprocess.run(
        [sys.executable, "-c", code, "--labels", b"a,\xffb", "-o", tmp_path / "m.pftrace", *traces],
        capture_output=True,
        timeout=120,
    )
    err = done.stderr.decode("utf-8", "backslashreplace")
    assert done.returncode == 2 and "--labels: label 2 is not valid Unicode text" in err and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("proton-merge-traces: error: --labels: label 2 is not")
    assert not os.path.exists(tmp_path / "m.pftrace")
