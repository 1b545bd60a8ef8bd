"""Run at the start of every Python process proton-dump-ttgir starts (it puts
this folder first on PYTHONPATH): once the program imports Triton, imports
Proton, which then installs its dump hook (stage_hook.install_dump_hook),
so that a program that never imports proton keeps a TTGIR file for each
compiled variant too. Then runs the sitecustomize this one hides, if any.
Nothing here may break the program: every failure is ignored."""

import importlib.abc
import importlib.util
import os
import sys


class _AfterTriton(importlib.abc.MetaPathFinder):
    """Finds `triton` with the other finders and imports proton right after
    Triton's own import has finished."""

    def find_spec(self, name, path=None, target=None):
        if name != "triton":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        loader = getattr(spec, "loader", None)
        if loader is not None and hasattr(loader, "exec_module"):
            exec_module = loader.exec_module

            def exec_then_proton(module):
                exec_module(module)
                try:
                    import proton  # noqa: F401 - with PROTON_TTGIR_DUMP=1 its import installs the hook
                except Exception:  # noqa: BLE001 - a Python without Proton: Triton's own dump still runs
                    pass

            loader.exec_module = exec_then_proton
        return spec


if os.environ.get("PROTON_TTGIR_DUMP") == "1" and "triton" not in sys.modules:
    sys.meta_path.insert(0, _AfterTriton())

_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
_this = sys.modules.pop("sitecustomize", None)
try:
    importlib.import_module("sitecustomize")  # the one this folder hides
except Exception:  # noqa: BLE001 - none, or a broken one: as Python itself would go on
    sys.modules["sitecustomize"] = _this
