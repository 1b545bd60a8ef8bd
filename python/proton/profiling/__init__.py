"""Profiling sessions as users drive them: proton.start, activate,
deactivate and finalize over host and instrumentation sessions (api), and
the sessions finalized when the program ends (at_exit)."""
