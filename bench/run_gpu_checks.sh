#!/bin/bash
# The whole GPU suite and the examples (docs/performance.md). Run in the repository
# root on the GPU machine with the cp312 wheel (plus perfetto and protobuf
# wheels) in wheelhouse/; results go to $OUT (default bench/results/run).
set -u
OUT=${OUT:-bench/results/run}
mkdir -p "$OUT"
python3 -m pip install -q --upgrade --no-index --no-deps --no-compile --target /tmp/site wheelhouse/*.whl
export PYTHONPATH=/tmp/site
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt" 2>&1
(cd test/python && PROTON_SAVE_FIXTURES="$OUT/fixtures" timeout ${PYTEST_TIMEOUT:-420} python3 -m pytest -q -rs -m gpu . ) > "$OUT/pytest_gpu.log" 2>&1
echo "pytest exit $?" >> "$OUT/pytest_gpu.log"
for flags in "" "--increase-accuracy" "--op-measure --warp-sampling --warp-ids 0,2"; do
  echo "== python3 examples/example_dsl.py $flags" >> "$OUT/example_dsl.log"
  (cd "$OUT" && python3 "$OLDPWD/examples/example_dsl.py" $flags) >> "$OUT/example_dsl.log" 2>&1
  echo "exit $?" >> "$OUT/example_dsl.log"
done
for example in mma_mode events_marks_values gluon_warp_specialized; do
  echo "== python3 examples/$example.py" >> "$OUT/example_dsl.log"
  (cd "$OUT" && timeout 120 python3 "$OLDPWD/examples/$example.py") >> "$OUT/example_dsl.log" 2>&1
  echo "exit $?" >> "$OUT/example_dsl.log"
done
ls -la "$OUT" >> "$OUT/example_dsl.log"
