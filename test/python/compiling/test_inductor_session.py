"""torch.compile under a session, on the CPU: Inductor is set to compile in
this process and to launch through Triton's launcher while the session is
active (restored after), and a triton.compile call that leaves the mode out
of its options (as Inductor's do) is instrumented during the session and
keyed apart from plain builds, so that no cache hands back the wrong build.
The GPU side is test_gpu_torch_compile.py."""

import sys
import types

import pytest
import triton
from triton.backends.compiler import GPUTarget

import proton

from kernels import VECTOR_ADD_SIGNATURE, vector_add

SM90 = GPUTarget("cuda", 90, 32)


pytestmark = pytest.mark.usefixtures("no_instrumentation_session_left")


def compile_as_inductor_does(**constexprs):
    """triton.compile with options of its own, without instrumentation_mode."""
    source = triton.compiler.ASTSource(fn=vector_add, signature=VECTOR_ADD_SIGNATURE, constexprs=constexprs)
    return triton.compile(source, target=SM90, options={"num_warps": 4, "num_stages": 1, "debug": False})


def test_direct_compiles_are_instrumented_and_keyed_apart(tmp_path):
    plain = compile_as_inductor_does(BLOCK=2048)
    assert "%clock" not in plain.asm["ptx"]
    proton.start(str(tmp_path / "run"), backend="instrumentation", quiet=True)
    profiled = compile_as_inductor_does(BLOCK=2048)
    proton.finalize()
    assert "%clock" in profiled.asm["ptx"] and profiled.hash != plain.hash
    after = compile_as_inductor_does(BLOCK=2048)  # from Triton's cache: the plain build again
    assert after.hash == plain.hash and "%clock" not in after.asm["ptx"]


def test_inductor_compiles_in_process_while_a_session_is_active(tmp_path, monkeypatch):
    config = types.ModuleType("torch._inductor.config")
    config.compile_threads, config.use_static_cuda_launcher = 32, True
    inductor = types.ModuleType("torch._inductor")
    inductor.config = config
    torch = types.ModuleType("torch")
    torch._inductor = inductor
    for name, module in (("torch", torch), ("torch._inductor", inductor), ("torch._inductor.config", config)):
        monkeypatch.setitem(sys.modules, name, module)
    proton.start(str(tmp_path / "run"), backend="instrumentation", quiet=True)
    assert (config.compile_threads, config.use_static_cuda_launcher) == (1, False)
    proton.deactivate()
    assert (config.compile_threads, config.use_static_cuda_launcher) == (32, True)
    proton.activate()
    assert config.compile_threads == 1
    proton.finalize()
    assert (config.compile_threads, config.use_static_cuda_launcher) == (32, True)


def test_inductor_copies_of_marker_kernels_import_proton_language():
    from proton.compiling import inductor

    assert inductor.marker_imports(vector_add) == "\nimport proton.language as pl\n"
    module = types.ModuleType("wrapper")
    setattr(module, inductor.SOURCE_COLLECTOR, lambda kernel: "@triton.jit\ndef vector_add(...): ...\n")
    inductor._wrap_source_collector(module)
    inductor._wrap_source_collector(module)  # once only
    collected = getattr(module, inductor.SOURCE_COLLECTOR)(vector_add)
    assert collected == "@triton.jit\ndef vector_add(...): ...\n\nimport proton.language as pl\n"


def test_the_collector_is_wrapped_when_inductor_imports_it(tmp_path, monkeypatch):
    from proton.compiling import inductor

    (tmp_path / "fake_inductor_wrapper.py").write_text(
        f"def {inductor.SOURCE_COLLECTOR}(kernel):\n    return 'SOURCE'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(inductor, "WRAPPER_MODULE", "fake_inductor_wrapper")
    inductor.teach_inductor_the_markers()
    import fake_inductor_wrapper

    assert fake_inductor_wrapper.user_defined_triton_kernel_transitive_closure_source_code(vector_add) == (
        "SOURCE\nimport proton.language as pl\n"
    )
    assert not any(isinstance(f, inductor._WrapOnImport) for f in sys.meta_path)
    sys.modules.pop("fake_inductor_wrapper")
