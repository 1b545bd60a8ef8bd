"""proton-profile on the CPU: proton.start / proton.finalize replaced by
recording fakes; checks the options passed on, the target's argv, exit codes,
and that finalize runs however the target ends."""

import os
import subprocess
import sys
import textwrap

import pytest

import proton
from proton.commands import profile as cli
from proton.profiling import api


@pytest.fixture
def calls(monkeypatch):
    """What happened, in order: ("start", name, kwargs), ("script", argv, __name__), ("finalize",)."""
    recorded = []

    def start(name, **kwargs):
        recorded.append(("start", name, kwargs))

    def finalize():
        recorded.append(("finalize",))

    monkeypatch.setattr(api, "start", start)
    monkeypatch.setattr(api, "finalize", finalize)
    monkeypatch.setattr(proton, "_cli_test_calls", recorded, raising=False)
    return recorded


RECORDING = """
import sys
import proton
proton._cli_test_calls.append(("script", list(sys.argv), __name__))
"""


def script(tmp_path, body="", name="train.py"):
    path = tmp_path / name
    path.write_text(RECORDING + textwrap.dedent(body))
    return str(path)


def test_script_runs_as_main_with_its_argv(calls, tmp_path):
    path = script(tmp_path)
    argv_before = list(sys.argv)
    assert cli.main([path, "--epochs", "3", "-m", "x"]) == 0
    assert calls == [("start", "train", {}), ("script", [path, "--epochs", "3", "-m", "x"], "__main__"), ("finalize",)]
    assert sys.argv == argv_before


def test_options_are_passed_on(calls, tmp_path):
    path = script(tmp_path)
    assert (
        cli.main(
            [
                "--name",
                "run1",
                "--backend",
                "cupti",
                "--context",
                "python",
                "--data",
                "trace",
                "--hook",
                "triton",
                "--mode",
                "pcsampling",
                path,
            ]
        )
        == 0
    )
    assert calls[0] == (
        "start",
        "run1",
        {"backend": "cupti", "context": "python", "data": "trace", "hook": "triton", "mode": "pcsampling"},
    )
    calls.clear()
    assert cli.main(["--backend=instrumentation", "--mode=default:optimizations=clock32", path, "a"]) == 0
    assert calls[0] == ("start", "train", {"backend": "instrumentation", "mode": "default:optimizations=clock32"})
    assert calls[1][1] == [path, "a"]


def test_upstream_short_options(calls, tmp_path):
    """Triton's `proton` spellings: -n, -b, -c, -d, -k, -m (the mode), also with attached values."""
    path = script(tmp_path)
    assert (
        cli.main(
            [
                "-n",
                "run2",
                "-b",
                "cupti",
                "-c",
                "python",
                "-d",
                "trace",
                "-k",
                "triton",
                "-m",
                "pcsampling",
                path,
                "-n",
                "mine",
            ]
        )
        == 0
    )
    assert calls[0] == (
        "start",
        "run2",
        {"backend": "cupti", "context": "python", "data": "trace", "hook": "triton", "mode": "pcsampling"},
    )
    assert calls[1][1] == [path, "-n", "mine"]
    calls.clear()
    assert cli.main(["-binstrumentation", "-mdefault:optimizations=clock32", path]) == 0
    assert calls[0] == ("start", "train", {"backend": "instrumentation", "mode": "default:optimizations=clock32"})


def test_module_with_mode(calls, tmp_path, monkeypatch):
    pkg = tmp_path / "clipkg2"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "run.py").write_text(RECORDING)
    monkeypatch.chdir(tmp_path)
    try:
        assert cli.main(["-m", "pcsampling", "-b", "cupti", "--module=clipkg2.run", "-m", "x"]) == 0
    finally:
        for name in ("clipkg2", "clipkg2.run"):
            sys.modules.pop(name, None)
    assert calls[0] == ("start", "run", {"backend": "cupti", "mode": "pcsampling"})
    assert calls[1][1][1:] == ["-m", "x"]


def test_script_sees_its_directory_on_sys_path(calls, tmp_path):
    (tmp_path / "helper_mod_for_cli.py").write_text("VALUE = 7\n")
    path = script(tmp_path, "import helper_mod_for_cli\nassert helper_mod_for_cli.VALUE == 7\n")
    path_before = list(sys.path)
    assert cli.main([path]) == 0
    assert sys.path == path_before
    sys.modules.pop("helper_mod_for_cli", None)


