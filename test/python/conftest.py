import os
import sys
import tempfile

# Keep Triton's cache per test session so that cached plain or instrumented
# builds from elsewhere cannot hide what a test compiles; removed at the end.
_OWN_CACHE = None if "TRITON_CACHE_DIR" in os.environ else tempfile.mkdtemp(prefix="proton-test-cache-")
if _OWN_CACHE:
    os.environ["TRITON_CACHE_DIR"] = _OWN_CACHE


def pytest_sessionfinish(session, exitstatus):
    if _OWN_CACHE:
        import shutil

        shutil.rmtree(_OWN_CACHE, ignore_errors=True)


import pytest

import suite_paths

# Helpers, fakes and test modules are imported by module name from every folder (suite_paths.py).
sys.path[:0] = [folder for folder in suite_paths.IMPORT_PATH if folder not in sys.path]

from fake_cupti_support import fake, fake_path  # noqa: F401 (shared fixtures)
from fake_roctracer_support import fake_amdhip_path, roctracer_fake, roctracer_fake_path  # noqa: F401
from fake_rocprofiler_support import rocprofiler_fake, rocprofiler_fake_path  # noqa: F401
from fake_gpu_memory_support import fake_gpu_memory, fake_gpu_memory_path  # noqa: F401


@pytest.fixture
def no_session_left():
    """Fails a test that leaves a proton session open (and finalizes it)."""
    yield
    import proton

    leftover = proton.sessions()
    for session in leftover:
        proton.finalize(session)
    assert not leftover, "a test left a session open"


@pytest.fixture
def no_instrumentation_session_left():
    """Fails a test that leaves an instrumentation session open (and closes it)."""
    yield
    from proton.recording import instrumentation_session as runtime

    if runtime._session is not None:
        runtime._session = None
        pytest.fail("a test left a session active")


def pytest_collection_modifyitems(config, items):
    from proton.gpu import why_no_gpu

    reason = why_no_gpu()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"needs a GPU: {reason}")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
