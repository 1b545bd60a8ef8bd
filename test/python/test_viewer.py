"""proton-view on hand-written profiles (fixtures/host_*.hatchet): metric values
computed by hand, filters, diff, --list, colour, and one-line errors."""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from proton import viewer

FIXTURES = Path(__file__).parent / "fixtures"
HOST = str(FIXTURES / "host_run.hatchet")
BEFORE = str(FIXTURES / "host_run_before.hatchet")
INTRA = str(FIXTURES / "host_intra_kernel.hatchet")
TREE_ART = "│├└─ "

# sm90 peaks of the fixture's device (132 SMs at 1.98 GHz, 2619 MHz x 6144-bit memory)
PEAK_FP16 = 4096 * 132 * 1.98e9
PEAK_BW = 2 * 2619e6 * 6144 / 8


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
        "0.0005000     └─ memcpy DtoH\n")


def test_derived_metric_values(capsys):
    metrics = "time/ms,time/%,count,tflop/s,tflop16/s,tflop32/s,gbyte/s,avg_time/ms,util,tokens"
    rc, out, _ = view(capsys, "-m", metrics, HOST)
    assert rc == 0
    assert out.splitlines()[0].split() == metrics.split(",") + ["name"]
    v = {name: dict(zip(metrics.split(","), vals)) for name, vals in table(out, 10)}
    # ROOT: (7.5e12 + 0.5e12) flops in 10 ms = 800 TFLOP/s
    assert float(v["ROOT"]["tflop/s"]) == pytest.approx(800.0)
    assert float(v["matmul_kernel"]["tflop/s"]) == pytest.approx(6e12 / 6e-3 / 1e12)       # 1000
    assert float(v["matmul_bwd_kernel"]["tflop/s"]) == pytest.approx(2e12 / 1.5e-3 / 1e12, abs=1e-3)
    assert float(v["matmul_bwd_kernel"]["tflop16/s"]) == pytest.approx(1000.0)
    assert float(v["backward"]["tflop32/s"]) == pytest.approx(0.5e12 / 2e-3 / 1e12)          # 250
    assert float(v["add_kernel"]["tflop/s"]) == 0.0
    assert float(v["add_kernel"]["gbyte/s"]) == pytest.approx(8e9 / 2e-3 / 1e9)              # 4000
    assert float(v["matmul_kernel"]["avg_time/ms"]) == pytest.approx(3.0)
    assert float(v["ROOT"]["avg_time/ms"]) == pytest.approx(10 / 6, abs=1e-4)
    assert v["forward"]["time/%"] == "80.00%" and v["memcpy DtoH"]["time/%"] == "5.00%"
    assert v["ROOT"]["time/%"] == "100.00%"
    assert v["ROOT"]["count"] == "6" and v["matmul_bwd_kernel"]["count"] == "1"
    assert v["forward"]["tokens"] == "4096" and v["backward"]["tokens"] == "0"
    # util: matmul is compute bound (fp16), add_kernel memory bound
    assert float(v["matmul_kernel"]["util"]) == pytest.approx(1e15 / PEAK_FP16, abs=1e-4)
    assert float(v["add_kernel"]["util"]) == pytest.approx(4e12 / PEAK_BW, abs=1e-4)
    assert float(v["ROOT"]["util"]) == pytest.approx(max(7.5e14 / PEAK_FP16, 1.7e12 / PEAK_BW), abs=1e-4)


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
    assert v["load"] == ["24000", "750.000", "60.00%"]        # of vector_add's 40000
    assert v["mainloop"] == ["720000", "5625.000", "80.00%"]  # of matmul's 900000, not vector_add's
    assert v["epilogue"][1] == "703.125"
    rc, out, _ = view(capsys, INTRA)
    assert out.splitlines()[0].split() == ["cycles", "name"]
    lines = out.splitlines()
    assert lines[1].endswith("  vector_add") and lines[5].endswith("  matmul")  # roots start a line of the tree


def test_depth(capsys):
    _, out, _ = view(capsys, "--depth", "1", HOST)
    assert names(out) == ["ROOT", "forward", "backward"]
    _, out, _ = view(capsys, "--depth", "0", HOST)
    assert names(out) == ["ROOT"]
    _, out, _ = view(capsys, "--depth", "1", INTRA)
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
    _, out, _ = view(capsys, "--exclude", "_kernel$", HOST)
    assert names(out) == ["ROOT", "forward", "backward", "memcpy DtoH"]
    # values are the file's, not recomputed
    assert values(out, 1)["forward"] == ["0.0080000"]
    rc, out, err = view(capsys, "--exclude", ".", HOST)
    assert rc == 0 and out == "" and "no nodes left" in err


def test_threshold(capsys):
    _, out, _ = view(capsys, "--threshold", "0.1", HOST)
    assert names(out) == ["ROOT", "forward", "matmul_kernel", "add_kernel", "backward", "matmul_bwd_kernel"]
    _, out, _ = view(capsys, "--threshold", "0.2", HOST)  # 20% itself stays
    assert names(out) == ["ROOT", "forward", "matmul_kernel", "add_kernel", "backward"]
    _, out, _ = view(capsys, "-t", "0.5", "-m", "cycles", INTRA)  # per root
    assert names(out) == ["vector_add", "load", "matmul", "mainloop"]


