"""The shortcuts for large files against the line-by-line code they replace,
on seeded random inputs: the rewriter's for runs of loads
(ttgir_rewriter._rewrite_load_runs, taken by the default strategy where 8 or
more plain tt.load lines follow each other: the same text, scopes, list of
scopes and errors) and --dry-run's diff of inserted lines (the same diff)."""

import random

import pytest

from proton.commands import insert_proton_records as rewriter_command
from proton.compiling import ttgir_rewriter
from proton.compiling.ttgir_rewriter import RewriteError, rewrite_text

# Lines that a run of loads is made of, and lines that look like them but end
# a run or are read otherwise (no result, results that need _OP_RE, another op
# with the same prefix, braces, a generic op, other white space).
LOADS = [
    "%v{n} = tt.load %x : !tt.ptr<f32>",
    "%{n} = tt.load %x, %m : tensor<4x!tt.ptr<f32>, #blocked> loc(#loc3)",
    "%a_{n} = tt.load %p",
    "%v{n} =  tt.load %x",
    "%v{n} = tt.load",
]
LOOKALIKES = [
    "tt.load %x",
    "%a{n}, %b{n} = tt.load %x",
    "%r{n}:2 = tt.load %x",
    "%v{n} = tt.loadx %x",
    "%v{n} = tt.load.y %x",
    "%v{n} = tt.load %x {{cache = 1 : i32}}",
    '%v{n} = "tt.load"(%x) : (!tt.ptr<f32>) -> f32',
    "%v{n}  = tt.load %x",
    "%v{n}\t= tt.load %x",
    "%\u00e9{n} = tt.load %x",
    "%v{n} = tt.load %x\r",
    "%v{n} = tt.load %x \u2028 %y",
    "%v{n} = tt.load %x ^bb",
]
OTHERS = [
    "%s{n} = arith.addf %a, %b : f32",
    "tt.store %p, %v : !tt.ptr<f32>",
    "",
    "%c{n} = arith.constant 0 : i32",
]


def _block(rng: random.Random, depth: int, indent: str, counter: list) -> list[str]:
    """The lines of a block: runs of loads (mostly long), other ops, loops and
    reduce regions (where loads are not wrapped), now and then a look-alike or
    a terminator in the middle (an error)."""
    lines = []
    for _ in range(rng.randint(1, 6)):
        counter[0] += 1
        n = counter[0]
        kind = rng.random()
        if kind < 0.45:
            shape = rng.choice(LOADS[:3]) if rng.random() < 0.8 else rng.choice(LOADS)
            for k in range(rng.choice([1, 3, 7, 8, 9, 12, 20, 40])):
                line = shape if rng.random() < 0.95 else rng.choice(LOADS + LOOKALIKES)
                lines.append(indent + line.format(n=f"{n}_{k}"))
        elif kind < 0.55:
            lines.append(indent + rng.choice(LOOKALIKES).format(n=n))
        elif kind < 0.75:
            lines.append(indent + rng.choice(OTHERS).format(n=n))
        elif kind < 0.88 and depth < 2:
            lines.append(f"{indent}%r{n} = scf.for %i = %a to %b step %c iter_args(%x = %y) -> (f32) : i32 {{")
            lines += _block(rng, depth + 1, indent + "  ", counter)
            if rng.random() < 0.8:
                lines.append(f"{indent}  scf.yield %x : f32")
            lines.append(f"{indent}}} loc(#loc{n})")
        elif kind < 0.97 and depth < 2:
            lines.append(f'{indent}%r{n} = "tt.reduce"(%x) ({{')
            lines.append(f"{indent}^bb0(%a: f32, %b: f32):")
            lines += _block(rng, depth + 1, indent + "  ", counter)
            lines.append(f"{indent}  tt.reduce.return %a : f32")
            lines.append(f"{indent}}}) : (f32) -> f32")
        else:
            lines.append(indent + rng.choice(["cf.br ^bb1", "^bb1:", "tt.return"]))
    return lines


def _text(rng: random.Random) -> str:
    counter = [0]
    lines = ["#loc = loc(unknown)", "module {"]
    for f in range(rng.randint(1, 3)):
        visibility = "public" if rng.random() < 0.85 else "private"
        lines.append(f"  tt.func {visibility} @k{f}(%x: !tt.ptr<f32>) {{")
        lines += _block(rng, 0, "    ", counter)
        if rng.random() < 0.9:
            lines.append("    tt.return")
        lines.append("  }")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    return text if rng.random() < 0.97 else text[:-1]


