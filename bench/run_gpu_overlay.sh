#!/bin/bash
# Installs the cp312 wheel of wheelhouse/ into /tmp/site, then the Python
# package of a committed tree exported to .headsrc/ over it (so that a GPU
# run tests what is committed while the working tree is being edited):
#   git archive HEAD python/proton | tar -x -C .headsrc
# Source it: it exports PYTHONPATH and PATH.
python3 -m pip install -q --upgrade --no-index --no-deps --no-compile --target /tmp/site wheelhouse/*.whl
if [ -d .headsrc/python/proton ]; then
  cp -r .headsrc/python/proton/. /tmp/site/proton/
fi
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
