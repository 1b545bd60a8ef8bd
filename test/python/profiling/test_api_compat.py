"""Triton's Proton's API, as its users call it:
the default backend, int session ids, activate/deactivate/finalize with and
without ids, the decorator, the disable switches, the hook registry, mode
keywords and strings, and the markers' semantic switch. Host sessions run
over the fake libcupti (no GPU)."""

import json
import os
import subprocess
import sys

import pytest
import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

import proton
import proton.language as pl
from proton.profiling import api
from proton.recording import instrumentation_session as instrument_session
from proton.hooks import HookManager, InstrumentationHook, LaunchHook
from proton.mode import MMA, Default, ModeError, PCSampling, parse_any

from kernels import VECTOR_ADD_SIGNATURE, compile_kernel, vector_add
import suite_paths

SM90 = GPUTarget("cuda", 90, 32)


@pytest.fixture
def host(fake, fake_path, monkeypatch):
    """Host sessions over the fake libcupti."""
    monkeypatch.setenv("PROTON_CUPTI_LIB", str(fake_path))
    return fake


@pytest.fixture(autouse=True)
def nothing_left_open():
    yield
    leftover = proton.sessions()
    proton.finalize()
    HookManager.unregister()
    assert not leftover, "a test left a session open"


def test_default_backend_is_the_host_profiler(host, tmp_path):
    session = proton.start(str(tmp_path / "host"), quiet=True)
    assert session.backend == "cupti"
    instrumented = proton.start(str(tmp_path / "intra"), mode="default", quiet=True)
    assert instrumented.session is instrument_session._session  # an instrumentation mode selects instrumentation
    proton.finalize()


def test_host_only_profiling_never_loads_the_compiler_extension(fake_path, tmp_path):
    """The compiler extension (20 MB of MLIR) loads when a kernel is first
    instrumented, never for host profiling."""
    code = (
        "import sys, proton, proton.language, proton.hooks, proton.viewer, proton.specs, proton.context\n"
        f"proton.start({str(tmp_path / 'host')!r}, quiet=True)\n"
        "with proton.scope('step'):\n    pass\n"
        "proton.finalize()\n"
        "assert 'proton._C' not in sys.modules, 'loaded at import or by a host session'\n"
        "from proton.compiling.compiler import extension\n"
        "assert extension().LLVM_VERSION and 'proton._C' in sys.modules\n"
    )
    env = dict(os.environ, PROTON_CUPTI_LIB=str(fake_path))
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_session_ids_count_up_and_name_the_session(host, tmp_path):
    first = proton.start(str(tmp_path / "a"), quiet=True)
    second = proton.start(str(tmp_path / "b"), quiet=True)
    assert isinstance(first, int) and second == first + 1
    assert first.name == str(tmp_path / "a") and second.active
    proton.finalize(second)
    third = proton.start(str(tmp_path / "c"), quiet=True)
    assert third == second + 1
    reports = proton.finalize()  # every open session
    assert [r.name for r in reports] == [str(tmp_path / "a"), str(tmp_path / "c")]
    assert all(os.path.exists(str(tmp_path / n) + ".hatchet") for n in "abc")


def test_unknown_session_ids_and_repeated_calls(host, tmp_path):
    session = proton.start(str(tmp_path / "x"), quiet=True)
    for call in (proton.activate, proton.deactivate, proton.finalize):
        with pytest.raises(proton.ProfilerError, match=f"Session has not been initialized: {session + 1}"):
            call(session + 1)
    proton.deactivate(session)
    proton.deactivate(session)  # twice is fine
    assert not session.active
    proton.activate()
    assert session.active
    proton.finalize()
    assert proton.finalize() is None and proton.activate() is None  # nothing open: nothing to do


def test_empty_sessions_still_write_their_files(host, tmp_path):
    proton.start(str(tmp_path / "host"), quiet=True)
    proton.start(str(tmp_path / "intra"), backend="instrumentation", data="tree", quiet=True)
    proton.finalize()
    assert json.load(open(tmp_path / "host.hatchet")) is not None
    assert (tmp_path / "intra.hatchet").exists()
    assert not (tmp_path / "intra.chrome_trace").exists()  # data="tree": the tree only