@pytest.mark.parametrize(
    "body, code",
    [
        ("sys.exit(3)", 3),
        ("sys.exit(0)", 0),
        ("sys.exit()", 0),
        ("raise SystemExit(None)", 0),
    ],
)
def test_exit_code_propagates(calls, tmp_path, body, code):
    assert cli.main([script(tmp_path, body)]) == code
    assert calls[-1] == ("finalize",)


def test_exit_with_message(calls, tmp_path, capsys):
    assert cli.main([script(tmp_path, "sys.exit('bad input')")]) == 1
    assert capsys.readouterr().err == "bad input\n"
    assert calls[-1] == ("finalize",)


def test_finalize_runs_when_script_raises(calls, tmp_path, capsys):
    path = script(tmp_path, "raise ValueError('boom')")
    assert cli.main([path]) == 1
    assert [c[0] for c in calls] == ["start", "script", "finalize"]
    err = capsys.readouterr().err
    assert "Traceback" in err and "ValueError: boom" in err


def test_finalize_runs_on_keyboard_interrupt(calls, tmp_path):
    assert cli.main([script(tmp_path, "raise KeyboardInterrupt")]) == 130
    assert calls[-1] == ("finalize",)


def test_module_mode(calls, tmp_path, monkeypatch):
    pkg = tmp_path / "clipkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "tool.py").write_text(RECORDING + "sys.exit(int(sys.argv[-1]))\n")
    monkeypatch.chdir(tmp_path)
    try:
        assert cli.main(["--data", "trace", "--module", "clipkg.tool", "--flag", "5"]) == 5
    finally:
        for name in ("clipkg", "clipkg.tool"):
            sys.modules.pop(name, None)
    start, ran, fin = calls
    assert start == ("start", "tool", {"data": "trace"})
    assert ran[1][0] == str(pkg / "tool.py") and ran[1][1:] == ["--flag", "5"] and ran[2] == "__main__"
    assert fin == ("finalize",)


def test_pytest_mode(calls, tmp_path, monkeypatch, capsys):
    test_file = tmp_path / "test_tiny_cli.py"
    test_file.write_text(
        textwrap.dedent("""
        import proton

        def test_passing():
            proton._cli_test_calls.append(("test", "passing"))

        def test_failing():
            proton._cli_test_calls.append(("test", "failing"))
            assert False
    """)
    )
    monkeypatch.chdir(tmp_path)
    args = ["pytest", "-q", "-p", "no:cacheprovider", str(test_file)]
    assert cli.main(args + ["-k", "passing"]) == 0
    assert calls == [("start", "pytest", {}), ("test", "passing"), ("finalize",)]
    calls.clear()
    assert cli.main(["--name", "suite"] + args) == 1  # one test fails
    assert calls[0] == ("start", "suite", {}) and calls[-1] == ("finalize",)
    assert sorted(c for c in calls if c[0] == "test") == [("test", "failing"), ("test", "passing")]
    capsys.readouterr()


@pytest.mark.parametrize(
    "error", [proton.ProfilerError("unknown backend 'x'"), proton.ModeError("unknown mode 'bogus'")]
)
def test_start_errors_are_one_line(calls, tmp_path, monkeypatch, capsys, error):
    def start(name, **kwargs):
        raise error

    monkeypatch.setattr(api, "start", start)
    assert cli.main([script(tmp_path)]) == 2
    assert capsys.readouterr().err == f"proton-profile: {error}\n"
    assert calls == []  # neither the script nor finalize ran


def test_finalize_error(calls, tmp_path, monkeypatch, capsys):
    def finalize():
        raise proton.ProfilerError("could not write run.hatchet")

    monkeypatch.setattr(api, "finalize", finalize)
    assert cli.main([script(tmp_path)]) == 2
    assert capsys.readouterr().err == "proton-profile: could not write run.hatchet\n"
    assert cli.main([script(tmp_path, "sys.exit(4)")]) == 4  # the target's failure wins


