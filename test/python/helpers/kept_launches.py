"""GPU tests' helper: the active instrumentation session's kept launches,
decoded as finalize will decode them, before finalize frees the buffers."""

from proton.contract import kernel_metadata
from proton.recording import decode, instrumentation_session as runtime


def decode_kept():
    """[(events, metadata)] of each kept launch, oldest first."""
    import torch

    torch.cuda.synchronize()
    out = []
    for kept in runtime._session.kept:
        data = kept.buffer.read()
        meta = kernel_metadata.metadata_for_buffer(data, kept.kernel)
        ctas = data.nbytes // meta.layout.bytes_per_cta
        out.append((decode.decode(data, meta, ctas, kernel=kept.kernel), meta))
    return out
