"""Open sessions are finalized when the program ends, so that a run that
ends early still leaves its profile:

- at interpreter exit: a normal end, sys.exit, an uncaught exception and
  Ctrl-C (KeyboardInterrupt) all end there; Python runs atexit functions
  after printing the exception;
- on SIGTERM (what schedulers send), whose default action ends the process
  without running them: while the program has no SIGTERM handler of its own,
  Proton's finalizes the open sessions and then ends the process by SIGTERM,
  as it would have ended. A handler the program installs (before or after
  the session starts) is left alone: the program decides when to end, and
  its end finalizes.

SIGKILL cannot be caught: periodic_flushing with a duration or a size
(recording/flush_policy.py) bounds what it loses to one interval.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import threading

from ..writers import files

_installed = False
_finalize_all = None


def install(finalize_all) -> None:
    """Arranges for `finalize_all()` to run at the program's end (once per
    process, at the first session's start)."""
    global _installed, _finalize_all
    _finalize_all = finalize_all
    if _installed:
        return
    _installed = True
    atexit.register(_at_exit)
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be installed from the main thread
    try:
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError):
        pass  # an embedded interpreter that keeps signals to itself


def _finalize(why: str) -> None:
    try:
        _finalize_all(why)
    except BaseException as error:  # noqa: BLE001 - the program is ending: say why, never hide its own end
        print(f"proton: could not finalize the open sessions {why}: {type(error).__name__}: {error}", file=sys.stderr)


def _at_exit() -> None:
    files.allow_threads(False)  # the interpreter's shutdown has begun: it may refuse new threads
    _finalize("at exit")


def _on_sigterm(signum, frame) -> None:
    _finalize("on SIGTERM")
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)
