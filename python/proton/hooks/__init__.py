"""Hooks that sessions install into Triton, managed per session as in
Triton's Proton (`proton.hooks.HookManager`): a hook is active while any
session that registered it is active. The hooks live in
proton.session.hooks and proton.host.launch_hook."""

from .hook import Hook, HookManager
from .instrumentation import InstrumentationHook
from .launch import LaunchHook

__all__ = ["Hook", "HookManager", "InstrumentationHook", "LaunchHook"]
