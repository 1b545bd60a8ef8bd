"""GPU: proton.tasks in the example kernels: event counts, order and task
names; nothing recorded with ENABLE_PROFILING=False; overflow reported."""

import sys

import numpy as np
import pytest
import suite_paths

torch = pytest.importorskip("torch")

from proton.tasks import host  # noqa: E402

sys.path.insert(0, str(suite_paths.EXAMPLES))
import task_profiler  # noqa: E402

pytestmark = pytest.mark.gpu


def test_scaled_add_records_three_tasks_per_cta_in_order(tmp_path):
    n, block = 1 << 20, 1024
    buffer = task_profiler.run_scaled_add(n=n, block=block, trace=str(tmp_path / "add.pftrace"))
    events, report = host.read(buffer.cpu().numpy(), task_profiler.ADD_TASKS)
    ctas = n // block
    assert report.problems == [] and (report.ctas, report.groups) == (ctas, 1)
    assert events.num_events == 3 * ctas
    assert (tmp_path / "add_0.pftrace").stat().st_size > 0
    start = events.start_ns.reshape(ctas, 3)
    end = events.end_ns.reshape(ctas, 3)
    assert (events.scope.reshape(ctas, 3) == [0, 1, 2]).all()
    assert (end >= start).all()
    assert (start[:, 1:] >= end[:, :-1]).all()  # load, then compute, then store
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    assert (events.warp_sm >= 0).all() and (events.warp_sm < sms).all()


def test_tile_copy_splits_perfect_and_non_perfect_tiles(tmp_path):
    n, block, programs = (1 << 20) + 300, 1024, 132
    buffer = task_profiler.run_tile_copy(
        n=n, block=block, programs=programs, slots=programs * 32, trace=str(tmp_path / "copy.pftrace")
    )
    events, report = host.read(buffer.cpu().numpy(), task_profiler.COPY_TASKS)
    assert report.problems == []
    names = np.array(events.scope_names)[events.scope]
    assert (names == "perfect").sum() == n // block and (names == "non-perfect").sum() == 1


def test_disabled_profiling_records_nothing(tmp_path):
    buffer = task_profiler.run_scaled_add(enable=False, trace=str(tmp_path / "off.pftrace"))
    events, report = host.read(buffer.cpu().numpy(), task_profiler.ADD_TASKS)
    assert events is None and report.events == 0


def test_too_few_slots_are_reported_not_written_past(tmp_path):
    n, block = 1 << 16, 1024
    ctas = n // block
    buffer = task_profiler.run_scaled_add(n=n, block=block, slots=ctas * 4, trace=str(tmp_path / "small.pftrace"))
    events, report = host.read(buffer.cpu().numpy(), task_profiler.ADD_TASKS)
    # 4 slots per CTA: the count and 3 of its 6 records.
    assert report.dropped == 3 * ctas
    assert report.unclosed == {"compute": ctas}
    assert events.num_events == ctas
