"""The wheel tools/build_wheels.py writes, installed as a user installs it: a
fresh venv (python -m venv) with only Triton and the wheel's runtime
dependencies (no LLVM or MLIR development packages, no build tools), and a
PATH with no C or C++ compiler, runs the CPU compile path (an instrumented
kernel compiled for sm_90), the viewer on the fixtures, and every console
script.

Skipped unless PROTON_WHEEL names the wheel (CI builds the cp312 wheel, which
its suite then runs on, and runs this file on it). The wheel must be tagged
for glibc 2.28 or older, as PyTorch's manylinux_2_28 wheels are (a wheel of
build_wheels.py --glibc native is not). PROTON_WHEEL_PYTHON: the interpreter
the venv is made from (default: this one; its version must be the wheel's).
PROTON_WHEEL_TRITON: the Triton requirement (default: requirements-dev.txt's
pin). The venv installs from the package index pip is configured with.

    python3 tools/build_wheels.py --python 3.12 --out /tmp/wheels
    PROTON_WHEEL=/tmp/wheels/proton_profiler-0.1.0-cp312-cp312-manylinux_2_28_x86_64.whl \\
        pytest test/python/project/test_wheel_install.py
"""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import tomllib
import xml.etree.ElementTree as ElementTree
import zipfile
from pathlib import Path

import pytest
import suite_paths

