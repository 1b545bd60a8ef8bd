"""The module Triton's Proton keeps its session API in (`triton.profiler.profile`),
for scripts and tests that import from it by that name. `proton.profile` itself
stays the decorator / context manager, as upstream's package attribute is."""

from .api import DEFAULT_PROFILE_NAME, activate, deactivate, finalize, profile, start
from .api import _host_backend as _select_backend

__all__ = ["DEFAULT_PROFILE_NAME", "activate", "deactivate", "finalize", "profile", "start", "_select_backend"]
