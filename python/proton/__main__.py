"""`python -m proton [options] script.py ...`: the proton-profile command,
as `python -m triton.profiler.proton` is Triton's."""

from .tools import profile_command

profile_command()