def test_instrumentation_data_and_output_format(tmp_path):
    proton.start(str(tmp_path / "trace"), backend="instrumentation", data="trace", quiet=True)
    report = proton.finalize()
    assert sorted(report.files) == ["chrome_trace", "pftrace"]
    proton.start(str(tmp_path / "fmt"), backend="instrumentation", quiet=True)
    report = proton.finalize(None, "chrome_trace")
    assert sorted(report.files) == ["chrome_trace"]
    with pytest.raises(proton.ProfilerError, match="unknown output_format 'svg'"):
        proton.finalize(None, "svg")


def test_output_format_needs_the_data_recorded(host, tmp_path):
    session = proton.start(str(tmp_path / "tree"), quiet=True)
    with pytest.raises(proton.ProfilerError, match="output_format='chrome_trace' needs data='trace'"):
        proton.finalize(session, "chrome_trace")
    proton.finalize(session, "hatchet")


def test_profile_decorator_keeps_the_session_open_until_finalize(host, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    @proton.profile(name=str(tmp_path / "named"), quiet=True)
    def add(a, b):
        return a + b

    assert add(1, 2) == 3
    (session,) = proton.sessions()
    assert not session.active  # deactivated after the call, open until finalize
    proton.finalize()
    assert (tmp_path / "named.hatchet").exists()

    @proton.profile
    def sub(a, b):
        return a - b

    assert sub(3, 2) == 1
    proton.finalize()
    assert (tmp_path / (proton.DEFAULT_PROFILE_NAME + ".hatchet")).exists()

    with proton.profile(str(tmp_path / "block"), quiet=True) as block:  # Proton's form: finalized at the end
        pass
    assert block.report.files["tree"].endswith("block.hatchet") and proton.sessions() == []


@pytest.mark.parametrize("switch", ["TRITON_PROTON_DISABLE", "PROTON_DISABLE", "knob"])
def test_disable_switches(switch, tmp_path, monkeypatch):
    if switch == "knob":
        monkeypatch.setattr(triton.knobs.proton, "disable", True)
    else:
        monkeypatch.setenv(switch, "1")
    assert proton.start(str(tmp_path / "off")) is None
    proton.finalize()
    assert not any(tmp_path.iterdir())


def test_hook_manager_registry():
    assert LaunchHook() is LaunchHook()  # one per process
    HookManager.register(LaunchHook(), 0)
    HookManager.register(LaunchHook(), 0)
    assert HookManager.active_hooks == [LaunchHook()] and HookManager.session_hooks[0][LaunchHook()] is True
    HookManager.register(LaunchHook(), 1)
    HookManager.unregister(0)
    assert HookManager.active_hooks == [LaunchHook()]  # the session of id 1 still wants it
    HookManager.unregister(1)
    assert HookManager.active_hooks == []
    instrumentation = InstrumentationHook("")
    HookManager.register(instrumentation, 2)
    HookManager.register(LaunchHook(), 2)
    assert HookManager.active_hooks == [LaunchHook(), instrumentation]  # launch hooks first
    assert triton.knobs.runtime.add_stages_inspection_hook is instrumentation.stage_hook
    HookManager.deactivate(2)
    assert HookManager.active_hooks == [] and triton.knobs.runtime.add_stages_inspection_hook is None
    assert HookManager.session_hooks[2] == {instrumentation: False, LaunchHook(): False}
    HookManager.activate(2)
    assert len(HookManager.active_hooks) == 2
    assert InstrumentationHook.active_count == 1
    with pytest.raises(RuntimeError, match="Only one instance of the instrumentation hook can be active"):
        InstrumentationHook("default").activate()
    HookManager.unregister()
    assert HookManager.active_hooks == [] and not HookManager.session_hooks
    assert triton.knobs.runtime.add_stages_inspection_hook is None and InstrumentationHook.active_count == 0


def test_sessions_register_their_hooks(tmp_path):
    session = proton.start(str(tmp_path / "x"), backend="instrumentation", hook="triton", quiet=True)
    hooks = HookManager.session_hooks[session]
    assert sorted(type(h).__name__ for h in hooks) == ["InstrumentationHook", "LaunchHook"]
    proton.deactivate(session)
    assert not any(hooks.values()) and HookManager.active_hooks == []
    assert "%clock" not in compile_kernel(vector_add, VECTOR_ADD_SIGNATURE, SM90, BLOCK=256).asm["ptx"]
    proton.activate(session)
    assert all(hooks.values())
    assert "%clock" in compile_kernel(vector_add, VECTOR_ADD_SIGNATURE, SM90, BLOCK=256).asm["ptx"]
    proton.finalize(session)
    assert session not in HookManager.session_hooks


def test_mode_keywords_as_triton_writes_them():
    mode = Default(
        metric_type="cycle",
        buffer_strategy="circular",
        buffer_type="shared_mem",
        buffer_size=4096,
        granularity="warp_2",
        sampling_strategy="selective",
        sampling_options="0, 2",
        optimizations="clock32,time_shift",
    )
    assert mode.buffer_type == "shared" and mode.sampling_options == (0, 2)
    assert mode.optimizations == ("clock32", "time_shift")
    options = mode.pipeline_options()
    assert options.granularity == "warp" and options.unit_stride == 2 and options.clock_bits == 32
    # warp_2 on 8 warps with units 0 and 2 selected: warps 0 and 4... of the strided units 0, 2, 4, 6.
    assert options.for_warps(8).sampling_options == (0, 2)
    assert Default(granularity="warp_4").pipeline_options().for_warps(8).sampling_options == (0, 4)
    assert Default(granularity="warp_group_2").pipeline_options().for_warps(16).sampling_options == (0, 2)
    parsed = parse_any(
        "default:metric_type=cycle:buffer_type=shared_mem:granularity=warp_group_2:"
        "sampling_strategy=selective:sampling_options=0, 2:buffer_strategy=circular"
    )
    assert parsed.granularity == "warp_group_2" and parsed.buffer_type == "shared"
    with pytest.raises(ModeError, match="buffer_strategy=flush is not supported"):
        Default(buffer_strategy="flush")
    with pytest.raises(ModeError, match="invalid granularity value 'warp_3'"):
        Default(granularity="warp_3")
    with pytest.raises(ModeError, match="invalid metric_type value 'time'"):
        Default(metric_type="time")


def test_strided_granularity_compiles_to_every_other_warp():
    from proton.compiling.stage_hook import StageHook

    with StageHook(Default(granularity="warp_2").pipeline_options(), "warp2"):
        kernel = compile_kernel(vector_add, VECTOR_ADD_SIGNATURE, SM90, BLOCK=1024)
    assert json.loads(kernel.metadata.proton)["layout"]["warps"] == [0, 2]


@pytest.mark.parametrize("mode", [MMA(), "mma", "mma:granularity=warp"], ids=["object", "name", "string"])
def test_mma_mode_starts_a_session_that_adds_mma_scopes(tmp_path, mode):
    session = proton.start(str(tmp_path / "m"), backend="instrumentation", mode=mode, quiet=True)
    assert session.hook.options.mma_scopes, f"mode {mode!r} should turn on the compiler's MMA scopes"
    assert "mma-scopes=true" in session.hook.mode_key  # never shares Triton's cache with Default builds
    proton.finalize()
    assert not Default().pipeline_options().mma_scopes
    assert "mma-scopes" not in Default().pipeline_options().to_pass_options()


def test_pcsampling_takes_cycles():
    assert MMA(granularity="warp").name == "mma"
    assert PCSampling(interval=1000).exponent == 10  # a period in cycles, as Triton's Proton takes it
    assert PCSampling(interval=12).exponent == 12 and PCSampling().exponent == 10
    assert PCSampling(interval=0).exponent == 0  # CUPTI's own default
    with pytest.raises(ModeError, match="period exponent in 5..31, a period in cycles"):
        PCSampling(interval=3)


@triton.jit
def _marked(out):
    with pl.scope("work"):
        tl.store(out, 1)


def test_enable_and_disable_semantic():
    pl.enable_semantic("triton")  # accepted: Triton kernels record by default here
    from proton.compiling.stage_hook import StageHook

    try:
        pl.disable_semantic("triton")
        with StageHook(Default().pipeline_options(), "semantic"), pytest.raises(Exception) as error:
            compile_kernel(_marked, {"out": "*i32"}, SM90)
        assert "proton markers are disabled for triton kernels" in str(error.value)
    finally:
        pl.enable_semantic("triton")
    with pytest.raises(ValueError, match="unknown semantic 'cuda'"):
        pl.enable_semantic("cuda")


def test_triton_tutorial_flow_runs_with_one_import_changed(tmp_path):
    # The intra-kernel tutorial's calls, in a fresh process, without a GPU:
    # start with data="trace" and a mode object, enable_semantic, finalize.
    code = f"""
import proton, proton.language as pl
from proton.mode import Default
pl.enable_semantic("triton")
sid = proton.start({str(tmp_path / 'tut')!r}, data="trace", backend="instrumentation",
                   mode=Default(optimizations="clock32", sampling_strategy="selective", sampling_options="0, 2"))
assert sid == 0
proton.deactivate(sid)
proton.activate(sid)
proton.finalize(sid, "chrome_trace")
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "tut.chrome_trace").exists()


def test_scripts_under_the_command_line_share_its_session(tmp_path):
    # proton-profile's session is the script's: its start and finalize calls
    # are ignored, and only that session can be (de)activated.
    session = proton.start(str(tmp_path / "cli"), backend="instrumentation", quiet=True)
    api.run_from_command_line(session)
    try:
        assert proton.start(str(tmp_path / "script")) is None
        proton.deactivate(0)
        assert not session.active
        proton.activate()
        assert session.active
        with pytest.raises(
            proton.ProfilerError, match="Only one session can be activated when running from the command line"
        ):
            proton.activate(session + 5)
        assert proton.finalize() is None and proton.sessions() == [session.session]
    finally:
        api.run_from_command_line(None)
    proton.finalize()
    assert not (tmp_path / "script.hatchet").exists() and (tmp_path / "cli.hatchet").exists()


def test_specs_match_tritons():
    specs = pytest.importorskip("triton.profiler.specs")
    for device_type, arch, sms, clock in (
        ("CUDA", "80", 108, 1410000),
        ("CUDA", "90", 132, 1980000),
        ("HIP", "gfx942", 304, 2100000),
    ):
        for width in (8, 16, 32, 64):
            assert proton.specs.max_flops(device_type, arch, width, sms, clock) == pytest.approx(
                specs.max_flops(device_type, arch, width, sms, clock), rel=1e-12
            )
    assert proton.specs.max_bps("CUDA", "90", 5120, 2619000) == specs.max_bps("CUDA", "90", 5120, 2619000)


def test_names_may_carry_the_extension(host, tmp_path):
    # Triton's Proton takes "run" and "run.hatchet" alike.
    proton.start(str(tmp_path / "intra.hatchet"), backend="instrumentation", quiet=True)
    proton.start(str(tmp_path / "host.hatchet"), quiet=True)
    proton.finalize()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "host.hatchet",
        "intra.chrome_trace",
        "intra.hatchet",
        "intra.pftrace",
    ]


def test_python_dash_m_proton_is_the_command():
    done = subprocess.run([sys.executable, "-m", "proton", "-h"], capture_output=True, text=True)
    assert done.returncode == 0 and "-n" in done.stdout and "--backend" in done.stdout


def test_output_directory_is_checked_at_start_and_data_kept_at_finalize(tmp_path, capsys):
    # A name in a directory that does not exist fails at start, not at finalize.
    with pytest.raises(
        proton.ProfilerError, match="cannot write the session's outputs to .*nowhere: no such directory"
    ):
        proton.start(str(tmp_path / "nowhere" / "run"), backend="instrumentation")
    assert proton.sessions() == []
    # A directory that goes away during the run: the outputs go to the
    # temporary directory and the report says where.
    gone = tmp_path / "gone"
    gone.mkdir()
    proton.start(str(gone / "run"), backend="instrumentation", data="tree", quiet=True)
    gone.rmdir()
    report = proton.finalize()
    (warning,) = [w for w in report.warnings if "could not write" in w]
    assert str(gone / "run.hatchet") in warning and os.path.exists(report.files["tree"])
    assert json.load(open(report.files["tree"]))[0]["frame"]["name"] == "ROOT"
    os.unlink(report.files["tree"])


def test_the_test_suite_removes_its_triton_cache(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TRITON_CACHE_DIR"}
    env["TMPDIR"] = str(tmp_path)
    here = str(suite_paths.ROOT)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            os.path.join(here, "compiling", "test_binding.py"),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=here,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    assert not list(tmp_path.glob("proton-test-cache-*"))


@pytest.mark.parametrize(
    "mode,problem",
    [
        ("default:buffer_size=99999999999999999999", "buffer_size must be 0 .inferred. or a power of two"),
        ("default:buffer_size=1000", "power of two"),
        (
            "default:sampling_strategy=selective:sampling_options=0,4096",
            "sampling_options are warp .or warp-group. ids",
        ),
        ("default:sampling_strategy=selective:sampling_options=-1", "sampling_options are warp"),
    ],
)
def test_modes_are_validated_when_made(mode, problem):
    # At start, not at compile time.
    with pytest.raises(ModeError, match=problem):
        proton.start("x", backend="instrumentation", mode=mode)
    assert Default(sampling_strategy="selective", sampling_options=5).sampling_options == (5,)


def test_start_checks_its_limits(tmp_path):
    for kwargs, problem in (
        ({"max_buffer_bytes": -1}, "max_buffer_bytes must be a number of bytes >= 0"),
        ({"max_launches_per_kernel": -2}, r"max_launches_per_kernel must be None \(keep every launch\) or an int"),
    ):
        with pytest.raises(proton.ProfilerError, match=problem):
            proton.start(str(tmp_path / "x"), backend="instrumentation", **kwargs)
    assert proton.sessions() == []


def test_no_torch_and_no_gpu_are_told_apart(monkeypatch):
    # A missing PyTorch is named as such, not as "no GPU".
    import builtins
    from proton.gpu import why_no_gpu

    real_import = builtins.__import__

    def without_torch(name, *args, **kwargs):
        if name == "torch":
            raise ImportError("No module named 'torch'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", without_torch)
    assert why_no_gpu().startswith("PyTorch is not installed")
    monkeypatch.undo()

    class FakeTorch:
        __version__ = "2.11.0+cpu"

        class version:
            hip = None
            cuda = None

        class cuda:
            @staticmethod
            def is_available():
                return False

    monkeypatch.setitem(sys.modules, "torch", FakeTorch)
    assert why_no_gpu() == "this PyTorch (2.11.0+cpu) is a CPU-only build"
    FakeTorch.version.cuda = "13.0"
    assert why_no_gpu().startswith("PyTorch is built for CUDA 13.0 but sees no GPU")


@pytest.mark.parametrize("example", ["example_override.py", "task_profiler.py", "host_profile.py"])
def test_examples_say_what_is_missing_without_a_traceback(example):
    from proton.gpu import why_no_gpu

    if why_no_gpu() is None:
        pytest.skip("a GPU is here: the examples run (the GPU tests cover them)")
    done = subprocess.run(
        [sys.executable, os.path.join(suite_paths.EXAMPLES, example)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if "Traceback" in done.stderr or done.returncode != 0:
        pytest.fail(f"{example}: exit {done.returncode}\n{done.stderr[-2000:]}")
    assert "nothing runs: " in done.stdout or "nothing to profile: " in done.stdout
