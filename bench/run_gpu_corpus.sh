#!/bin/bash
# GPU evidence, Triton 3.6 (the GPU image's): the kernel corpus
# profiled and unprofiled (bit-identical outputs, event counts), the whole GPU
# suite, and the overhead benchmark with the softmax and attention rows.
# Run in the repository root on the GPU machine with the cp312 wheel (plus
# perfetto and protobuf wheels) in wheelhouse/; results go to $OUT.
# Usage: run_gpu_corpus.sh tests|bench
set -u
OUT=${OUT:-bench/results/run}
mkdir -p "$OUT"
python3 -m pip install -q --upgrade --no-index --no-deps --no-compile --target /tmp/site wheelhouse/*.whl
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
case "${1:-tests}" in
  tests)
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv > "$OUT/gpu.txt" 2>&1
    python3 -c 'import triton, torch; print("triton", triton.__version__, "torch", torch.__version__)' >> "$OUT/gpu.txt"
    (cd test/python && timeout 300 python3 -m pytest -q -rs gpu/test_gpu_corpus.py) > "$OUT/pytest_gpu_corpus_triton36.log" 2>&1
    echo "pytest exit $?" >> "$OUT/pytest_gpu_corpus_triton36.log"
    (cd test/python && timeout 240 python3 -m pytest -q -rs -m gpu --deselect gpu/test_gpu_corpus.py .) > "$OUT/pytest_gpu.log" 2>&1
    echo "pytest exit $?" >> "$OUT/pytest_gpu.log"
    tail -3 "$OUT"/pytest_gpu*.log ;;
  bench)
    timeout 560 python3 bench/bench_overhead.py --only device --out "$OUT" > "$OUT/bench_stdout.log" 2>&1
    echo "bench exit $?" >> "$OUT/bench_stdout.log"
    tail -30 "$OUT/bench_stdout.log" ;;
esac
