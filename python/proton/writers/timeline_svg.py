"""A picture of one kernel launch from an intra-kernel Chrome trace, as SVG
(no dependency; opens in any browser, pastes into reviews):

    proton-view --timeline launch.svg run.chrome_trace [--launch "matmul #0"] [--ctas 0-3] [--warps 0,4]

One row per warp, grouped by CTA (labelled with its SM); one bar per scope
instance, coloured by scope, nested scopes drawn inside their parents;
a time axis in ns from the launch's first warp entry, with the cycles the
launch's measured clock gives. Warp-specialized kernels keep their partition
labels ("warp 6 (worker 0)"). Async events (`pl` events) that start and end
in one warp are bars like scopes (class "event"); one that starts in one warp
and ends in another is an arrow from its start to its end. At most
`max_rows` rows are drawn: beyond that, every k-th CTA is shown, and the
picture says how many of how many.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from xml.sax.saxutils import escape

#: Colours of scopes, in order of first appearance (colour-blind friendly).
PALETTE = (
    "#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb", "#ee8866",
    "#77aadd", "#99ddff", "#44bb99", "#eedd88", "#ffaabb", "#aaaa00",
)  # fmt: skip
MAX_ROWS = 96
_PROCESS = re.compile(r"^(?P<launch>.+?) Core(?P<sm>\d+) CTA(?P<cta>\d+)$")
_WARP = re.compile(r"^\S+ (?P<warp>\d+)")


#: What XML 1.0 allows in a document: names with anything else are shown escaped.
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value) -> str:
    """`value` as text that XML (and UTF-8) can hold: characters XML
    forbids (control characters, lone surrogates) as their escapes."""
    return _NOT_XML.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(value))


def _xml(value) -> str:
    return escape(_text(value))


class TimelineError(Exception):
    """A trace or a selection that gives no picture; the message says why."""


@dataclass
class Row:
    cta: int
    sm: int
    label: str  # the warp's track name
    warp: int
    bars: list = field(default_factory=list)  # (start_ns, end_ns, name, depth, kind)


def launches(events: list) -> dict[str, list]:
    """The X events of each launch ("kernel #n"), from the trace's pid names."""
    out: dict[str, list] = {}
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "X" or not isinstance(e.get("pid"), str):
            continue
        match = _PROCESS.match(e["pid"])
        if match and isinstance(e.get("tid"), str) and _WARP.match(e["tid"]):
            out.setdefault(match["launch"], []).append((e, match))
    return out


class Ranges:
    """ "0-3,7": which ids a --ctas/--warps option keeps, held as ranges
    (a range of 10**13 ids costs what "0-3" does)."""

    def __init__(self, text: str, what: str):
        self.spans = []
        for part in text.split(","):
            lo, _, hi = part.strip().partition("-")
            if not _decimal(lo) or (hi and not _decimal(hi)):
                raise TimelineError(f"--{what} {text!r}: expected numbers and ranges such as 0-3,7")
            self.spans.append((int(lo), int(hi or lo)))

    def __contains__(self, n: int) -> bool:
        return any(lo <= n <= hi for lo, hi in self.spans)


def _decimal(text: str) -> bool:
    return text.isascii() and text.isdigit() and len(text) <= 30


def _ranges(text: str | None, what: str) -> Ranges | None:
    """None keeps all."""
    return None if text is None else Ranges(text, what)


