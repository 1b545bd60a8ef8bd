"""The former home of proton.compiling (compile time) and proton.recording
(run time). tools/insert_proton_records imports the TTGIR rewriter from here,
so these names stay importable: each is the same module object as its new
home (an alias, not a copy)."""

import sys

from ..compiling import ttgir_rewriter, ttgir_text

for _module in (ttgir_rewriter, ttgir_text):
    sys.modules[f"{__name__}.{_module.__name__.rpartition('.')[2]}"] = _module