def test_sorted(capsys):
    _, out, _ = view(capsys, "-m", "bytes", HOST)
    assert names(out) == ["ROOT", "forward", "matmul_kernel", "add_kernel", "backward", "matmul_bwd_kernel",
                          "memcpy DtoH"]
    _, out, _ = view(capsys, "-m", "bytes,time/ms", "--sorted", HOST)
    assert names(out, 2) == ["ROOT", "forward", "add_kernel", "matmul_kernel", "backward", "matmul_bwd_kernel",
                             "memcpy DtoH"]
    _, out, _ = view(capsys, "-m", "time/ms,bytes", "--sorted", HOST)
    assert names(out, 2)[2:4] == ["matmul_kernel", "add_kernel"]


def test_diff(capsys):
    rc, out, _ = view(capsys, "-m", "time/ms,count,tokens,time/%", "--diff-profile", BEFORE, HOST)
    assert rc == 0
    assert out.splitlines()[0] == f"# {HOST} minus {BEFORE}"
    rows = table(out, 4)
    assert [n for n, _ in rows] == ["ROOT", "forward", "matmul_kernel", "add_kernel", "backward",
                                    "matmul_bwd_kernel", "memcpy DtoH", "old_kernel"]
    v = dict(rows)
    assert v["ROOT"] == ["-2.0000", "+0", "+2048", "-16.67%"]   # 10 ms - 12 ms, of the other's 12 ms
    assert v["matmul_kernel"] == ["-1.0000", "+0", "+0", "-8.33%"]
    assert v["add_kernel"] == ["+0.0000", "+0", "+0", "+0.00%"]
    assert v["memcpy DtoH"] == ["+0.5000", "+1", "+0", "+4.17%"]   # only in this profile
    assert v["old_kernel"] == ["-1.0000", "-1", "+0", "-8.33%"]    # only in the other
    _, out, _ = view(capsys, "-m", "tflop/s", "--diff-profile", BEFORE, HOST)
    # matmul: 1000 TFLOP/s now, 6e12 / 7 ms before
    assert float(values(out, 1)["matmul_kernel"][0]) == pytest.approx(1000 - 6e12 / 7e-3 / 1e12, abs=1e-3)


def test_list(capsys):
    rc, out, _ = view(capsys, "--list", HOST)
    assert rc == 0
    listed = [line.strip().split("  ")[0] for line in out.splitlines()[1:]]
    for name in ["time/s", "time/ms", "time/us", "time/ns", "avg_time/ms", "count", "flop/s", "gflop/s", "tflop/s",
                 "tflop16/s", "gflop32/s", "byte/s", "gbyte/s", "tbyte/s", "util", "tokens", "time (ns)",
                 "flops16", "bytes"]:
        assert name in listed
    assert "tflop8/s" not in listed and "device_id" not in listed and "cycles" not in listed
    rc, out, _ = view(capsys, "-l", INTRA)
    listed = [line.strip().split("  ")[0] for line in out.splitlines()[1:]]
    assert set(listed) == {"time/s", "time/ms", "time/us", "time/ns", "avg_time/s", "avg_time/ms", "avg_time/us",
                           "avg_time/ns", "count", "cycles", "normalized_cycles", "time (ns)"}


def test_raw_and_pc_sampling_metrics(capsys, tmp_path):
    def node(name, kind, metrics, children=()):
        return {"frame": {"name": name, "type": kind}, "metrics": metrics, "children": list(children)}
    line_a = node("kernel.py:12", "line", {"num_samples": 30, "stall_long_scoreboard": 20})
    line_b = node("<unknown>+0x1a0", "line", {"num_samples": 10, "stall_long_scoreboard": 2})
    kernel = node("k", "kernel", {"time (ns)": 1000, "count": 1, "num_samples": 40, "stall_long_scoreboard": 22,
                                  "device_id": 0}, [line_a, line_b])
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
    _, out, _ = view(capsys, "--format", "full", path)
    assert "/home/me/model/train.py:42@forward" in names(out)
    assert "matmul_bwd_kernel [device 1]" in names(out) and "matmul_kernel [device 0]" in names(out)
    _, out, _ = view(capsys, path)  # short is the default
    assert "train.py:42@forward" in names(out) and "/home/me/model/train.py:42@forward" not in names(out)