@pytest.mark.parametrize(
    "argv, message",
    [
        ([], "no target"),
        (["--name", "x"], "no target"),
        (["--module"], "--module needs a module name"),
        (["-m"], "no target"),
        (["missing_script.py"], "missing_script.py: no such file"),
        (["--module", "no_such_module_for_cli"], "no module named 'no_such_module_for_cli'"),
        (["-b", "nvtx", "x.py"], "invalid choice: 'nvtx'"),
        (["-c", "frames", "x.py"], "invalid choice: 'frames'"),
        (["-d", "both", "x.py"], "invalid choice: 'both'"),
        (["-k", "torch", "x.py"], "invalid choice: 'torch'"),
        (["--backend", "nvtx", "x.py"], "invalid choice: 'nvtx'"),
        (["--bogus", "x.py"], "unrecognized arguments: --bogus"),
    ],
)
def test_usage_errors(calls, capsys, argv, message):
    assert cli.main(argv) == 2
    assert message in capsys.readouterr().err
    assert calls == []


def test_help(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: proton-profile [options] (script.py | --module module | pytest) [args...]")
    for option in (
        "-n NAME, --name",
        "-b",
        "--backend",
        "-c",
        "--context",
        "-d",
        "--data",
        "-k",
        "--hook",
        "-m MODE, --mode",
        "--module MODULE",
    ):
        assert option in out


def test_split_argv():
    assert cli.split_argv(["--name", "n", "s.py", "--name", "x"]) == (
        ["--name", "n"],
        "script",
        "s.py",
        ["--name", "x"],
    )
    assert cli.split_argv(["--module", "pkg.mod", "a"]) == ([], "module", "pkg.mod", ["a"])
    assert cli.split_argv(["--module=pkg.mod", "a"]) == ([], "module", "pkg.mod", ["a"])
    assert cli.split_argv(["-m", "pcsampling", "s.py", "-m", "x"]) == (
        ["-m", "pcsampling"],
        "script",
        "s.py",
        ["-m", "x"],
    )
    assert cli.split_argv(["-mpcsampling", "s.py"]) == (["-mpcsampling"], "script", "s.py", [])
    assert cli.split_argv(["/usr/bin/pytest", "-x"]) == ([], "pytest", "/usr/bin/pytest", ["-x"])
    assert cli.split_argv(["--", "-weird.py", "a"]) == ([], "script", "-weird.py", ["a"])
    assert cli.split_argv(["pytest", "-k", "foo"]) == ([], "pytest", "pytest", ["-k", "foo"])


def test_runs_as_module():
    proc = subprocess.run(
        [sys.executable, "-m", "proton.commands.profile", "--help"],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
    )
    assert proc.returncode == 0 and proc.stdout.startswith("usage: proton-profile")
    proc = subprocess.run(
        [sys.executable, "-m", "proton.commands.profile", "missing_script.py"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and proc.stderr == "proton-profile: missing_script.py: no such file\n"


@pytest.mark.parametrize(
    "argv, setup, message",
    [
        (
            ["proton.commands.insert_proton_records", "{d}/k.ttgir"],
            lambda d: (d / "k.ttgir").write_bytes(b"\xff\xfe"),
            "insert_proton_records: error: {d}/k.ttgir: not UTF-8 text (byte 0xff at offset 0); nothing written",
        ),
        (
            ["proton.commands.insert_proton_records", "{d}"],
            lambda d: os.symlink(d / "gone", d / "k.ttgir"),
            "insert_proton_records: error: {d}/k.ttgir: broken symbolic link",
        ),
        (
            ["proton.commands.insert_proton_records", "{d}/none"],
            lambda d: None,
            "insert_proton_records: error: {d}/none: no such file or directory; nothing written",
        ),
        (
            ["proton.commands.dump_ttgir", "--out", "{d}/f", sys.executable, "-c", "0"],
            lambda d: (d / "f").write_text("x"),
            "proton-dump-ttgir: error: --out {d}/f: is a file, not a directory; choose another --out",
        ),
        (
            ["proton.commands.dump_ttgir", "--out", "{d}/a/b", sys.executable, "-c", "0"],
            lambda d: None,
            "proton-dump-ttgir: error: --out {d}/a/b: the directory {d}/a does not exist",
        ),
    ],
)
def test_ttgir_commands_io_errors_without_traceback(tmp_path, argv, setup, message):
    """insert_proton_records and proton-dump-ttgir as run from a shell: a
    one-line error naming the path, exit status 2, no traceback."""
    setup(tmp_path)
    argv = [a.replace("{d}", str(tmp_path)) for a in argv]
    r = subprocess.run([sys.executable, "-m"] + argv, capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert r.stderr.startswith(message.replace("{d}", str(tmp_path))), r.stderr
