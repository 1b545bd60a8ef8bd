#!/bin/bash
# Triton's own Proton tests against this package on the GPU machine:
#   run_gpu_upstream.sh 3.6    the tests of Triton 3.6.0 (the machine's Triton)
#   run_gpu_upstream.sh 3.9    the 3.9 line's (needs /tmp/t39 from
#                              run_gpu_triton39.sh unpack)
# The tests are extracted to .upstream/<line> beforehand and carried
# (tools/upstream_compat/run_upstream_tests.py extract; never committed).
# Installs wheelhouse/ into /tmp/site, and llnl-hatchet with whatever of its
# dependencies the machine lacks from .gpuextras*/ (carried, or stashed in
# /tmp/extras_wheels by an earlier call): upstream's viewer tests need them.
# Outcomes per test to $OUT/upstream_tests_<line>_ours.json, the log beside.
set -u
LINE=${1:?3.6 or 3.9}
OUT=${OUT:-bench/results/run}
mkdir -p "$OUT" /tmp/extras_wheels
cp .gpuextras*/*.whl /tmp/extras_wheels/ 2>/dev/null
python3 -m pip install -q --upgrade --no-index --no-deps --no-compile --target /tmp/site wheelhouse/*.whl
PYTHONPATH=/tmp/site python3 - <<'PY'
import glob, importlib.util, subprocess, sys
modules = {"pillow": "PIL", "fonttools": "fontTools", "llnl_hatchet": "hatchet", "python_dateutil": "dateutil",
           "pyyaml": "yaml", "caliper_reader": "caliperreader"}
missing = [w for w in sorted(glob.glob("/tmp/extras_wheels/*.whl"))
           if importlib.util.find_spec(modules.get(w.split("/")[-1].split("-")[0].lower(),
                                                   w.split("/")[-1].split("-")[0].lower())) is None]
if missing:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile",
                    "--target", "/tmp/site", *missing], check=False)
print("installed for the viewer tests:", [w.split("/")[-1].split("-")[0] for w in missing])
PY
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH PYTHONUNBUFFERED=1
if [ "$LINE" = 3.9 ]; then
  # 3.9 assembles sm_90 with its newer "ptxas-blackwell", left out of the slim
  # copy: its older bundled ptxas stands in.
  export PYTHONPATH=/tmp/t39:/tmp/site TRITON_DEFAULT_FP_FUSION=1 \
    TRITON_PTXAS_BLACKWELL_PATH=/tmp/t39/triton/backends/nvidia/bin/ptxas
fi
python3 -c 'import triton, torch; print("triton", triton.__version__, "torch", torch.__version__)'
timeout "${UPSTREAM_TIMEOUT:-540}" python3 tools/upstream_compat/run_upstream_tests.py run --tests ".upstream/$LINE" \
  --profiler ours --out "$OUT/upstream_tests_${LINE/./}_ours.json" --timeout 300 -- -rf > "$OUT/upstream_${LINE/./}.log" 2>&1
echo "upstream exit $?" >> "$OUT/upstream_${LINE/./}.log"
grep -E "^(FAILED|ERROR)|^ours:|exit" "$OUT/upstream_${LINE/./}.log" | tail -40
