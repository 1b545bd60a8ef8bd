"""`python -m proton [options] script.py ...`: the proton-profile command,
as `python -m triton.profiler.proton` is Triton's."""

from .commands.entry_points import profile_command

profile_command()
