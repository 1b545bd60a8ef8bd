"""proton-view on hand-written profiles (fixtures/host_*.hatchet): metric values
computed by hand, filters, diff, --list, colour, and one-line errors."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fake_cupti_support import fake_host_sessions  # noqa: F401 (fixture)

from proton import viewer
from proton.commands.viewer import triton_functions
import suite_paths

FIXTURES = suite_paths.FIXTURES
HOST = str(FIXTURES / "host_run.hatchet")
BEFORE = str(FIXTURES / "host_run_before.hatchet")
INTRA = str(FIXTURES / "host_intra_kernel.hatchet")
TREE_ART = "│├└─ "

# sm90 peaks as in Triton's specs (1513 TFLOP/s fp8 at 114 SMs and 1.755 GHz, scaled to the
# fixture's 132 SMs at 1.98 GHz; halved per doubling of the width), 2619 MHz x 6144-bit memory
PEAK_FP8 = 1513e12 * 132 / 114 * 1980 / 1755
PEAK_FP16, PEAK_FP32 = PEAK_FP8 / 2, PEAK_FP8 / 4
PEAK_BW = 2 * 2619e6 * 6144 / 8


def sm90_util(seconds, flops16=0.0, flops32=0.0, nbytes=0.0, sms_scale=1.0):
    """Triton's util: max(sum of flops / peak per width, bytes / peak bandwidth) / time."""
    return max((flops16 / PEAK_FP16 + flops32 / PEAK_FP32) / sms_scale, nbytes / PEAK_BW) / seconds


def view(capsys, *args):
    rc = viewer.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, out, err


def table(out: str, n_metrics: int):
    """[(name, [value strings])] in printed order, from the lines after the header."""
    rows = []
    lines = [line for line in out.splitlines() if not line.startswith("#")]  # a diff's first line
    for line in lines[1:]:
        tokens = line.split()
        values = tokens[:n_metrics]
        rest = line.split(None, n_metrics)[n_metrics] if len(tokens) > n_metrics else ""
        rows.append((rest.lstrip(TREE_ART), values))
    return rows


def values(out: str, n_metrics: int) -> dict:
    return {name: vals for name, vals in table(out, n_metrics)}


def names(out: str, n_metrics: int = 1) -> list:
    return [name for name, _ in table(out, n_metrics)]


