#!/usr/bin/env bash
# All tests: the lit + FileCheck suite, then pytest (GPU tests skip without a GPU).
set -euo pipefail
cd "$(dirname "$0")"
[ -d .venv ] && . .venv/bin/activate
lit -sv test/lit
python -m pytest test/python -q
