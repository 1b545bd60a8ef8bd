"""The build never ships a silently reduced package (issue 17 item 13):
without the CUPTI headers (pip's default build isolation has no Triton),
configuring fails with what to do, unless the host profiler is switched off
on purpose."""

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def configure(tmp_path, *defines):
    if not shutil.which("cmake") or not shutil.which("ninja"):
        pytest.skip("cmake and ninja are not on the PATH")
    nanobind = subprocess.run([sys.executable, "-m", "nanobind", "--cmake_dir"], capture_output=True, text=True)
    return subprocess.run(["cmake", "-S", ROOT, "-B", str(tmp_path / "build"), "-G", "Ninja",
                           f"-DPython_EXECUTABLE={sys.executable}", f"-Dnanobind_DIR={nanobind.stdout.strip()}",
                           "-DPROTON_CUPTI_INCLUDE_DIR=/nonexistent", *defines],
                          capture_output=True, text=True)


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
