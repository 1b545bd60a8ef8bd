"""The session kinds the differential harness runs a program under, and the
one library kernel it copies with pl.scope markers (kind "scopes").

The copy is made at run time from the installed library's source (an AST
rewrite: the kernel's whole body in a scope named after the kernel), so
no library text is kept in this repository."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import inspect
import os
import tempfile
import textwrap


@dataclasses.dataclass(frozen=True)
class Kind:
    name: str
    start: dict | None  # proton.start's keywords; None: no session
    instrumented: bool = False  # kernels compiled with records (each must record)
    override: bool = False  # TRITON_KERNEL_OVERRIDE with insert_proton_records' TTGIR
    scopes: bool = False  # one library kernel copied with pl.scope markers


KINDS = {
    k.name: k
    for k in (
        Kind("plain", None),
        Kind("host", {}),
        Kind("host_hook", {"hook": "triton"}),
        Kind("pcsampling", {"backend": "cupti", "mode": "pcsampling"}),
        Kind("instrumentation", {"backend": "instrumentation"}),
        Kind("mma", {"backend": "instrumentation", "mode": "mma"}, instrumented=True),
        Kind("override", {"backend": "instrumentation"}, instrumented=True, override=True),
        Kind("scopes", {"backend": "instrumentation"}, instrumented=True, scopes=True),
    )
}

#: The kernel each library's "scopes" run copies with markers: (module, name).
SCOPED_KERNELS = {
    "flaggems": ("flag_gems.ops.addmm", "addmm_kernel"),
    "liger": ("liger_kernel.ops.rms_norm", "_rms_norm_forward_kernel"),
    "fla": ("fla.ops.utils.cumsum", "chunk_local_cumsum_vector_kernel"),
}


def _innermost(obj):
    """The JITFunction under Triton's and libraries' wrappers, and the
    wrapper holding it (None if `obj` is the JITFunction)."""
    import triton

    holder = None
    while not isinstance(obj, triton.runtime.JITFunction):
        holder, obj = obj, obj.fn
    return obj, holder


class _ExitBeforeReturns(ast.NodeTransformer):
    """Puts `exit_scope` before each `return` of the function (Triton has no
    `return` inside `with`), leaving nested functions alone."""

    def __init__(self, exit_call):
        self.exit_call = exit_call

    def visit_Return(self, node):
        return [ast.Expr(self.exit_call()), node]

    def visit_FunctionDef(self, node):
        return node  # a nested function keeps its returns


def with_scope(jit_fn, scope_name: str, folder: str):
    """A new JITFunction: `jit_fn`'s kernel with its body inside a scope
    (`enter_scope` first, `exit_scope` at the end and before every
    `return`), compiled from a file in `folder` (Triton reads a kernel's
    source with inspect), over the original's globals."""
    import triton

    source = textwrap.dedent(inspect.getsource(jit_fn.fn))
    tree = ast.parse(source)
    function = tree.body[0]
    function.decorator_list = []

    def call(marker):
        return lambda: ast.Call(
            ast.Attribute(ast.Name("_proton_pl", ast.Load()), marker, ast.Load()), [ast.Constant(scope_name)], []
        )

    body = function.body
    docstring = body[:1] if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else []
    rest = [_ExitBeforeReturns(call("exit_scope")).visit(statement) for statement in body[len(docstring) :]]
    rest = [s for statement in rest for s in (statement if isinstance(statement, list) else [statement])]
    ends_in_return = bool(rest) and isinstance(rest[-1], ast.Return)
    function.body = docstring + [ast.Expr(call("enter_scope")())] + rest
    if not ends_in_return:
        function.body.append(ast.Expr(call("exit_scope")()))
    path = os.path.join(folder, f"scoped_{function.name}.py")
    with open(path, "w") as f:
        f.write(ast.unparse(ast.fix_missing_locations(tree)) + "\n")
    spec = importlib.util.spec_from_file_location(f"scoped_{function.name}", path)
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update({k: v for k, v in jit_fn.fn.__globals__.items() if not k.startswith("__")})
    module.__dict__["_proton_pl"] = importlib.import_module("proton.language")
    spec.loader.exec_module(module)
    options = {
        name: getattr(jit_fn, name)
        for name in ("do_not_specialize", "do_not_specialize_on_alignment", "debug", "noinline")
        if getattr(jit_fn, name, None) is not None
    }
    return triton.jit(getattr(module, function.name), **options)


def patch_scoped_kernel(library: str) -> str:
    """Replaces the library's SCOPED_KERNELS kernel by its copy with a
    scope; returns the scope's name (the kernel's)."""
    module_name, attribute = SCOPED_KERNELS[library]
    module = importlib.import_module(module_name)
    jit_fn, holder = _innermost(getattr(module, attribute))
    scoped = with_scope(jit_fn, jit_fn.fn.__name__, tempfile.mkdtemp(prefix="proton-scoped-"))
    if holder is None:
        setattr(module, attribute, scoped)
    else:
        holder.fn = scoped
    return jit_fn.fn.__name__