def _rewrite(text: str, line_by_line: bool, monkeypatch) -> tuple:
    """(text, list of scopes, every scope's fields) or ('error', message)."""
    with monkeypatch.context() as m:
        if line_by_line:
            m.setattr(ttgir_rewriter, "_rewrite_load_runs", lambda text, path: None)
        try:
            res = rewrite_text(text, path="k.ttgir")
        except RewriteError as e:
            return "error", str(e)
    fields = [
        (s.name, s.start_gap, s.end_gap, s.origin, s.more_end_gaps, s.out_start, s.out_end)
        for s in (res.scopes[k] for k in range(len(res.scopes)))
    ]
    return res.text, res.scopes.columns(), sorted(fields, key=lambda f: f[5])


def test_runs_of_loads_rewrite_as_line_by_line(monkeypatch):
    taken = []
    shortcut = ttgir_rewriter._rewrite_load_runs
    monkeypatch.setattr(ttgir_rewriter, "_rewrite_load_runs", lambda *args: taken.append(shortcut(*args)) or taken[-1])
    rng = random.Random(2026)
    for _ in range(500):
        text = _text(rng)
        expected = _rewrite(text, True, monkeypatch)
        assert _rewrite(text, False, monkeypatch) == expected, text
    used = sum(result is not None for result in taken)
    print(f"shortcut taken on {used} texts, refused on {len(taken) - used}")
    assert used > 120 and len(taken) - used > 50  # taken, and refused (no run, or an error to report)


def test_list_of_scopes_reads_like_a_list():
    body = "".join(f"    %v{k} = tt.load %x\n" for k in range(10))
    res = rewrite_text(f"module {{\n  tt.func public @k() {{\n{body}    tt.return\n  }}\n}}\n")
    scopes = res.scopes
    assert len(scopes) == 11 and [s.name for s in scopes[:2]] == ["kernel", "load_v0"]
    assert (scopes[-1].name, scopes[-1].start_gap, scopes[-1].out_start, scopes[-1].out_end) == ("load_v9", 11, 31, 33)
    assert scopes.columns()[1] == [s.out_start for s in scopes]
    with pytest.raises(IndexError):
        scopes[11]


def test_clean_rewrite_is_not_read_again(monkeypatch):
    """Records inserted into a text without records of its own are checked
    from what was inserted: the rewritten text is not parsed a second time."""

    def verify_records(*args):
        raise AssertionError("the rewritten text was read again")

    monkeypatch.setattr(ttgir_rewriter, "verify_records", verify_records)
    for count in (2, 20):  # line by line, and with a run of loads
        body = (
            "".join(f"    %v{k} = tt.load %x\n" for k in range(count))
            + "    %s = arith.addf %v0, %v1\n    tt.store %p, %s\n"
        )
        assert (
            len(rewrite_text(f"module {{\n  tt.func public @k() {{\n{body}    tt.return\n  }}\n}}\n").scopes)
            == count + 2
        )


def test_diff_of_insertions_as_line_by_line(monkeypatch):
    """--dry-run's diff where records were only inserted (found by byte
    searches) against its line-by-line diff: runs of records 0 to 8 lines
    apart (hunks split at 7), at either end, around a last line without a
    newline (the line-by-line diff then takes over)."""
    rng = random.Random(14)
    for case in range(300):
        a, b = [], []
        for i in range(rng.randint(0, 60)):
            for k in range(rng.choice([0, 0, 0, 1, 2, 5]) if rng.random() < 0.5 else 0):
                b.append(f'  proton.record start "s{i}_{k}"\n')
            line = f"  %{i} = arith.addi\n" if rng.random() < 0.8 else "  }\n"
            a.append(line)
            b.append(line)
            if rng.random() < 0.1:  # a longer stretch without records
                filler = [f"  %f{i}_{k} = arith.addi\n" for k in range(rng.randint(4, 9))]
                a += filler
                b += filler
        if a and case % 9 == 0:
            a[-1] = b[-1] = a[-1].rstrip("\n")
        if rng.random() < 0.3:
            if a and not a[-1].endswith("\n"):
                b[-1] += "\n"  # as the rewriter ends it before records after it
            b.append('  proton.record end "last"\n')
        got = "".join(rewriter_command.unified_diff(a, b, "x", "x (rewritten)"))
        with monkeypatch.context() as m:
            m.setattr(rewriter_command, "_inserted_lines", lambda a, b: None)
            assert got == "".join(rewriter_command.unified_diff(a, b, "x", "x (rewritten)")), (a, b)
