#!/usr/bin/env bash
# One run on a lent machine with more cores and a CUDA GPU (the device tool): task-parallel
# scaling on 1-16 cores (bench/scaling.py), the generated modules on CUDA (bench/cuda_modules.py)
# and the CUDA tests of the distributed backend. Results go to $OUT.
#
# Prepared here, from the repository root:
#   echo /.whl/ >> .git/info/exclude
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#       --platform manylinux_2_28_x86_64 -d .whl xdsl==0.74.0 immutabledict ordered-set
#   pip wheel --no-deps --no-build-isolation -w .whl .
#   mkdir -p .whl/models && cp ~/.cache/ramiel/models/{inception,transformer}-opset17-v1.onnx .whl/models/
# then run with carry [".whl"]: bash bench/device_run.sh
# (SKIP_INSTALL=1 CORES=1,2 BUDGET=5: a dry run here with the project's .venv).
set -uo pipefail
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
if [ -z "${SKIP_INSTALL:-}" ]; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site
fi
export ORT_DISABLE_TELEMETRY=1 PYTHONUNBUFFERED=1
# the project's models as exported here (that machine's torch would export its own)
if [ -d .whl/models ]; then export RAMIEL_MODEL_CACHE=$PWD/.whl/models; fi
{
    nproc
    grep -m1 "model name" /proc/cpuinfo
    nvidia-smi -L 2>&1 | head -2
    python3 -c "import torch, onnx, onnxruntime, xdsl, ramiel; print('torch', torch.__version__, 'onnx', onnx.__version__, 'ort', onnxruntime.__version__, 'cuda', torch.cuda.is_available())"
} 2>&1 | tee "$OUT/env.txt"
python3 bench/scaling.py --cores "${CORES:-1,2,4,8,16}" --budget "${BUDGET:-25}" \
    --json "$OUT/scaling.json" --out "$OUT/scaling.txt" 2>&1 | tee "$OUT/scaling.log"
python3 bench/cuda_modules.py --out "$OUT/cuda.txt" ${CUDA_ARGS:-} 2>&1 | tee "$OUT/cuda.log"
# from another directory: python -m puts the working directory first on sys.path, where ramiel/
# (the source tree, without its package-dir mapping) would shadow the installed package
here=$PWD
(cd /tmp && python3 -m pytest "$here/tests/runtime/test_runtime_distributed.py" -k "cuda or nccl" \
    -p no:cacheprovider -q -rs 2>&1 | tail -15) | tee "$OUT/pytest_cuda.txt"
