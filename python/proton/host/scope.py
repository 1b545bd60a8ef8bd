"""Host-side scopes and state tags: `with proton.scope("name", metrics={...}):`,
`proton.enter_scope` / `proton.exit_scope`, and `with proton.state("tag"):`.

Scopes nest on a per-thread stack kept in C++, where the launch callback
reads it. User metrics are summed on the scope's node in every host session
that is active when the scope is entered. With PROTON_DISABLE=1 all of this
does nothing.
"""

from __future__ import annotations

import functools
import os

from ..errors import ProfilerError
from . import session as session_mod


def disabled() -> bool:
    return os.environ.get("PROTON_DISABLE", "0") not in ("", "0")


def _host():
    return session_mod._host()


def enter_scope(name: str, metrics: dict | None = None) -> int:
    """Opens scope `name` on this thread; returns its node id (-1 when disabled)."""
    if disabled():
        return -1
    if not isinstance(name, str) or not name:
        raise ProfilerError(f"a scope name must be a non-empty string, got {name!r}")
    host = _host()
    node = host.enter_scope(name)
    if metrics:
        try:
            for session in session_mod.active_sessions():
                session.add_metrics(node, name, metrics)
        except ProfilerError:
            host.exit_scope(name)  # a rejected scope is not left open
            raise
    return node


def exit_scope(name: str) -> None:
    """Closes scope `name`, which must be this thread's innermost open scope."""
    if disabled():
        return
    try:
        _host().exit_scope(name)
    except ValueError as error:
        raise ProfilerError(str(error)) from None


class scope:
    """`with proton.scope("name", metrics={"flops": 2e9}):` or `@proton.scope("name")`."""

    def __init__(self, name: str, metrics: dict | None = None):
        self.name, self.metrics = name, metrics

    def __enter__(self):
        enter_scope(self.name, self.metrics)
        return self

    def __exit__(self, *exc):
        exit_scope(self.name)
        return False

    def __call__(self, function):
        @functools.wraps(function)
        def wrapped(*args, **kwargs):
            with scope(self.name, self.metrics):
                return function(*args, **kwargs)
        return wrapped


class state:
    """`with proton.state("tag"):` launches inside go below a node `tag` under
    their calling context. An inner state replaces the outer one (it does not
    nest); the outer one is restored on exit."""

    def __init__(self, name: str):
        if not isinstance(name, str) or not name:
            raise ProfilerError(f"a state name must be a non-empty string, got {name!r}")
        self.name = name
        self._previous = None

    def __enter__(self):
        if not disabled():
            self._previous = _host().set_state(self.name)
        return self

    def __exit__(self, *exc):
        if not disabled():
            _host().set_state(self._previous)
        return False

    def __call__(self, function):
        @functools.wraps(function)
        def wrapped(*args, **kwargs):
            with state(self.name):
                return function(*args, **kwargs)
        return wrapped
