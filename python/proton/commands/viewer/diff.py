"""proton-view --diff-profile: one profile's rows minus another's, node by
node, matched by their path of names."""

from __future__ import annotations

from .parsing import _is_number
from .printing import Row


def diff_rows(this: list, other: list, n: int) -> list[Row]:
    """this minus other, node by node (matched by path of names); a node on one side only gets None values."""

    def row(a, b):
        if a is not None and b is not None:
            values = [x - y if _is_number(x) and _is_number(y) else None for x, y in zip(a.values, b.values)]
            name = a.name
        else:
            values = [None] * n
            name = (a or b).name + (" (only in this profile)" if b is None else " (only in the other profile)")
        node = a or b
        children = [row(x, y) for x, y in _pair(a.children if a else [], b.children if b else [])]
        return Row(name, node.raw, node.kind, values, children)

    return [row(a, b) for a, b in _pair(this, other)]


def _pair(left: list, right: list) -> list[tuple]:
    """Rows matched by name (the k-th of a name with the k-th), this side's order first."""

    def keyed(rows):
        seen: dict = {}
        out = {}
        for r in rows:
            out[(r.raw, seen.get(r.raw, 0))] = r
            seen[r.raw] = seen.get(r.raw, 0) + 1
        return out

    a, b = keyed(left), keyed(right)
    return [(a[k], b.get(k)) for k in a] + [(None, b[k]) for k in b if k not in a]
