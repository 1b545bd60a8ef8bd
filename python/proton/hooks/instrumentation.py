"""`proton.hooks.instrumentation`, as Triton's Proton has it:
backend="instrumentation"'s hook (proton.session.hooks)."""

from ..session.hooks import InstrumentationHook

__all__ = ["InstrumentationHook"]
