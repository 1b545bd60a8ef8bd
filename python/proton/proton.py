"""`python -m proton.proton ...`: the proton-profile command under the module
name Triton's Proton gives it (`python -m triton.profiler.proton`)."""

if __name__ == "__main__":
    from .commands.entry_points import profile_command

    profile_command()
