"""The floating-point arithmetic of a PTX module, comparable between builds."""

import re

_FLOAT_OP = re.compile(r"^(fma|mul|add|sub|div|rcp|sqrt|ex2|lg2|max|min|neg|abs|cvt)(\.[\w]+)*\.(f32|f16|bf16|f64)\b")


def float_ops(ptx: str) -> list[str]:
    """The floating-point instructions in order, each register renamed by its
    first appearance among them: two builds whose arithmetic pairs the same
    operands the same way (which product an FMA fuses, for one) give the
    same list, whatever else (records, register numbers) they hold."""
    names: dict[str, str] = {}
    ops = []
    for line in ptx.splitlines():
        line = line.strip()
        if not _FLOAT_OP.match(line):
            continue
        opcode, _, operands = line.partition(" ")
        registers = [names.setdefault(r, f"v{len(names)}") for r in re.findall(r"%\w+", operands)]
        ops.append(f"{opcode} {','.join(registers)}")
    return ops