def build_rows(events: list, ctas: set | None, warps: set | None) -> tuple[list[Row], float, list]:
    """Rows of the launch's warps, with nesting depths; cycles per ns; and the
    cross-warp async events as (name, (cta, warp, ns) start, (cta, warp, ns) end)."""
    by_row: dict[tuple, Row] = {}
    cycles = ns = 0.0
    ends: dict = {}  # bind_id -> {"out"/"in": (cta, warp, ns), "name": ...}
    for e, match in events:
        cta, warp = int(match["cta"]), int(_WARP.match(e["tid"])["warp"])
        if (ctas is not None and cta not in ctas) or (warps is not None and warp not in warps):
            continue
        try:
            start, dur = float(e["ts"]) * 1000.0, float(e["dur"]) * 1000.0
        except (KeyError, TypeError, ValueError, OverflowError):
            raise TimelineError(f"event {_text(e.get('name'))!r} of {_text(e['pid'])}: no numeric ts and dur") from None
        if not (math.isfinite(start) and math.isfinite(dur) and math.isfinite(start + dur)):
            raise TimelineError(
                f"event {_text(e.get('name'))!r} of {_text(e['pid'])}: ts {e['ts']!r} and dur {e['dur']!r} "
                "are not finite times"
            )
        row = by_row.setdefault((cta, warp), Row(cta, int(match["sm"]), e["tid"], warp))
        if e.get("cat") == "flow" and "bind_id" in e:  # one end of a cross-warp event
            end = ends.setdefault(e["bind_id"], {"name": str(e.get("name", "?"))})
            end["out" if e.get("flow_out") else "in"] = (cta, warp, start)
            continue
        kind = "event" if e.get("cat") == "async" else "scope"
        row.bars.append([start, start + dur, str(e.get("name", "?")), 0, kind])
        c = (e.get("args") or {}).get("cycles")
        if isinstance(c, (int, float)) and dur > 0:
            cycles, ns = cycles + c, ns + dur
    rows = [by_row[k] for k in sorted(by_row)]
    for row in rows:  # depth: how many bars still open when this one starts
        row.bars.sort(key=lambda b: (b[0], -b[1]))
        open_ends: list[float] = []
        for bar in row.bars:
            while open_ends and open_ends[-1] <= bar[0]:
                open_ends.pop()
            bar[3] = len(open_ends)
            open_ends.append(bar[1])
    arrows = [(end["name"], end["out"], end["in"]) for end in ends.values() if "out" in end and "in" in end]
    return rows, (cycles / ns if ns else 0.0), arrows


def _start(event: dict) -> float:
    """An event's ts for choosing the first launch (not a number: last)."""
    try:
        ts = float(event.get("ts"))
    except (TypeError, ValueError, OverflowError):
        return math.inf
    return ts if math.isfinite(ts) else math.inf


