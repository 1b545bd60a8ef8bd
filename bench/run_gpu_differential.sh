#!/bin/bash
# The differential harness (bench/differential/run.py) on the GPU machine:
# installs wheelhouse/ (the cp312 wheel, perfetto, the libraries and their
# missing dependencies) into /tmp/site, runs one harness per argument (each
# argument is that run's options) side by side, and packs their results
# (logs, reports, summaries; no outputs or traces) into $OUT/differential.tgz.
set -u
OUT=${OUT:-bench/results/run}
mkdir -p "$OUT" /tmp/diff
python3 -m pip install -q --upgrade --no-index --no-deps --no-compile --target /tmp/site wheelhouse/*.whl
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH:/usr/local/cuda/bin PYTHONUNBUFFERED=1
export TRITON_CACHE_DIR=/tmp/triton_cache GEMS_VENDOR=nvidia NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,driver_version --format=csv > /tmp/diff/gpu.txt 2>&1
if [ -n "${WITH_GPU_TESTS:-}" ]; then  # the GPU suite beside the harnesses
  (cd test/python && timeout "${HARNESS_TIMEOUT:-480}" python3 -m pytest -q -rs -m gpu -p no:cacheprovider . \
    > /tmp/diff/pytest_gpu.log 2>&1; echo "pytest exit $?" >> /tmp/diff/pytest_gpu.log) &
fi
i=0
for options in "$@"; do
  i=$((i + 1))
  echo "$options" > /tmp/diff/options_$i.txt
  timeout "${HARNESS_TIMEOUT:-480}" python3 bench/differential/run.py --out /tmp/diff/$i $options > /tmp/diff/harness_$i.log 2>&1 &
done
wait
tar czf "$OUT/differential.tgz" -C /tmp --exclude='*.npz' --exclude='*.chrome_trace' --exclude='*.pftrace' \
  --exclude='*.hatchet' --exclude='ttgir_dump' --exclude='flaggems_cache' diff
cat /tmp/diff/*/summary.md 2>/dev/null
tail -3 /tmp/diff/harness_*.log
tail -15 /tmp/diff/pytest_gpu.log 2>/dev/null
