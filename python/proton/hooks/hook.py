"""`proton.hooks.hook`, as Triton's Proton has it: the hook interface and the
per-session registry (proton.session.hooks)."""

from ..session.hooks import Hook, HookManager

__all__ = ["Hook", "HookManager"]
