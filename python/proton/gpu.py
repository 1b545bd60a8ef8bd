"""Why no GPU run is possible here, in words a user can act on: PyTorch
missing is not the same as no GPU (examples and tests say which)."""

from __future__ import annotations


def why_no_gpu() -> str | None:
    """None when PyTorch sees a GPU; otherwise the reason."""
    try:
        import torch
    except ImportError:
        return (
            "PyTorch is not installed: Proton allocates profile buffers and runs the examples with it "
            "(pip install torch)"
        )
    if torch.cuda.is_available():
        return None
    if getattr(torch.version, "hip", None):
        built = f"ROCm (HIP {torch.version.hip})"
    elif getattr(torch.version, "cuda", None):
        built = f"CUDA {torch.version.cuda}"
    else:
        return f"this PyTorch ({torch.__version__}) is a CPU-only build"
    return (
        f"PyTorch is built for {built} but sees no GPU (no driver or device, or CUDA_VISIBLE_DEVICES / "
        "HIP_VISIBLE_DEVICES hides them)"
    )
