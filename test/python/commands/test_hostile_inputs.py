"""Bad input to the commands and the API: one-line errors naming the
problem, no partial outputs, names that give files, and the TTGIR
rewriter's linear bookkeeping (on the CPU)."""

import json
import os
import random

import pytest

import proton
from proton.writers import files
from proton import viewer
from proton.compiling.ttgir_text import code_chars, code_text


pytestmark = pytest.mark.usefixtures("no_instrumentation_session_left")


@pytest.mark.parametrize("name", ["/", ".", "out/", "a/..", ""])
def test_session_names_must_name_files(tmp_path, name):
    with pytest.raises(proton.ProfilerError):
        proton.start(name, backend="instrumentation")


def test_a_name_with_dot_dot_says_where_files_go(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a").mkdir()
    proton.start("a/../b", backend="instrumentation")
    assert f"writes its outputs as {tmp_path / 'b'}.*" in capsys.readouterr().err
    proton.finalize()
    assert (tmp_path / "b.hatchet").exists()


def test_an_empty_mode_is_an_unknown_mode():
    with pytest.raises(proton.ModeError, match="unknown mode ''"):
        proton.start("x", mode="")


def test_outputs_are_written_whole_or_not_at_all(tmp_path):
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with files.output(str(target)) as partial:
            with open(partial, "wb") as f:
                f.write(b"half")
            raise RuntimeError("disk full")
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["out.bin"]
    with files.output(str(target)) as partial:
        with open(partial, "wb") as f:
            f.write(b"new")
    assert target.read_bytes() == b"new" and os.listdir(tmp_path) == ["out.bin"]


@pytest.mark.parametrize("value, shown", [("1e400", "inf"), ("-1e400", "-inf"), ("NaN", "nan")])
def test_the_viewer_shows_metrics_that_are_not_finite_as_such(tmp_path, value, shown, capsys):
    path = tmp_path / "t.hatchet"
    path.write_text(
        '[{"frame": {"name": "ROOT", "type": "function"}, "metrics": {"time (ns)": 0}, "children": ['
        '{"frame": {"name": "k", "type": "function"}, "metrics": {"time (ns)": ' + value + '}, "children": []}]}, {}]'
    )
    assert viewer.main([str(path), "-m", "time/ns,time (ns)/%"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2].split() == [shown, "nan", "ROOT"] and out[-1].split() == [shown, "nan", "└─", "k"]


def test_the_viewer_refuses_metrics_it_cannot_show(tmp_path, capsys):
    for value, problem in (("1" + "0" * 400, "has 401 digits"), ("{}", "is not a number, text or a list of them")):
        path = tmp_path / "t.hatchet"
        path.write_text(
            '[{"frame": {"name": "ROOT", "type": "function"}, "metrics": {"time (ns)": 0}, "children": ['
            '{"frame": {"name": "k", "type": "function"}, "metrics": {"time (ns)": ' + value + "}}]}, {}]"
        )
        assert viewer.main([str(path)]) == 2
        err = capsys.readouterr().err
        assert "node 'k': metric 'time (ns)'" in err and problem in err and "Traceback" not in err


def test_the_viewer_refuses_integer_text_python_cannot_read(tmp_path, capsys):
    path = tmp_path / "t.hatchet"
    path.write_text('[{"frame": {"name": "ROOT"}, "metrics": {"time (ns)": ' + "9" * 5000 + "}}]")
    assert viewer.main([str(path)]) == 2
    assert "not a profile tree" in capsys.readouterr().err


def test_code_text_is_code_chars_as_one_string():
    rng = random.Random(4)
    alphabet = 'ab {}"\\;'
    for _ in range(2000):
        line = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        assert code_text(line) == "".join(c for _, c in code_chars(line)), line


def test_insert_refuses_names_its_grammar_cannot_write_and_backups(tmp_path, capsys):
    from proton.commands.insert_proton_records import main
    from test_override_library import EARLY_RETURN

    f = tmp_path / "k.ttgir"
    f.write_text(EARLY_RETURN)
    for argv, problem in (
        (["--scope", 'a"b:4:4'], "contains '\"'"),
        (["--wrap-op", "tt.load", "--name", "x;y"], "contains ';'"),
        (["--for-body", " pad"], "without surrounding spaces"),
    ):
        assert main([*argv, str(f)]) == 2
        err = capsys.readouterr().err
        assert problem in err and "nothing written" in err and len(err.strip().splitlines()) == 1
    bak = tmp_path / "k.ttgir.bak"
    bak.write_text(EARLY_RETURN)
    assert main([str(bak)]) == 2
    assert "a backup this command keeps" in capsys.readouterr().err
    assert f.read_text() == EARLY_RETURN and bak.read_text() == EARLY_RETURN
    assert not (tmp_path / "k.ttgir.bak.bak").exists()


def test_merge_reports_a_corrupted_packet_with_its_input_and_offset(tmp_path, capsys):
    from proton.commands.merge_traces import main
    from proton.recording import decode
    from proton.writers import perfetto_trace
    from test_decode import make

    inputs = []
    for rank in range(2):
        buf, meta = make(ctas=1, segments=2)
        path = tmp_path / f"r{rank}.pftrace"
        perfetto_trace.write(str(path), [decode.decode(buf, meta, 1)], f"GPU {rank}")
        inputs.append(path)
    data = bytearray(inputs[0].read_bytes())
    data[40:48] = b"\xff" * 8  # inside the first packets
    inputs[0].write_bytes(bytes(data))
    out = tmp_path / "m.pftrace"
    assert main(["-o", str(out), *map(str, inputs)]) == 2
    err = capsys.readouterr().err
    assert f"{inputs[0]}:" in err and "nothing written" in err and "Traceback" not in err
    assert not out.exists() and sorted(os.listdir(tmp_path)) == ["r0.pftrace", "r1.pftrace"]
    json.dumps(err)  # one line of text


def _tree_text(children_text: str) -> str:
    return (
        '[{"frame": {"name": "ROOT", "type": "function"}, "metrics": {"time (ns)": 1}, "children": ['
        + children_text
        + "]}, {}]"
    )


def test_the_viewer_shows_trees_deeper_than_pythons_recursion_limit(tmp_path, capsys):
    link = '{"frame": {"name": "d", "type": "function"}, "metrics": {"time (ns)": 1}, "children": ['
    path = tmp_path / "deep.hatchet"
    path.write_text(_tree_text(link * 5000 + "]}" * 5000))
    assert viewer.main([str(path), "-d", "4"]) == 0
    out = capsys.readouterr().out
    assert out.count(" d\n") == 3  # ROOT, then the first three levels


def test_the_viewer_escapes_control_characters_in_names(tmp_path, capsys):
    path = tmp_path / "t.hatchet"
    name = json.dumps("\x1b[31mred\nline")
    path.write_text(_tree_text('{"frame": {"name": ' + name + '}, "metrics": {"time (ns)": 1}, "children": []}'))
    assert viewer.main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "\\x1b[31mred\\nline" in out and "\x1b" not in out


@pytest.mark.parametrize("limit", ["nan", "inf"])
def test_the_viewer_refuses_a_threshold_that_is_not_finite(tmp_path, limit, capsys):
    path = tmp_path / "t.hatchet"
    path.write_text(_tree_text(""))
    assert viewer.main(["-t", limit, str(path)]) == 2
    assert "--threshold must be a finite number" in capsys.readouterr().err
