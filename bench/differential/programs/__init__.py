"""Deterministic programs over third-party Triton libraries, for the
differential harness (bench/differential/run.py). Each module has

    run(use_library: bool) -> dict[str, torch.Tensor] | None

which builds its inputs on the CPU from fixed seeds, runs its workload on the
GPU (through the library, or with use_library=False in plain PyTorch, None
where the module has no PyTorch version) and returns every output, forward
and backward."""

LIBRARIES = ("flaggems", "liger", "fla")