def write_profile(tmp_path, data, name="p.hatchet"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return str(path)


def host_data():
    return json.loads(Path(HOST).read_text())


# -- output -----------------------------------------------------------------------


def test_default_host_output_exact(capsys):
    rc, out, err = view(capsys, HOST)
    assert rc == 0 and err == ""
    assert out == (
        "   time/s  name\n"
        "0.0100000  ROOT\n"
        "0.0080000  ├─ forward\n"
        "0.0060000  │  ├─ matmul_kernel\n"
        "0.0020000  │  └─ add_kernel\n"
        "0.0020000  └─ backward\n"
        "0.0015000     ├─ matmul_bwd_kernel\n"
        "0.0005000     └─ memcpy DtoH\n"
    )


def test_derived_metric_values(capsys):
    metrics = "time/ms,time/%,count,tflop/s,tflop16/s,tflop32/s,gbyte/s,avg_time/ms,util,tokens"
    rc, out, _ = view(capsys, "-m", metrics, HOST)
    assert rc == 0
    assert out.splitlines()[0].split() == metrics.split(",") + ["name"]
    v = {name: dict(zip(metrics.split(","), vals)) for name, vals in table(out, 10)}
    # ROOT: (7.5e12 + 0.5e12) flops in 10 ms = 800 TFLOP/s
    assert float(v["ROOT"]["tflop/s"]) == pytest.approx(800.0)
    assert float(v["matmul_kernel"]["tflop/s"]) == pytest.approx(6e12 / 6e-3 / 1e12)  # 1000
    assert float(v["matmul_bwd_kernel"]["tflop/s"]) == pytest.approx(2e12 / 1.5e-3 / 1e12, abs=1e-3)
    assert float(v["matmul_bwd_kernel"]["tflop16/s"]) == pytest.approx(1000.0)
    assert float(v["backward"]["tflop32/s"]) == pytest.approx(0.5e12 / 2e-3 / 1e12)  # 250
    assert float(v["add_kernel"]["tflop/s"]) == 0.0
    assert float(v["add_kernel"]["gbyte/s"]) == pytest.approx(8e9 / 2e-3 / 1e9)  # 4000
    assert float(v["matmul_kernel"]["avg_time/ms"]) == pytest.approx(3.0)
    assert float(v["ROOT"]["avg_time/ms"]) == pytest.approx(10 / 6, abs=1e-4)
    assert v["forward"]["time/%"] == "80.00%" and v["memcpy DtoH"]["time/%"] == "5.00%"
    assert v["ROOT"]["time/%"] == "100.00%"
    assert v["ROOT"]["count"] == "6" and v["matmul_bwd_kernel"]["count"] == "1"
    assert v["forward"]["tokens"] == "4096" and v["backward"]["tokens"] == "0"
    # util: matmul is compute bound (fp16), add_kernel memory bound
    assert float(v["matmul_kernel"]["util"]) == pytest.approx(1e15 / PEAK_FP16, abs=1e-4)
    assert float(v["add_kernel"]["util"]) == pytest.approx(4e12 / PEAK_BW, abs=1e-4)
    assert float(v["ROOT"]["util"]) == pytest.approx(sm90_util(0.01, 7.5e12, 0.5e12, 1.7e10), abs=1e-4)


def test_time_units_and_plain_percent(capsys):
    rc, out, _ = view(capsys, "-m", "time/ns,time/us,time/s,time/%,count/%", HOST)
    v = values(out, 5)
    assert v["matmul_bwd_kernel"] == ["1500000.000", "1500.000", "0.0015000", "15.00%", "16.67%"]


def test_intra_kernel_default_cycles_and_one_tree_per_kernel(capsys):
    rc, out, _ = view(capsys, "-m", "cycles,normalized_cycles,cycles/%", INTRA)
    assert rc == 0
    rows = table(out, 3)
    assert [n for n, _ in rows] == ["vector_add", "load", "load_x", "store", "matmul", "mainloop", "epilogue"]
    v = dict(rows)
    assert v["load"] == ["24000", "750.000", "60.00%"]  # of vector_add's 40000
    assert v["mainloop"] == ["720000", "5625.000", "80.00%"]  # of matmul's 900000, not vector_add's
    assert v["epilogue"][1] == "703.125"
    rc, out, _ = view(capsys, INTRA)
    assert out.splitlines()[0].split() == ["cycles", "name"]
    lines = out.splitlines()
    assert lines[1].endswith("  vector_add") and lines[5].endswith("  matmul")  # roots start a line of the tree


def test_depth(capsys):
    # as Triton's -d: N levels, 1 = the roots only
    _, out, _ = view(capsys, "--depth", "2", HOST)
    assert names(out) == ["ROOT", "forward", "backward"]
    _, out, _ = view(capsys, "-d", "1", HOST)
    assert names(out) == ["ROOT"]
    _, out, _ = view(capsys, "-d", "2", INTRA)
    assert names(out) == ["vector_add", "load", "store", "matmul", "mainloop", "epilogue"]


def test_include_keeps_ancestors_and_descendants(capsys):
    _, out, _ = view(capsys, "--include", "^matmul", HOST)
    assert names(out) == ["ROOT", "forward", "matmul_kernel", "backward", "matmul_bwd_kernel"]
    _, out, _ = view(capsys, "--include", "forward", HOST)
    assert names(out) == ["ROOT", "forward", "matmul_kernel", "add_kernel"]
    _, out, _ = view(capsys, "--include", "load_x", INTRA)  # kernels without a match disappear
    assert names(out) == ["vector_add", "load", "load_x"]


def test_exclude_drops_subtrees(capsys):
    _, out, _ = view(capsys, "--exclude", "backward", HOST)
    assert names(out) == ["ROOT", "forward", "matmul_kernel", "add_kernel"]
    _, out, _ = view(capsys, "--exclude", ".*_kernel$", HOST)  # re.match: anchored at the start
    assert names(out) == ["ROOT", "forward", "backward", "memcpy DtoH"]
    _, out, _ = view(capsys, "-e", "kernel", HOST)  # matches no name's start
    assert len(names(out)) == 7
    _, out, _ = view(capsys, "-e", "matmul|add", HOST)
    assert names(out) == ["ROOT", "forward", "backward", "memcpy DtoH"]
    # values are the file's, not recomputed
    assert values(out, 1)["forward"] == ["0.0080000"]
    rc, out, err = view(capsys, "--exclude", ".", HOST)
    assert rc == 0 and out == "" and "no nodes left" in err


def test_threshold(capsys):
    # Triton's -t: nodes whose first metric is >= T, in the metric's unit, with their ancestors
    _, out, _ = view(capsys, "-m", "time/ms", "--threshold", "1.5", HOST)
    assert names(out) == ["ROOT", "forward", "matmul_kernel", "add_kernel", "backward", "matmul_bwd_kernel"]
    _, out, _ = view(capsys, "-m", "time/ms", "-t", "2.5", HOST)
    assert names(out) == ["ROOT", "forward", "matmul_kernel"]
    _, out, _ = view(capsys, "-m", "time/%", "-t", "20", HOST)
    assert names(out) == ["ROOT", "forward", "matmul_kernel", "add_kernel", "backward"]
    _, out, _ = view(capsys, "-t", "500000", "-m", "cycles", INTRA)
    assert names(out) == ["matmul", "mainloop"]


def test_sorted(capsys):
    _, out, _ = view(capsys, "-m", "bytes", HOST)
    assert names(out) == [
        "ROOT",
        "forward",
        "matmul_kernel",
        "add_kernel",
        "backward",
        "matmul_bwd_kernel",
        "memcpy DtoH",
    ]
    _, out, _ = view(capsys, "-m", "bytes,time/ms", "--sorted", HOST)
    assert names(out, 2) == [
        "ROOT",
        "forward",
        "add_kernel",
        "matmul_kernel",
        "backward",
        "matmul_bwd_kernel",
        "memcpy DtoH",
    ]
    _, out, _ = view(capsys, "-m", "time/ms,bytes", "--sorted", HOST)
    assert names(out, 2)[2:4] == ["matmul_kernel", "add_kernel"]


def test_diff(capsys):
    rc, out, _ = view(capsys, "-m", "time/ms,count,tokens,time/%", "--diff-profile", BEFORE, HOST)
    assert rc == 0
    assert out.splitlines()[0] == f"# {HOST} minus {BEFORE}"
    rows = table(out, 4)
    assert [n for n, _ in rows] == [
        "ROOT",
        "forward",
        "matmul_kernel",
        "add_kernel",
        "backward",
        "matmul_bwd_kernel",
        "memcpy DtoH (only in this profile)",
        "old_kernel (only in the other profile)",
    ]
    v = dict(rows)
    # METRIC/% is the difference of the two shares, as in Triton's viewer
    assert v["ROOT"] == ["-2.0000", "+0", "+2048", "+0.00%"]
    assert v["matmul_kernel"][:3] == ["-1.0000", "+0", "+0"]
    assert float(v["matmul_kernel"][3][:-1]) == pytest.approx(60 - 7 / 12 * 100, abs=0.01)
    assert v["add_kernel"][:3] == ["+0.0000", "+0", "+0"]
    assert v["memcpy DtoH (only in this profile)"] == ["-"] * 4  # NaN in Triton's viewer
    assert v["old_kernel (only in the other profile)"] == ["-"] * 4
    _, out, _ = view(capsys, "-m", "tflop/s", "-diff", BEFORE, HOST)  # Triton's short spelling
    # matmul: 1000 TFLOP/s now, 6e12 / 7 ms before
    assert float(values(out, 1)["matmul_kernel"][0]) == pytest.approx(1000 - 6e12 / 7e-3 / 1e12, abs=1e-3)


def listed(out):
    return [line[2:].split("  ")[0] for line in out.splitlines() if line.startswith("- ")]


def test_list(capsys):
    rc, out, _ = view(capsys, "--list", HOST)
    assert rc == 0
    assert out.startswith("Available inclusive metrics:\n- bytes\n- count\n")
    names_ = listed(out)
    for name in [
        "time",
        "count",
        "tokens",
        "flops16",
        "bytes",
        "time/s",
        "time/ms",
        "time/us",
        "time/ns",
        "avg_time/ms",
        "flop/s",
        "gflop/s",
        "tflop/s",
        "tflop16/s",
        "gflop32/s",
        "byte/s",
        "gbyte/s",
        "tbyte/s",
        "util",
    ]:
        assert name in names_
    assert "tflop8/s" not in names_ and "device_id" not in names_ and "cycles" not in names_
    rc, out, _ = view(capsys, "-l", INTRA)
    assert set(listed(out)) == {
        "time/s",
        "time/ms",
        "time/us",
        "time/ns",
        "avg_time/s",
        "avg_time/ms",
        "avg_time/us",
        "avg_time/ns",
        "count",
        "cycles",
        "normalized_cycles",
        "time",
    }


def test_raw_and_pc_sampling_metrics(capsys, tmp_path):
    def node(name, kind, metrics, children=()):
        return {"frame": {"name": name, "type": kind}, "metrics": metrics, "children": list(children)}

    line_a = node("kernel.py:12", "line", {"num_samples": 30, "stall_long_scoreboard": 20})
    line_b = node("<unknown>+0x1a0", "line", {"num_samples": 10, "stall_long_scoreboard": 2})
    kernel = node(
        "k",
        "kernel",
        {"time (ns)": 1000, "count": 1, "num_samples": 40, "stall_long_scoreboard": 22, "device_id": 0},
        [line_a, line_b],
    )
    root_metrics = {k: v for k, v in kernel["metrics"].items() if k != "device_id"}
    path = write_profile(tmp_path, [node("ROOT", "function", root_metrics, [kernel])])
    _, out, _ = view(capsys, "-m", "num_samples,num_samples/%,stall_long_scoreboard", path)
    v = values(out, 3)
    assert v["kernel.py:12"] == ["30", "75.00%", "20"] and v["<unknown>+0x1a0"] == ["10", "25.00%", "2"]


def test_short_labels_and_device_labels(capsys, tmp_path):
    data = host_data()
    data[0]["children"][0]["frame"] = {"name": "/home/me/model/train.py:42@forward", "type": "frame"}
    data[0]["children"][1]["children"][0]["metrics"]["device_id"] = 1
    data[-1]["devices"]["CUDA"]["1"] = dict(data[-1]["devices"]["CUDA"]["0"])
    path = write_profile(tmp_path, data)
    _, out, _ = view(capsys, path)  # full is the default, as in Triton's viewer
    assert "/home/me/model/train.py:42@forward" in names(out)
    assert "matmul_bwd_kernel [device 1]" in names(out) and "matmul_kernel [device 0]" in names(out)
    _, out, _ = view(capsys, "--format", "short", path)
    assert "train.py:42@forward" in names(out) and "/home/me/model/train.py:42@forward" not in names(out)


def test_util_per_device_when_devices_differ(capsys, tmp_path):
    data = host_data()
    data[0]["children"][1]["children"][0]["metrics"]["device_id"] = 1
    data[-1]["devices"]["CUDA"]["1"] = dict(data[-1]["devices"]["CUDA"]["0"], num_sms=66)
    path = write_profile(tmp_path, data)
    _, out, _ = view(capsys, "-m", "util", path)
    v = values(out, 1)
    assert float(v["matmul_bwd_kernel [device 1]"][0]) == pytest.approx(
        sm90_util(1.5e-3, 1.5e12, 0.5e12, 2e9, sms_scale=0.5), abs=1e-4
    )
    assert v["ROOT"] == ["-"]  # kernels on devices with different peaks below it
    assert float(v["forward"][0]) == pytest.approx(sm90_util(8e-3, 6e12, 0, 1.4e10), abs=1e-4)


def test_small_values_use_exponents(capsys, tmp_path):
    data = host_data()
    data[0]["children"][1]["children"][1]["metrics"]["time (ns)"] = 0.5
    _, out, _ = view(capsys, "-m", "time/s", write_profile(tmp_path, data))
    v = values(out, 1)
    assert v["memcpy DtoH"] == ["5.000e-10"] and v["ROOT"] == ["1.000e-02"]


# -- colour ------------------------------------------------------------------------------


class FakeTTY(io.StringIO):
    def isatty(self):
        return True


def test_plain_when_piped_and_ansi_when_forced(capsys, monkeypatch):
    _, out, _ = view(capsys, HOST)
    assert "\x1b[" not in out
    _, out, _ = view(capsys, "--color", HOST)
    assert "\x1b[1mROOT\x1b[0m" in out and "\x1b[36mmatmul_kernel\x1b[0m" in out
    assert "\x1b[31m0.0100000\x1b[0m" in out  # 100% of the root: red
    assert "\x1b[33m0.0020000\x1b[0m" in out  # add_kernel, 20%: yellow
    monkeypatch.delenv("NO_COLOR", raising=False)
    tty = FakeTTY()
    monkeypatch.setattr(sys, "stdout", tty)
    assert viewer.main([HOST]) == 0
    assert "\x1b[" in tty.getvalue()
    tty = FakeTTY()
    monkeypatch.setattr(sys, "stdout", tty)
    assert viewer.main(["--no-color", HOST]) == 0
    assert "\x1b[" not in tty.getvalue() and "matmul_kernel" in tty.getvalue()


def test_module_runs_piped_without_colour():
    proc = subprocess.run(
        [sys.executable, "-m", "proton.viewer", "-m", "time/ms", HOST],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "\x1b[" not in proc.stdout and proc.stdout.splitlines()[1] == "10.0000  ROOT"
    proc = subprocess.run(
        [sys.executable, "-m", "proton.viewer", "missing.hatchet"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2 and proc.stderr == "proton-view: missing.hatchet: no such file\n"


# -- errors ---------------------------------------------------------------------------------


def assert_error(capsys, args, *fragments):
    rc, out, err = view(capsys, *args)
    assert rc == 2
    assert out == ""
    assert err.startswith("proton-view: ") and err.count("\n") == 1 and "Traceback" not in err
    for fragment in fragments:
        assert fragment in err
    return err


def test_error_missing_file(capsys, tmp_path):
    assert_error(capsys, [tmp_path / "none.hatchet"], "none.hatchet: no such file")


def test_error_not_json(capsys, tmp_path):
    path = tmp_path / "bad.hatchet"
    path.write_text("[{\"frame\": ")
    assert_error(capsys, [path], "bad.hatchet: not JSON")


@pytest.mark.parametrize(
    "data, reason",
    [
        ({"frame": {"name": "ROOT"}}, "the top level is a JSON dict"),
        ([], "no root nodes"),
        ([{"metrics": {}, "children": []}], "root 0 has no frame name"),
        (
            [{"frame": {"name": "ROOT"}, "metrics": {"time (ns)": {"ns": 10}}, "children": []}],
            "node 'ROOT': metric 'time (ns)' is not a number, text or a list of them",
        ),
        ([{"frame": {"name": "ROOT"}, "metrics": {}, "children": [{"frame": {}}]}], "a child of node 'ROOT' has no"),
        ([{"frame": {"name": "ROOT"}, "metrics": {}, "children": {}}], "'children' is not a list"),
        ([{"frame": {"name": "ROOT"}, "metrics": {}, "children": []}, {"CUDA": {}}], "no nodes with metrics"),
        (
            [{"frame": {"name": "ROOT"}, "metrics": {"count": 1}, "children": []}, {"CUDA": 5}],
            "devices['CUDA'] is not an object",
        ),
        (
            [{"frame": {"name": "k"}, "metrics": {"device_id": "gpu0"}, "children": []}],
            "node 'k': metric 'device_id' is not a device index",
        ),
    ],
)
def test_error_wrong_structure(capsys, tmp_path, data, reason):
    path = write_profile(tmp_path, data)
    assert_error(capsys, [path], f"{path}: not a profile tree: ", reason)


def test_error_unknown_metric_lists_valid_ones(capsys):
    err = assert_error(capsys, ["-m", "time/ms,latency", HOST], "unknown metric 'latency'", HOST)
    assert "time/ms" in err and "tflop16/s" in err and "util" in err and "tokens" in err


def test_error_metric_needs_missing_field(capsys, tmp_path):
    assert_error(capsys, ["-m", "flop/s", INTRA], "metric 'flop/s' needs 'flops' or a 'flops<N>' metric", INTRA)
    assert_error(capsys, ["-m", "tflop8/s", HOST], "metric 'tflop8/s' needs 'flops8'", HOST)
    assert_error(capsys, ["-m", "gbyte/s", INTRA], "needs 'bytes'")
    data = [{"frame": {"name": "k", "type": "function"}, "metrics": {"cycles": 5}, "children": []}]
    assert_error(capsys, ["-m", "time/us", write_profile(tmp_path, data)], "needs 'time (ns)'")


def test_error_util_without_device_info(capsys, tmp_path):
    path = write_profile(tmp_path, host_data()[:-1])
    assert_error(capsys, ["-m", "util", path], "'util' is unavailable", "no device info")
    data = host_data()
    data[-1] = {"devices": {"HIP": {"0": dict(data[-1]["devices"]["CUDA"]["0"], arch="gfx1100")}}}
    path = write_profile(tmp_path, data)
    assert_error(capsys, ["-m", "util", path], "'util' is unavailable", "known for CUDA sm80", "'gfx1100'")
    # without util the same file views fine
    assert view(capsys, "-m", "tflop/s", path)[0] == 0


def test_error_bad_options(capsys):
    assert_error(capsys, ["--include", "(", HOST], "--include: invalid regular expression '('")
    assert_error(capsys, ["--depth", "0", HOST], "--depth must be >= 1")
    assert_error(
        capsys, ["--diff-profile", "/nonexistent/other.hatchet", HOST], "/nonexistent/other.hatchet: no such file"
    )
    assert_error(capsys, ["-m", " , ", HOST], "no metrics given")
    rc, _, err = view(capsys, "--bogus", HOST)
    assert rc == 2 and "unrecognized arguments: --bogus" in err


# -- llnl-hatchet reads the same files --------------------------------------------------------


def test_hatchet_loads_host_fixture():
    hatchet = pytest.importorskip("hatchet")
    data = host_data()
    gf = hatchet.GraphFrame.from_literal(data[:-1])  # the last element is the device info
    df = gf.dataframe.reset_index()
    by_name = {row["name"]: row for _, row in df.iterrows()}
    assert set(by_name) == {
        "ROOT",
        "forward",
        "matmul_kernel",
        "add_kernel",
        "backward",
        "matmul_bwd_kernel",
        "memcpy DtoH",
    }
    assert by_name["ROOT"]["time (ns)"] == 10000000 and by_name["matmul_kernel"]["flops16"] == 6e12
    assert by_name["add_kernel"]["count"] == 2
    gf = hatchet.GraphFrame.from_literal(json.loads(Path(INTRA).read_text()))
    assert len(gf.graph.roots) == 2


def test_short_cxx_kernel_names():
    from proton.viewer import short_cxx_name

    assert (
        short_cxx_name(
            "void at::native::vectorized_elementwise_kernel<4, at::native::AbsFunctor<float>, "
            "std::array<char*, 2ul> >(int, at::native::AbsFunctor<float>, std::array<char*, 2ul>)"
        )
        == "at::native::vectorized_elementwise_kernel"
    )
    assert (
        short_cxx_name("void at::native::(anonymous namespace)::grid_kernel<float, 4>(long)")
        == "at::native::anon::grid_kernel"
    )
    assert short_cxx_name("matmul_2048x2048x2048") == "matmul_2048x2048x2048"
    assert short_cxx_name("memcpy DtoH") == "memcpy DtoH"


# -- Triton's layout (fixtures/upstream: hand-written, a made-up training step) --------------------

UP = str(FIXTURES / "upstream" / "train_step.hatchet")
UP_BEFORE = str(FIXTURES / "upstream" / "train_step_before.hatchet")
# device 0: sm90 like the host fixture; device 1: sm80 (Triton's fixed 624 TFLOP/s fp8, 2 x 1593 MHz x 5120 bit)
A100_BW = 2 * 1593e6 * 5120 / 8


def test_upstream_layout_sums_own_values(capsys):
    metrics = "time/ms,count,tflop16/s,gbyte/s,avg_time/us,time/%,util"
    rc, out, _ = view(capsys, "-m", metrics, UP)
    assert rc == 0
    v = {name.split(" [")[0]: dict(zip(metrics.split(","), vals)) for name, vals in table(out, 7)}
    assert "eval" not in v and "__proton_launch_metadata" not in v  # metadata frames and empty scopes dropped
    assert v["ROOT"]["time/ms"] == "10.0000" and v["ROOT"]["count"] == "26"
    assert v["mlp"]["time/ms"] == "5.0000" and v["mlp"]["time/%"] == "50.00%"
    assert float(v["train_step"]["tflop16/s"]) == pytest.approx(5e12 / 8.5e-3 / 1e12, abs=1e-3)
    assert float(v["softmax_kernel"]["gbyte/s"]) == pytest.approx(3200.0)
    assert float(v["flash_fwd_kernel"]["avg_time/us"]) == pytest.approx(750.0)
    assert float(v["gemm_kernel"]["util"]) == pytest.approx((3.2e12 / PEAK_FP16 + 1.6e12 / PEAK_FP8) / 4e-3, abs=1e-4)
    assert float(v["adam_kernel"]["util"]) == pytest.approx(3e9 / A100_BW / 1.5e-3, abs=1e-4)
    assert v["ROOT"]["util"] == "-"  # sm90 and sm80 kernels below


def test_upstream_options(capsys):
    _, out, _ = view(capsys, "-m", "time/ms", "-i", "mlp", UP)
    assert names(out) == ["ROOT", "train_step", "mlp", "gemm_kernel [device 0]", "gelu_kernel [device 0]"]
    _, out, _ = view(capsys, "-m", "time/ms", "-e", "train", UP)
    assert names(out) == ["ROOT", "optimizer", "adam_kernel [device 1]"]
    _, out, _ = view(capsys, "-m", "time/ms", "-t", "3", "-d", "3", UP)
    assert names(out) == ["ROOT", "train_step", "attention", "mlp"]
    _, out, _ = view(capsys, "-m", "TIME", UP)  # raw metric, case-insensitive, unit optional
    assert out.splitlines()[0].split() == ["TIME", "name"] and values(out, 1)["ROOT"] == ["10000000"]
    rc, out, _ = view(capsys, "-m", "time/ms", "-d", "2", "--print-sorted", UP)
    assert rc == 0
    tree, listing = out.split("\n\n")
    assert names(tree) == ["ROOT", "train_step", "optimizer"]
    lines = listing.splitlines()
    assert lines[0] == "Sorted kernels by metric time/ms"
    assert [line.split()[0] for line in lines[1:4]] == ["train_step", "mlp", "gemm_kernel"]
    assert lines[1] == f"{'train_step':105} 8.5"
    _, out, _ = view(capsys, "-m", "time/ms,time/%", "-diff", UP_BEFORE, UP)
    v = values(out, 2)
    assert v["flash_fwd_kernel [device 0]"] == ["+1.0000", "+10.49%"]  # 30% of 10 ms - 19.5% of 10.25 ms
    assert v["data_loader (only in the other profile)"] == ["-", "-"]


@pytest.mark.parametrize(
    "fmt, name",
    [
        ("full", "/home/dev/proj/model/train.py:42@step"),
        ("file_function_line", "train.py:42@step"),
        ("function_line", "42@step"),
        ("file_function", "train.py@step"),
        ("short", "train.py:42@step"),
    ],
)
def test_frame_formats(capsys, tmp_path, fmt, name):
    data = json.loads(Path(UP).read_text())
    data[0]["children"][0]["frame"]["name"] = "/home/dev/proj/model/train.py:42@step"
    path = write_profile(tmp_path, data)
    _, out, _ = view(capsys, "-f", fmt, "-m", "time/ms", path)
    assert name in names(out) and "gemm_kernel [device 0]" in names(out)  # kernel names untouched
    assert view(capsys, "--format", fmt, "-i", "/home", path)[0] == 0


def test_python_functions_match_triton_names():
    pytest.importorskip("hatchet")
    for name in (
        "get_raw_metrics",
        "read",
        "parse",
        "derive_metrics",
        "format_frames",
        "filter_frames",
        "get_min_time_flops",
        "get_min_time_bytes",
        "match_available_metrics",
        "remove_frames",
        "apply_diff_profile",
        "print_tree",
        "show_metrics",
        "emit_warnings",
        "main",
    ):
        assert callable(getattr(viewer, name))
    with open(UP) as f:
        gf, inc, exc, devices = viewer.get_raw_metrics(f)
    assert set(devices["CUDA"]) == {"0", "1"} and "time (ns)" in inc
    gf.update_inclusive_columns()
    cols = viewer.derive_metrics(gf, ["time/ms", "util", "count"], inc, exc, devices)
    assert cols == ["time/ms (inc)", "util", "count (inc)"]
    df = gf.dataframe.set_index("name")
    assert df.loc["ROOT", "time/ms (inc)"] == pytest.approx(10.0)
    assert df.loc["adam_kernel", "util"] == pytest.approx(3e9 / A100_BW / 1.5e-3)
    flops = viewer.get_min_time_flops(gf.dataframe, devices)
    assert flops.loc[gf.dataframe["name"] == "flash_fwd_kernel", "min_time"].iloc[0] == pytest.approx(
        1.8e12 / PEAK_FP16
    )
    # Proton's own inclusive files come out with the same inclusive columns
    gf, metrics = viewer.parse(["time/ms", "tflop16/s"], HOST)
    df = gf.dataframe.set_index("name")
    assert df.loc["ROOT", "time/ms (inc)"] == pytest.approx(10.0)
    assert df.loc["forward", "tflop16/s (inc)"] == pytest.approx(750.0)
    gf, _ = viewer.parse(["time/ms"], UP, include="mlp")
    assert sorted(gf.dataframe["name"]) == ["ROOT", "gelu_kernel", "gemm_kernel", "mlp", "train_step"]


def _triton_viewer():
    try:
        import triton.profiler.viewer as tv
    except Exception as e:  # not installed, or hatchet missing
        pytest.skip(f"Triton's viewer is not importable: {e}")
    return tv


@pytest.mark.parametrize("path, diff", [(UP, None), (UP, UP_BEFORE), (HOST, None)])
def test_same_numbers_as_tritons_viewer(capsys, path, diff):
    tv = _triton_viewer()
    metrics = ["time/ms", "count", "avg_time/us", "tflop16/s", "gbyte/s", "time/%", "util"]
    if path == HOST:
        metrics = metrics[:-1]  # Triton's viewer reads only its own layout's device info
        with open(HOST) as f:  # and its own layout: give it the file as Proton's functions convert it
            converted = triton_functions._to_triton_layout(json.load(f))
        import tempfile

        tmp = tempfile.NamedTemporaryFile("w", suffix=".hatchet", delete=False)
        json.dump(converted, tmp)
        tmp.close()
        triton_path = tmp.name
    else:
        triton_path = path
    gf, cols = tv.parse(metrics, triton_path)
    if triton_path != path:
        os.unlink(triton_path)
    if diff:
        gf = tv.apply_diff_profile(gf, cols, diff, metrics, None, None, None)
    theirs = gf.dataframe.set_index("name")[cols]
    args = ["-m", ",".join(metrics), "--no-color"] + (["-diff", diff] if diff else []) + [path]
    rc, out, _ = view(capsys, *args)
    assert rc == 0
    ours = {name.split(" [")[0].split(" (only")[0]: vals for name, vals in table(out, len(metrics))}
    compared = 0
    for name, row in theirs.iterrows():
        for metric, col in zip(metrics, cols):
            expected = row[col]
            got = ours[name][metrics.index(metric)]
            if expected != expected:  # NaN: Triton leaves util of scopes and absent precisions empty
                continue
            assert got != "-", (name, metric)
            assert float(got.rstrip("%")) == pytest.approx(float(expected), rel=1e-3, abs=6e-3), (name, metric)
            compared += 1
    assert compared > 30


RECORDED = FIXTURES / "recorded"  # bench/record_profiles.py on an H100: one program, each profiler


def _ours_and_triton(capsys, path, metrics):
    """{name: [our values]} and Triton's viewer's dataframe for one file."""
    tv = _triton_viewer()
    gf, cols = tv.parse(metrics, str(path))
    rc, out, _ = view(capsys, "-m", ",".join(metrics), "--no-color", str(path))
    assert rc == 0
    ours = {}
    for name, vals in table(out, len(metrics)):
        ours.setdefault(name.split(" [")[0], vals)
    return ours, gf.dataframe, cols


@pytest.mark.parametrize("recorder", ["triton", "proton"])
def test_recorded_host_profiles_read_the_same_in_both_viewers(capsys, recorder):
    # A host profile recorded by Triton's Proton and one recorded by ours:
    # each viewer reads each file with the same numbers.
    metrics = ["time/ns", "count", "gflop32/s", "gbyte/s", "tokens"]
    ours, theirs, cols = _ours_and_triton(capsys, RECORDED / f"{recorder}_host.hatchet", metrics)
    compared = 0
    for _, row in theirs.iterrows():
        if row["name"] not in ours or row["name"] == "add_1048576":  # the kernel leaf is listed twice
            continue
        for metric, col in zip(metrics, cols):
            if row[col] == row[col]:  # not NaN
                assert float(ours[row["name"]][metrics.index(metric)]) == pytest.approx(float(row[col]), rel=1e-3)
                compared += 1
    assert compared >= 10


def test_recorded_host_profiles_agree_between_profilers():
    # The same program under both profilers: the same tree of scopes and
    # kernels, counts, flops, bytes and user metrics (times differ by run).
    def paths(path):
        root, devices = json.load(open(path))
        out = {}

        def walk(node, prefix):
            for child in node["children"]:
                key = prefix + (child["frame"]["name"],)
                out[key] = {k: v for k, v in child["metrics"].items() if k in ("count", "flops32", "bytes", "tokens")}
                walk(child, key)

        walk(root, ())
        return out, devices["CUDA"]["0"]["num_sms"]

    assert paths(RECORDED / "proton_host.hatchet") == paths(RECORDED / "triton_host.hatchet")


def test_recorded_intra_kernel_trees_read_in_both_viewers(capsys):
    # Intra-kernel trees: ours in Triton's viewer gives our numbers, and the
    # scope counts of Triton's file and ours describe the same launch (4096 warps).
    metrics = ["cycles", "normalized_cycles"]
    ours, theirs, cols = _ours_and_triton(capsys, RECORDED / "proton_intra.hatchet", metrics)
    rows = {row["name"]: row for _, row in theirs.iterrows()}
    for name in ("add", "load", "store"):
        for metric, col in zip(metrics, cols):
            assert float(ours[name][metrics.index(metric)]) == pytest.approx(float(rows[name][col]), rel=1e-3)
    mine = json.load(open(RECORDED / "proton_intra.hatchet"))[0]["children"][0]
    upstream = json.load(open(RECORDED / "triton_intra.hatchet"))[0]["children"][0]
    for scope_mine, scope_up in zip(
        sorted(mine["children"], key=lambda n: n["frame"]["name"]),
        sorted(upstream["children"], key=lambda n: n["frame"]["name"]),
    ):
        assert scope_mine["frame"]["name"] == scope_up["frame"]["name"]
        warps = lambda m: m["cycles"] / m["normalized_cycles"]  # noqa: E731
        assert warps(scope_mine["metrics"]) == pytest.approx(warps(scope_up["metrics"])) == 4096


@pytest.mark.parametrize("fmt", ["hatchet", "hatchet_msgpack"])
def test_the_viewer_reads_every_tree_a_host_session_writes(fake, fake_host_sessions, tmp_path, capsys, fmt):  # noqa: F811
    # Vector, text and non-finite metrics, as proton.scope accepts them: the
    # tree is read whichever metric -m names, and each value shown as it is.
    import proton

    from test_host_runtime import CBID_cuLaunchKernel

    proton.start(str(tmp_path / "all"), backend="cupti", quiet=True)
    metrics = {"vec": [1, 2.5], "nan": float("nan"), "inf": float("-inf"), "note(pty)": "fast", "n": 3}
    with proton.scope("step", metrics=metrics):
        fake.fake_launch(CBID_cuLaunchKernel, b"k", 0, 10, 1)
    with proton.scope("step", metrics={"vec": [3.0, 4.0], "n": 4}):
        pass
    path = proton.finalize(None, fmt).files["tree"]
    rc, out, err = view(capsys, path, "-m", "time/ns,count")
    assert rc == 0 and err == "" and values(out, 2)["k"] == ["10.000", "1"]
    rc, out, err = view(capsys, path, "-m", "vec,note,nan,inf,n,n/%", "--print-sorted")
    assert rc == 0 and err == ""
    shown = values(out.split("\n\n")[0], 6)
    assert shown["step"] == ["[4,6.5]", "fast", "nan", "-inf", "7", "100.00%"]
    assert shown["ROOT"] == ["[4,6.5]", "0", "nan", "-inf", "7", "100.00%"]  # text stays on its node
    assert shown["k"] == ["0", "0", "0", "0", "0", "0.00%"]
