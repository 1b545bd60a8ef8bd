"""The build never ships a silently reduced package:
without the CUPTI headers (pip's default build isolation has no Triton),
configuring fails with what to do, unless the host profiler is switched off
on purpose."""

import shutil
import subprocess
import sys

import pytest
import suite_paths

ROOT = str(suite_paths.REPO)


def configure(tmp_path, *defines):
    if not shutil.which("cmake") or not shutil.which("ninja"):
        pytest.skip("cmake and ninja are not on the PATH")
    nanobind = subprocess.run([sys.executable, "-m", "nanobind", "--cmake_dir"], capture_output=True, text=True)
    return subprocess.run(
        [
            "cmake",
            "-S",
            ROOT,
            "-B",
            str(tmp_path / "build"),
            "-G",
            "Ninja",
            f"-DPython_EXECUTABLE={sys.executable}",
            f"-Dnanobind_DIR={nanobind.stdout.strip()}",
            "-DPROTON_CUPTI_INCLUDE_DIR=/nonexistent",
            *defines,
        ],
        capture_output=True,
        text=True,
    )


def test_configure_without_cupti_headers_fails_with_what_to_do(tmp_path):
    done = configure(tmp_path)
    assert done.returncode != 0
    message = " ".join(done.stderr.split())
    assert "The host profiler needs the CUPTI headers" in message and "--no-build-isolation" in message
    assert "-DPROTON_HOST_PROFILER=OFF" in message


def test_host_profiler_can_be_switched_off_on_purpose(tmp_path):
    done = configure(tmp_path, "-DPROTON_HOST_PROFILER=OFF")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Host profiler not built (PROTON_HOST_PROFILER=OFF)" in done.stdout


def test_package_imports_without_the_host_runtime():
    # A build with PROTON_HOST_PROFILER=OFF has no proton._host: the package
    # still imports (records.py takes its row layouts from _host when there
    # is one), and a host session says what is missing.
    code = (
        "import sys; sys.modules['proton._host'] = None\n"
        "import proton\n"
        "from proton.host import records, session\n"
        "assert records.AGGREGATE is None and records.NODE_KINDS == {}\n"
        "try:\n"
        "    session._host()\n"
        "except proton.ProfilerError as error:\n"
        "    print(error)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "proton._host) is not built into this install" in done.stdout
