"""The package's structure, read from its sources (nothing is imported): no
import cycle between its modules, imports that run down the layers only,
import suite_paths
and a root that holds only what users import.

Every import statement counts, those inside functions and `if TYPE_CHECKING:`
too: an import deferred to run time is still a dependency. `from P import N`
depends on P.N when that is a module, else on P. The extension modules
(proton._C, proton._host) import nothing of the package. A folder without
__init__.py (commands/dump_startup, put on PYTHONPATH by proton-dump-ttgir)
is no part of the package."""

from __future__ import annotations

import ast
from pathlib import Path

import suite_paths

PACKAGE = suite_paths.REPO / "python" / "proton"
EXTENSIONS = {"proton._C", "proton._host"}

#: The rooms, bottom first. A module imports modules of its own room or of
#: rooms below it; rooms on one line import neither each other nor anything
#: above. At the bottom the compiled extensions (proton._C, proton._host), at
#: the top the entrance (the root's modules, proton.hooks and proton.tasks).
LAYERS = [
    {"extensions"},
    {"contract"},
    {"writers", "device"},
    {"compiling"},
    {"session"},
    {"host", "recording"},
    {"profiling"},
    {"commands"},
    {"entrance"},
]
#: The modules at the package's root: what users import (`import proton`,
#: proton.language, the modules Triton's Proton has that scripts import by
#: name, and proton.gpu of the examples). Everything else lives in a room.
ROOT_MODULES = {
    "__init__",
    "__main__",
    "_rocm",
    "context",
    "data",
    "gpu",
    "language",
    "metric",
    "mode",
    "profile",
    "proton",
    "specs",
    "state",
    "viewer",
}
#: Packages users import, part of the entrance.
USER_PACKAGES = {"hooks", "tasks"}


def modules() -> dict[str, tuple[Path, bool]]:
    """Module name -> (file, is a package), for every module of the package."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if not _in_package(path.parent):
            continue
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts = parts[:-1]
        found[".".join(parts)] = (path, is_package)
    return found


def _in_package(folder: Path) -> bool:
    """Whether `folder` and every folder up to the package's are packages."""
    while (folder / "__init__.py").exists():
        if folder == PACKAGE:
            return True
        folder = folder.parent
    return False


def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of the package it imports."""
    found = modules()
    known = set(found) | EXTENSIONS

    def owner(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, (path, is_package) in found.items():
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = name.split(".") if is_package else name.split(".")[:-1]
                    base = base[: len(base) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                targets = [
                    f"{source}.{alias.name}" if f"{source}.{alias.name}" in known else source for alias in node.names
                ]
            else:
                continue
            for target in targets:
                if target.split(".")[0] == "proton" and owner(target) not in (None, name):
                    imported.add(owner(target))
        graph[name] = imported
    for extension in EXTENSIONS:
        graph[extension] = set()
    return graph


def room(module: str) -> str:
    """The room a module lives in ("entrance" for the root's modules and the
    user packages)."""
    if module in EXTENSIONS:
        return "extensions"
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in USER_PACKAGES or parts[1] in ROOT_MODULES:
        return "entrance"
    return parts[1]


LAYER_OF = {name: number for number, rooms in enumerate(LAYERS) for name in rooms}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan),
    each as one cycle through it, found by a walk."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(start: str) -> None:
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(_cycle_in(graph, set(component)))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _cycle_in(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A path a -> ... -> a within a strongly connected component."""
    start = min(component)
    path, seen = [start], {start}
    while True:
        following = sorted(graph[path[-1]] & component)
        if start in following and len(path) > 1:
            return path + [start]
        step = next((m for m in following if m not in seen), following[0])
        if step in seen:
            return path[path.index(step) :] + [step]
        path.append(step)
        seen.add(step)


def test_graph_is_read():
    """The graph holds the package's modules and known edges (a guard against
    a builder that silently finds nothing)."""
    graph = import_graph()
    assert "proton.contract.events" in graph["proton.writers.chrome_trace"]
    assert "proton.contract.errors" in graph["proton.writers.files"]  # imported inside a function
    assert "proton._C" in graph["proton.contract.compiler_exports"]  # `from .. import _C`
    assert "proton.commands.dump_startup.sitecustomize" not in graph


def test_no_import_cycle():
    found = cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(cycle) for cycle in found)


def test_imports_run_down_the_layers():
    """No module imports a room above its own, or a room beside it."""
    wrong = []
    for module, imported in import_graph().items():
        for target in imported:
            here, there = room(module), room(target)
            if here != there and LAYER_OF.get(there, -1) >= LAYER_OF.get(here, len(LAYERS)):
                wrong.append(f"{module} ({here}) imports {target} ({there})")
    assert not wrong, "imports against the layers:\n" + "\n".join(sorted(wrong))


def test_every_room_has_a_layer():
    rooms = {room(module) for module in import_graph()}
    assert rooms <= set(LAYER_OF), rooms - set(LAYER_OF)


def test_package_root_holds_what_users_import():
    root_modules = {path.stem for path in PACKAGE.glob("*.py")}
    folders = {path.name for path in PACKAGE.iterdir() if (path / "__init__.py").exists()}
    assert root_modules == ROOT_MODULES
    assert folders == USER_PACKAGES | set(LAYER_OF) - {"entrance", "extensions"}