ROOT = suite_paths.REPO
FIXTURES = suite_paths.FIXTURES
WHEEL = os.environ.get("PROTON_WHEEL")
SCRIPTS = sorted(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"])
COMPILERS = ("cc", "c++", "gcc", "g++", "clang", "clang++")
#: PyTorch's wheels are manylinux_2_28: the wheel installs wherever they do.
GLIBC_FLOOR = (2, 28)
#: Distributions that only a build (or the test suite) needs.
BUILD_ONLY = re.compile(r"^(xtc-.*|nanobind|scikit-build-core|cmake|ninja|lit|pytest|llnl-hatchet)$")

pytestmark = pytest.mark.skipif(
    not WHEEL,
    reason="set PROTON_WHEEL=/path/to/proton_profiler-*.whl (from tools/build_wheels.py) to install it into a "
    "fresh venv",
)


def triton_requirement():
    if os.environ.get("PROTON_WHEEL_TRITON"):
        return os.environ["PROTON_WHEEL_TRITON"]
    pins = re.findall(r"^triton==\S+", (ROOT / "requirements-dev.txt").read_text(), re.M)
    assert len(pins) == 1, "requirements-dev.txt pins one Triton"
    return pins[0]


class Venv:
    def __init__(self, root: Path, work: Path):
        self.root, self.work = root, work
        self.bin = root / "bin"
        self.python = self.bin / "python"
        # Only the venv's programs: no compiler, and nothing of the build
        # environment (PYTHONPATH, VIRTUAL_ENV, CC) leaks in.
        self.env = {
            "PATH": str(self.bin),
            "HOME": str(work),
            "TRITON_HOME": str(work),
            "TRITON_CACHE_DIR": str(work / "triton-cache"),
            "LANG": "C.UTF-8",
        }

    def run(self, argv, timeout=300):
        done = subprocess.run(
            [str(a) for a in argv], capture_output=True, text=True, timeout=timeout, env=self.env, cwd=self.work
        )
        assert done.returncode == 0, f"{argv[0]} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        return done.stdout

    def python_script(self, code, timeout=300):
        path = self.work / "script.py"
        path.write_text(textwrap.dedent(code))
        return self.run([self.python, path], timeout=timeout)


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    wheel = Path(WHEEL).resolve()
    assert wheel.is_file() and wheel.suffix == ".whl", f"PROTON_WHEEL={WHEEL}: not a wheel file"
    python = os.environ.get("PROTON_WHEEL_PYTHON", sys.executable)
    version = subprocess.run(
        [python, "-c", "import sys; print('cp%d%d' % sys.version_info[:2])"], capture_output=True, text=True
    ).stdout.strip()
    wheel_tag = wheel.name.split("-")[2]
    if version != wheel_tag:
        pytest.fail(f"{wheel.name} is for {wheel_tag}, {python} is {version}: set PROTON_WHEEL_PYTHON")
    base = tmp_path_factory.mktemp("wheel-install")
    root, work = base / "venv", base / "work"
    work.mkdir()
    subprocess.run([python, "-m", "venv", root], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    # Binary wheels only: nothing is compiled while installing.
    argv = [root / "bin/python", "-m", "pip", "install", "--only-binary", ":all:", triton_requirement(), wheel]
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=1800, env=env)
    assert done.returncode == 0, f"pip install failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return Venv(root, work)


def test_the_wheel_is_repaired_and_declares_the_scripts():
    wheel = Path(WHEEL)
    platform = wheel.name[: -len(".whl")].split("-")[-1]
    assert platform.startswith("manylinux_"), f"{wheel.name}: not an auditwheel-repaired wheel (tools/build_wheels.py)"
    glibc = min(tuple(int(n) for n in re.match(r"manylinux_(\d+)_(\d+)_", tag).groups()) for tag in platform.split("."))
    assert glibc <= GLIBC_FLOOR, f"{wheel.name} needs glibc {glibc[0]}.{glibc[1]}, newer than PyTorch's wheels' 2.28"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (entry_points,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        scripts = re.findall(r"^(\S+)\s*=", archive.read(entry_points).decode().split("[console_scripts]")[1], re.M)
    assert sorted(scripts) == SCRIPTS
    assert not [n for n in names if re.search(r"(^|/)lib(cupti|cuda|LLVM|MLIR)", n)]


def test_the_venv_has_only_triton_and_the_runtime_dependencies(venv):
    for compiler in COMPILERS:
        assert shutil.which(compiler, path=venv.env["PATH"]) is None, f"{compiler} on the test's PATH"
    report = json.loads(
        venv.python_script(
            """
            import importlib.metadata as md, importlib.util, json, re
            import proton
            from proton.compiling.compiler import extension
            import proton._host

            extension()  # libProtonCompiler.so and the nanobind module load
            def name(d):
                return re.sub(r"[-_.]+", "-", d.metadata["Name"]).lower()
            dists = {name(d): d for d in md.distributions()}
            needed, todo = set(), ["proton-profiler", "triton"]
            while todo:  # what the two need, transitively (markers without extras)
                n = todo.pop()
                if n in needed or n not in dists:
                    continue
                needed.add(n)
                for req in dists[n].requires or []:
                    if "extra ==" not in req:
                        todo.append(re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.-]+", req).group(0)).lower())
            print(json.dumps({
                "installed": sorted(dists), "needed": sorted(needed), "proton": proton.__file__,
                "mlir": importlib.util.find_spec("mlir") is not None,
                "llvm": importlib.util.find_spec("llvm") is not None,
            }))
            """
        )
    )
    assert report["proton"].startswith(str(venv.root)), report["proton"]
    assert not report["mlir"] and not report["llvm"]
    assert not [d for d in report["installed"] if BUILD_ONLY.match(d)]
    extra = set(report["installed"]) - set(report["needed"]) - {"pip", "setuptools", "wheel"}
    assert not extra, f"installed beyond Triton and the wheel's dependencies: {sorted(extra)}"
    assert {"proton-profiler", "triton", "numpy", "perfetto", "protobuf"} <= set(report["needed"])


def test_the_cpu_compile_path(venv):
    """An instrumented Triton kernel compiled for sm_90 without a GPU (Triton's
    own ptxas makes the cubin), as the main example does on a CPU machine."""
    (venv.work / "wheel_kernel.py").write_text(
        textwrap.dedent(
            """
            import triton
            import triton.language as tl
            import proton.language as pl


            @triton.jit
            def add(x, y, out, n, BLOCK: tl.constexpr):
                offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                mask = offsets < n
                with pl.scope("kernel"):
                    with pl.scope("load"):
                        a = tl.load(x + offsets, mask=mask)
                        b = tl.load(y + offsets, mask=mask)
                    tl.store(out + offsets, a + b, mask=mask)
            """
        )
    )
    result = json.loads(
        venv.python_script(
            """
            import json
            import triton
            from triton.backends.compiler import GPUTarget
            import proton
            from wheel_kernel import add

            proton.start("wheel", backend="instrumentation", quiet=True)
            source = triton.compiler.ASTSource(
                fn=add, signature={"x": "*fp32", "y": "*fp32", "out": "*fp32", "n": "i32"}, constexprs={"BLOCK": 256}
            )
            kernel = triton.compile(
                source,
                target=GPUTarget("cuda", 90, 32),
                options={"instrumentation_mode": triton.knobs.compilation.instrumentation_mode},
            )
            proton.finalize()
            meta = json.loads(kernel.metadata.proton)
            print(json.dumps({
                "scopes": [s["name"] for s in meta["scopes"]],
                "clock_reads": sum("%clock" in line for line in kernel.asm["ptx"].splitlines()),
                "cubin": len(kernel.asm["cubin"]),
                "scratch": kernel.metadata.profile_scratch_size,
            }))
            """,
            timeout=600,
        ).splitlines()[-1]
    )
    assert result["scopes"] == ["kernel", "load"]
    assert result["clock_reads"] >= 4 and result["cubin"] > 0 and result["scratch"] > 0, result


def test_the_viewer_on_the_fixtures(venv):
    tree = venv.run([venv.bin / "proton-view", FIXTURES / "host_run.hatchet"])
    assert all(name in tree for name in ("ROOT", "forward", "matmul_kernel", "backward")), tree
    tree = venv.run([venv.bin / "proton-view", FIXTURES / "recorded/proton_intra.hatchet"])
    assert all(name in tree for name in ("add", "load", "store")), tree
    # The buffers an H200 wrote, decoded into a Chrome trace, then drawn.
    trace, svg = venv.work / "h200.chrome_trace", venv.work / "h200.svg"
    events = venv.python_script(
        f"""
        import json
        import numpy as np
        from proton.recording import decode
        from proton.contract.kernel_metadata import KernelMetadata
        from proton.writers import chrome_trace

        info = json.load(open({str(FIXTURES / "vector_add_clock32.json")!r}))
        buffer = np.load({str(FIXTURES / "vector_add_clock32.npy")!r})
        meta = KernelMetadata.from_dict(info["metadata"])
        launch = decode.decode(buffer, meta, info["num_ctas"], kernel="vector_add")
        chrome_trace.write({str(trace)!r}, [launch], chrome_trace.session_origin([launch]))
        print(launch.num_events)
        """
    )
    venv.run([venv.bin / "proton-view", "--timeline", svg, trace])
    rects = ElementTree.parse(svg).getroot().iter("{http://www.w3.org/2000/svg}rect")
    bars = [r for r in rects if r.get("class") == "scope"]
    assert len(bars) == int(events) == 8 * 4 * 3  # 8 CTAs, 4 warps, 3 scopes


@pytest.mark.parametrize("name", SCRIPTS)
def test_console_script_help(venv, name):
    out = venv.run([venv.bin / name, "--help"])
    assert "usage" in out.lower() or "OVERVIEW" in out