def test_util_per_device_when_devices_differ(capsys, tmp_path):
    data = host_data()
    data[0]["children"][1]["children"][0]["metrics"]["device_id"] = 1
    data[-1]["devices"]["CUDA"]["1"] = dict(data[-1]["devices"]["CUDA"]["0"], num_sms=66)
    path = write_profile(tmp_path, data)
    _, out, _ = view(capsys, "-m", "util", path)
    v = values(out, 1)
    assert float(v["matmul_bwd_kernel [device 1]"][0]) == pytest.approx(1e15 / (PEAK_FP16 / 2), abs=1e-4)
    assert v["ROOT"] == ["-"]   # kernels on devices with different peaks below it
    assert float(v["forward"][0]) == pytest.approx(7.5e14 / PEAK_FP16, abs=1e-4)


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
    assert "\x1b[31m0.0100000\x1b[0m" in out          # 100% of the root: red
    assert "\x1b[33m0.0020000\x1b[0m" in out          # add_kernel, 20%: yellow
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
    proc = subprocess.run([sys.executable, "-m", "proton.viewer", "-m", "time/ms", HOST], capture_output=True,
                          text=True, env=dict(os.environ), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b[" not in proc.stdout and proc.stdout.splitlines()[1] == "10.0000  ROOT"
    proc = subprocess.run([sys.executable, "-m", "proton.viewer", "missing.hatchet"], capture_output=True, text=True,
                          timeout=120)
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


@pytest.mark.parametrize("data, reason", [
    ({"frame": {"name": "ROOT"}}, "the top level is a JSON dict"),
    ([], "no root nodes"),
    ([{"metrics": {}, "children": []}], "root 0 has no frame name"),
    ([{"frame": {"name": "ROOT"}, "metrics": {"time (ns)": "10"}, "children": []}],
     "node 'ROOT': metric 'time (ns)' is not a number"),
    ([{"frame": {"name": "ROOT"}, "metrics": {}, "children": [{"frame": {}}]}], "a child of node 'ROOT' has no"),
    ([{"frame": {"name": "ROOT"}, "metrics": {}, "children": {}}], "'children' is not a list"),
    ([{"frame": {"name": "ROOT"}, "metrics": {}, "children": []}, {"gpus": {}}], "no 'devices' object"),
    ([{"frame": {"name": "k"}, "metrics": {"device_id": "gpu0"}, "children": []}],
     "node 'k': metric 'device_id' is not a number"),
])
def test_error_wrong_structure(capsys, tmp_path, data, reason):
    path = write_profile(tmp_path, data)
    assert_error(capsys, [path], f"{path}: not a profile tree: ", reason)


def test_error_unknown_metric_lists_valid_ones(capsys):
    err = assert_error(capsys, ["-m", "time/ms,latency", HOST], "unknown metric 'latency'", HOST)
    assert "time/ms" in err and "tflop16/s" in err and "util" in err and "tokens" in err


def test_error_metric_needs_missing_field(capsys, tmp_path):
    assert_error(capsys, ["-m", "flop/s", INTRA], "metric 'flop/s' needs a 'flops<N>' metric", INTRA)
    assert_error(capsys, ["-m", "tflop8/s", HOST], "metric 'tflop8/s' needs 'flops8'", HOST)
    assert_error(capsys, ["-m", "gbyte/s", INTRA], "needs 'bytes'")
    data = [{"frame": {"name": "k", "type": "function"}, "metrics": {"cycles": 5}, "children": []}]
    assert_error(capsys, ["-m", "time/us", write_profile(tmp_path, data)], "needs 'time (ns)'")


def test_error_util_without_device_info(capsys, tmp_path):
    path = write_profile(tmp_path, host_data()[:-1])
    assert_error(capsys, ["-m", "util", path], "'util' is unavailable", "no device info")
    data = host_data()
    data[-1] = {"devices": {"HIP": {"0": dict(data[-1]["devices"]["CUDA"]["0"], arch="gfx942")}}}
    path = write_profile(tmp_path, data)
    assert_error(capsys, ["-m", "util", path], "'util' is unavailable", "known only for sm90", "'gfx942'")
    # without util the same file views fine
    assert view(capsys, "-m", "tflop/s", path)[0] == 0


def test_error_bad_options(capsys):
    assert_error(capsys, ["--include", "(", HOST], "--include: invalid regular expression '('")
    assert_error(capsys, ["--depth", "-1", HOST], "--depth must be >= 0")
    assert_error(capsys, ["--diff-profile", "/nonexistent/other.hatchet", HOST],
                 "/nonexistent/other.hatchet: no such file")
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
    assert set(by_name) == {"ROOT", "forward", "matmul_kernel", "add_kernel", "backward", "matmul_bwd_kernel",
                            "memcpy DtoH"}
    assert by_name["ROOT"]["time (ns)"] == 10000000 and by_name["matmul_kernel"]["flops16"] == 6e12
    assert by_name["add_kernel"]["count"] == 2
    gf = hatchet.GraphFrame.from_literal(json.loads(Path(INTRA).read_text()))
    assert len(gf.graph.roots) == 2


def test_short_cxx_kernel_names():
    from proton.viewer import short_cxx_name
    assert short_cxx_name("void at::native::vectorized_elementwise_kernel<4, at::native::AbsFunctor<float>, "
                          "std::array<char*, 2ul> >(int, at::native::AbsFunctor<float>, std::array<char*, 2ul>)") \
        == "at::native::vectorized_elementwise_kernel"
    assert short_cxx_name("void at::native::(anonymous namespace)::grid_kernel<float, 4>(long)") \
        == "at::native::anon::grid_kernel"
    assert short_cxx_name("matmul_2048x2048x2048") == "matmul_2048x2048x2048"
    assert short_cxx_name("memcpy DtoH") == "memcpy DtoH"
