#!/bin/bash
# GPU evidence on Triton 3.9.0, which the GPU image does not have.
# Triton 3.9's wheel (272 MiB) is too large for one call, so a slimmed copy
# (no AMD libraries, no static libraries, no Blackwell CUPTI or ptxas) travels
# as xz parts in .t39*/ (one folder carried per call) over consecutive calls
# of a warm machine:
#   run_gpu_triton39.sh stash      copy the parts carried in this call to /tmp/t39parts
#   run_gpu_triton39.sh unpack     join and check them, unpack to /tmp/t39
#   run_gpu_triton39.sh run        unpack, then run our GPU tests on 3.9
#   run_gpu_triton39.sh upstream   unpack, then run the 3.9 line's own Proton
#                                  tests against this package (run_gpu_upstream.sh)
# Made from a `pip install --target` of triton==3.9.0 with
#   tar --exclude=triton/backends/amd/lib --exclude=__pycache__ --exclude='*.a' \
#     --exclude=triton/backends/nvidia/lib/cupti-blackwell \
#     --exclude=triton/backends/nvidia/bin/ptxas-blackwell \
#     --exclude=libGPUInstrumentationTestLib.so -cf - triton | xz -T2 -6
# split -b 50M, and its sha256 in the last folder's `sha`.
# Needs the cp312 wheel in wheelhouse/ (installed to /tmp/site); results to $OUT.
set -u
OUT=${OUT:-bench/results/run}
mkdir -p "$OUT" /tmp/t39parts
cp .t39*/t39.part* /tmp/t39parts/ 2>/dev/null
cp .t39*/sha /tmp/t39parts/ 2>/dev/null
mkdir -p /tmp/extras_wheels && cp .gpuextras*/*.whl /tmp/extras_wheels/ 2>/dev/null
ls -la /tmp/t39parts
[ "${1:-stash}" = stash ] && exit 0
cat /tmp/t39parts/t39.part* > /tmp/t39.tar.xz
echo "$(cat /tmp/t39parts/sha)  /tmp/t39.tar.xz" | sha256sum -c - || exit 1
rm -rf /tmp/t39 && mkdir -p /tmp/t39 && tar -C /tmp/t39 -xJf /tmp/t39.tar.xz || exit 1
python3 -m pip install -q --upgrade --no-index --no-deps --no-compile --target /tmp/site wheelhouse/*.whl
[ "$1" = unpack ] && exit 0
[ "$1" = upstream ] && exec bash bench/run_gpu_upstream.sh 3.9
# 3.9 assembles sm_90 with its newer "ptxas-blackwell", left out of the slim
# copy: its older bundled ptxas stands in.
export PYTHONPATH=/tmp/t39:/tmp/site PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1 \
  TRITON_PTXAS_BLACKWELL_PATH=/tmp/t39/triton/backends/nvidia/bin/ptxas
python3 -c 'import triton, torch; print("triton", triton.__version__, triton.__file__, "torch", torch.__version__)' > "$OUT/gpu_triton39.txt" 2>&1
(cd test/python && timeout 420 python3 -m pytest -q -rs gpu/test_gpu_corpus.py gpu/test_gpu_session.py) > "$OUT/pytest_gpu_triton39.log" 2>&1
echo "pytest exit $?" >> "$OUT/pytest_gpu_triton39.log"
cat "$OUT/gpu_triton39.txt"; tail -5 "$OUT/pytest_gpu_triton39.log"