def render(trace: dict, launch: str | None = None, ctas: str | None = None, warps: str | None = None,
           max_rows: int = MAX_ROWS, width: int = 1200) -> str:  # fmt: skip
    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(events, list):
        raise TimelineError("not a Chrome trace (no traceEvents list)")
    found = launches(events)
    if not found:
        raise TimelineError("no intra-kernel scope events (a trace written by an instrumentation session)")
    if launch is None:
        launch = min(found, key=lambda k: min(_start(e) for e, _ in found[k]))
    if launch not in found:
        raise TimelineError(f"no launch {launch!r}; the trace has: {', '.join(sorted(found))}")
    rows, ghz, arrows = build_rows(found[launch], _ranges(ctas, "ctas"), _ranges(warps, "warps"))
    if not rows:
        raise TimelineError(f"launch {launch!r} has no events in the CTAs and warps chosen")
    total = len(rows)
    note = ""
    if total > max_rows:  # every k-th CTA, whole
        cta_ids = sorted({r.cta for r in rows})
        per_cta = max(1, total // len(cta_ids))
        step = -(-len(cta_ids) * per_cta // max_rows)
        keep = set(cta_ids[::step])
        rows = [r for r in rows if r.cta in keep]
        note = f"showing {len(rows)} of {total} warps: every {step}th CTA ({len(keep)} of {len(cta_ids)})"
    return _svg(launch, rows, ghz, note, width, arrows)


def _svg(launch: str, rows: list[Row], ghz: float, note: str, width: int, arrows: list = ()) -> str:
    times = [t for r in rows for b in r.bars for t in b[:2]] + [end[2] for a in arrows for end in a[1:]]
    t0, t1 = min(times), max(times)
    span = max(t1 - t0, 1e-9)
    left, right, top, row_h, gap = 190, 20, 56, 14, 6
    plot_w = width - left - right
    names = list(dict.fromkeys(b[2] for r in rows for b in r.bars))
    colour = {n: PALETTE[i % len(PALETTE)] for i, n in enumerate(names)}
    y, placed, groups = top, [], []
    for i, row in enumerate(rows):
        if i == 0 or row.cta != rows[i - 1].cta:
            if i:
                y += gap
            groups.append((y, f"CTA {row.cta} (SM {row.sm})"))
            y += row_h
        placed.append((y, row))
        y += row_h
    legend_y = y + 40
    height = legend_y + 20 * (1 + (len(names) - 1) // 6) + 10
    x = lambda t: left + (t - t0) / span * plot_w  # noqa: E731
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" '
        'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#222"/></marker></defs>',
        f'<rect width="{width}" height="{height}" fill="white"/>',
        f'<text x="10" y="18" font-size="14" font-weight="bold">{_xml(launch)}</text>',
        f'<text x="10" y="36" fill="#555">{len(rows)} warps, {span:.0f} ns'
        + (f" ({span * ghz:.0f} cycles at {ghz:.2f} GHz)" if ghz else "")
        + (f"; {_xml(note)}" if note else "")
        + "</text>",
    ]
    for gy, label in groups:
        out.append(f'<text class="cta" x="6" y="{gy + 10}" font-weight="bold">{_xml(label)}</text>')
    for ry, row in placed:
        out.append(f'<text class="warp" x="16" y="{ry + 10}">{_xml(row.label)}</text>')
        line_y = ry + row_h - 1
        out.append(f'<line x1="{left}" y1="{line_y}" x2="{left + plot_w}" y2="{line_y}" stroke="#eee"/>')
        for start, end, name, depth, kind in row.bars:
            inset = min(depth, 4) * 2
            w = max(x(end) - x(start), 0.5)
            out.append(
                f'<rect class="{kind}" x="{x(start):.2f}" y="{ry + inset}" width="{w:.2f}" '
                f'height="{row_h - 2 - 2 * inset if row_h - 2 - 2 * inset > 2 else 2}" fill="{colour[name]}">'
                f"<title>{_xml(name)}: {end - start:.0f} ns</title></rect>"
            )
    row_y = {(row.cta, row.warp): ry + row_h / 2 - 1 for ry, row in placed}
    for name, (c0, w0, s), (c1, w1, e) in arrows:  # drawn over the bars; only between rows shown
        if (c0, w0) in row_y and (c1, w1) in row_y:
            out.append(
                f'<line class="flow" x1="{x(s):.2f}" y1="{row_y[(c0, w0)]:.1f}" x2="{x(e):.2f}" '
                f'y2="{row_y[(c1, w1)]:.1f}" stroke="#222" stroke-width="1" marker-end="url(#arrow)">'
                f"<title>{_xml(name)}: warp {w0} -> warp {w1}, {e - s:.0f} ns</title></line>"
            )
    axis_y = y + 4
    out.append(f'<line x1="{left}" y1="{axis_y}" x2="{left + plot_w}" y2="{axis_y}" stroke="#333"/>')
    for k in range(6):
        t = span * k / 5
        tx = left + plot_w * k / 5
        label = f"{t:.0f} ns" + (f" / {t * ghz:.0f} cyc" if ghz else "")
        anchor = "start" if k == 0 else "end" if k == 5 else "middle"
        out.append(f'<line x1="{tx}" y1="{axis_y}" x2="{tx}" y2="{axis_y + 4}" stroke="#333"/>')
        out.append(f'<text class="tick" x="{tx}" y="{axis_y + 16}" text-anchor="{anchor}">{label}</text>')
    for i, name in enumerate(names):
        lx, ly = 10 + (i % 6) * 195, legend_y + 20 * (i // 6)
        out.append(f'<rect x="{lx}" y="{ly - 9}" width="12" height="10" fill="{colour[name]}"/>')
        out.append(f'<text class="legend" x="{lx + 16}" y="{ly}">{_xml(name)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def write(trace_path: str, svg_path: str, **options) -> str:
    """Reads the trace, writes the picture (proton.writers.files' rules: "-" is
    standard output); returns the SVG path. TimelineError for the trace,
    OSError for the picture's destination."""
    from .files import open_input, output

    try:
        with open_input(trace_path, binary=False) as f:
            trace = json.load(f)
    except OSError as e:
        raise TimelineError(f"cannot read: {e.strerror or e}") from None
    except (ValueError, RecursionError) as e:  # UnicodeDecodeError is a ValueError
        raise TimelineError(f"not JSON ({e})") from None
    text = render(trace, **options)
    with output(svg_path, stdout=True) as target:
        with open(target, "w", encoding="utf-8") as f:
            f.write(text)
    return svg_path
