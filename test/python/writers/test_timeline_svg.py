"""proton-view --timeline: a picture of one launch from an intra-kernel
Chrome trace. What the SVG shows (bars, rows, labels, the sampling note) is
read back from the SVG itself; where Debian's Chromium is installed, it also
renders the picture headless and reports the same bars."""

import shutil
import subprocess
import xml.etree.ElementTree as ElementTree

import pytest

from proton.writers import timeline_svg
from proton import viewer
from proton.recording import decode
from proton.writers import chrome_trace

from test_decode import make

NS = {"svg": "http://www.w3.org/2000/svg"}


def trace_file(tmp_path, ctas=3, segments=4, name="t.chrome_trace"):
    launches = [decode.decode(*make(ctas=ctas, segments=segments), ctas, kernel="vector_add", launch=0)]
    path = tmp_path / name
    chrome_trace.write(str(path), launches, chrome_trace.session_origin(launches))
    return path


def shown(svg_path):
    root = ElementTree.parse(svg_path).getroot()
    texts = lambda cls: [t.text for t in root.iter("{http://www.w3.org/2000/svg}text") if t.get("class") == cls]  # noqa: E731
    bars = [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("class") == "scope"]
    heading = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text")][:2]
    return bars, texts("warp"), texts("cta"), texts("legend"), heading


def test_one_launch_a_row_per_warp_a_bar_per_scope(tmp_path, capsys):
    trace = trace_file(tmp_path)
    out = tmp_path / "launch.svg"
    assert viewer.main(["--timeline", str(out), str(trace)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    bars, warps, ctas, legend, heading = shown(out)
    assert len(bars) == 3 * 4 * 3  # every scope instance of the trace
    assert warps == [f"warp {w}" for w in range(4)] * 3
    assert ctas == ["CTA 0 (SM 0)", "CTA 1 (SM 1)", "CTA 2 (SM 2)"]
    assert legend == ["kernel", "load", "store"] and heading[0] == "vector_add #0"
    assert "12 warps" in heading[1] and "cycles at" in heading[1]
    # Nested scopes are drawn inside their parent (an inset by depth).
    heights = sorted({float(b.get("height")) for b in bars})
    assert len(heights) == 2


def test_a_thousand_warps_are_sampled_and_the_picture_says_so(tmp_path):
    trace = trace_file(tmp_path, ctas=250)
    out = tmp_path / "big.svg"
    assert viewer.main(["--timeline", str(out), str(trace)]) == 0
    bars, warps, ctas, _legend, heading = shown(out)
    assert len(warps) <= timeline_svg.MAX_ROWS and len(bars) == 3 * len(warps)
    assert f"showing {len(warps)} of 1000 warps: every" in heading[1]


def test_ctas_and_warps_can_be_chosen(tmp_path):
    out = tmp_path / "some.svg"
    assert viewer.main(["--timeline", str(out), "--ctas", "1-2", "--warps", "0,3", str(trace_file(tmp_path))]) == 0
    bars, warps, ctas, _legend, _heading = shown(out)
    assert ctas == ["CTA 1 (SM 1)", "CTA 2 (SM 2)"] and warps == ["warp 0", "warp 3"] * 2 and len(bars) == 12


@pytest.mark.parametrize(
    "argv, problem",
    [
        (["--launch", "matmul #3"], "no launch 'matmul #3'; the trace has: vector_add #0"),
        (["--ctas", "x"], "expected numbers and ranges"),
        (["--ctas", "9"], "has no events in the CTAs and warps chosen"),
    ],
)
def test_bad_choices_are_one_line_errors(tmp_path, argv, problem, capsys):
    out = tmp_path / "x.svg"
    assert viewer.main(["--timeline", str(out), *argv, str(trace_file(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert problem in err and len(err.strip().splitlines()) == 1 and not out.exists()


def test_a_host_trace_has_no_launch_to_draw(tmp_path, capsys):
    host = tmp_path / "host.chrome_trace"
    host.write_text('{"traceEvents": [{"ph": "X", "name": "k", "pid": "GPU 0", "tid": "stream 7", "ts": 0, "dur": 1}]}')
    assert viewer.main(["--timeline", str(tmp_path / "h.svg"), str(host)]) == 2
    assert "no intra-kernel scope events" in capsys.readouterr().err


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)")
def test_chromium_renders_the_picture(tmp_path):
    trace = trace_file(tmp_path)
    svg = tmp_path / "launch.svg"
    assert viewer.main(["--timeline", str(svg), str(trace)]) == 0
    common = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    dom = subprocess.run([*common, "--dump-dom", svg.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert dom.stdout.count('class="scope"') == 36 and dom.stdout.count('class="warp"') == 12
    png = tmp_path / "launch.png"
    shot = subprocess.run(
        [*common, f"--screenshot={png}", "--window-size=1200,500", svg.as_uri()], capture_output=True, timeout=120
    )
    assert shot.returncode == 0 and png.stat().st_size > 5000


def test_async_events_are_bars_in_one_warp_and_arrows_across_warps(tmp_path):
    # The Chrome layout of async events: a same-warp event is an X event of
    # cat "async"; a cross-warp one is two zero-length "flow" events sharing
    # a bind_id (flow_out where it started, flow_in where it ended).
    pid = "k #0 Core5 CTA0"
    events = [
        {"ph": "X", "cat": "scope", "name": "mainloop", "pid": pid, "tid": "warp 0", "ts": 0.0, "dur": 4.0},
        {"ph": "X", "cat": "async", "name": "tma", "pid": pid, "tid": "warp 0", "ts": 0.5, "dur": 1.0},
        {"ph": "X", "cat": "flow", "name": "full", "pid": pid, "tid": "warp 0", "ts": 1.0, "dur": 0, "bind_id": 7,
         "flow_out": True},
        {"ph": "X", "cat": "flow", "name": "full", "pid": pid, "tid": "warp 4", "ts": 3.0, "dur": 0, "bind_id": 7,
         "flow_in": True},
        {"ph": "X", "cat": "flow", "name": "lonely", "pid": pid, "tid": "warp 4", "ts": 3.5, "dur": 0, "bind_id": 8,
         "flow_out": True},
    ]  # fmt: skip
    svg = timeline_svg.render({"traceEvents": events})
    root = ElementTree.fromstring(svg)
    rects = lambda cls: [r for r in root.iter("{http://www.w3.org/2000/svg}rect") if r.get("class") == cls]  # noqa: E731
    lines = [e for e in root.iter("{http://www.w3.org/2000/svg}line") if e.get("class") == "flow"]
    assert len(rects("scope")) == 1 and len(rects("event")) == 1
    assert len(lines) == 1  # the unpaired end draws nothing
    (arrow,) = lines
    assert float(arrow.get("x2")) > float(arrow.get("x1")) and float(arrow.get("y2")) > float(arrow.get("y1"))
    assert (
        arrow.get("marker-end") == "url(#arrow)"
        and "warp 0 -> warp 4" in arrow.find("{http://www.w3.org/2000/svg}title").text
    )
    # Only the rows of the chosen warps: an arrow needs both ends shown.
    assert not [e for e in ElementTree.fromstring(timeline_svg.render({"traceEvents": events}, warps="0")).iter(
        "{http://www.w3.org/2000/svg}line") if e.get("class") == "flow"]  # fmt: skip
