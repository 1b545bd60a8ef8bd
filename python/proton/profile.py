"""The module Triton's Proton keeps its session API in (`triton.profiler.profile`),
for scripts and tests that import from it by that name. `proton.profile` itself
stays the decorator / context manager, as upstream's package attribute is.
The API lives in proton.profiling.api."""

from .host.session import default_backend as _select_backend
from .profiling.api import activate, deactivate, finalize, profile, start
from .session.options import DEFAULT_PROFILE_NAME

__all__ = ["DEFAULT_PROFILE_NAME", "activate", "deactivate", "finalize", "profile", "start", "_select_backend"]
