"""Hooks that sessions install into Triton, managed per session as in
Triton's Proton (`proton.hooks`): the hook interface, the per-session
registry (a hook is active while any session that registered it is active)
and backend="instrumentation"'s hook. hook="triton"'s is in
host/launch_hook.py."""

from __future__ import annotations

from collections import defaultdict


class Hook:
    """Something a session installs into Triton while it is active. Higher
    `priority` runs first on launch entry (and last on exit)."""

    priority: int = 0

    def activate(self) -> None:
        raise NotImplementedError

    def deactivate(self) -> None:
        raise NotImplementedError

    def init_handle(self, module, function, name: str, metadata_group: dict, hash: str) -> None:
        pass

    def enter(self, metadata) -> None:
        pass

    def exit(self, metadata) -> None:
        pass


class HookManager:
    """Which hooks each session registered and whether the session has them
    active. `active_hooks` holds each hook active for at least one session,
    highest priority first; `session_hooks[session][hook]` says whether that
    session has it active."""

    active_hooks: list[Hook] = []
    session_hooks: dict[int, dict[Hook, bool]] = defaultdict(dict)

    @classmethod
    def register(cls, hook: Hook, session: int) -> None:
        cls.session_hooks[session][hook] = True
        cls._switch_on(hook)

    @classmethod
    def unregister(cls, session: int | None = None) -> None:
        sessions = list(cls.session_hooks) if session is None else [session]
        for s in sessions:
            cls.session_hooks.pop(s, None)
        for hook in list(cls.active_hooks):
            if not cls._wanted(hook):
                cls._switch_off(hook)

    @classmethod
    def activate(cls, session: int | None = None) -> None:
        for s in cls._sessions(session):
            for hook in cls.session_hooks[s]:
                cls.session_hooks[s][hook] = True
                cls._switch_on(hook)

    @classmethod
    def deactivate(cls, session: int | None = None) -> None:
        for s in cls._sessions(session):
            for hook in cls.session_hooks[s]:
                cls.session_hooks[s][hook] = False
        for hook in list(cls.active_hooks):
            if not cls._wanted(hook):
                cls._switch_off(hook)

    @classmethod
    def init_handle(cls, module, function, name, metadata_group, hash) -> None:
        for hook in cls.active_hooks:
            hook.init_handle(module, function, name, metadata_group, hash)

    @classmethod
    def enter(cls, metadata) -> None:
        for hook in cls.active_hooks:
            hook.enter(metadata)

    @classmethod
    def exit(cls, metadata) -> None:
        for hook in reversed(cls.active_hooks):
            hook.exit(metadata)

    # -- internals -------------------------------------------------------------
    @classmethod
    def _sessions(cls, session):
        return list(cls.session_hooks) if session is None else ([session] if session in cls.session_hooks else [])

    @classmethod
    def _wanted(cls, hook: Hook) -> bool:
        return any(hooks.get(hook) for hooks in cls.session_hooks.values())

    @classmethod
    def _switch_on(cls, hook: Hook) -> None:
        if hook not in cls.active_hooks:
            hook.activate()
            cls.active_hooks.append(hook)
            cls.active_hooks.sort(key=lambda h: h.priority, reverse=True)

    @classmethod
    def _switch_off(cls, hook: Hook) -> None:
        cls.active_hooks.remove(hook)
        hook.deactivate()


class InstrumentationHook(Hook):
    """`InstrumentationHook(mode)` with a mode as Triton's Proton takes it
    (None, "", a mode string or a proton.mode object), or wrapping the stage
    hook of an instrumentation session (`stage_hook=`)."""

    priority = 0
    #: Instrumentation hooks active now; one at a time, as in Triton's Proton.
    active_count: int = 0
    #: Alignment of each launch's profile buffer (Triton's profile_scratch).
    profile_buffer_alignment: int = 16

    def __init__(self, mode=None, *, stage_hook=None):
        from ..compiling.stage_hook import StageHook
        from .modes import parse

        self.mode = parse(mode or None)
        self.stage_hook = stage_hook or StageHook(self.mode.pipeline_options(), label=str(self.mode))

    def activate(self) -> None:
        if InstrumentationHook.active_count > 0:
            raise RuntimeError("Only one instance of the instrumentation hook can be active at a time.")
        self.stage_hook.install()
        InstrumentationHook.active_count += 1

    def deactivate(self) -> None:
        self.stage_hook.uninstall()
        InstrumentationHook.active_count -= 1
