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
# STEPS picks the parts (default "scaling cuda tests"): scaling (bench/scaling.py), omp (the
# default program under OpenMP wait policies, quiet and with one busy core: bench/omp_policy.py,
# OMP_MODELS, OMP_CONFIGS), standalone (the generated parallel module of the project's inception
# CNN compiled for all cores, run as `python model.py`: the intra-op threads per worker it picks
# by itself), cuda (bench/cuda_modules.py), tests (the CUDA tests of the distributed backend).
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
STEPS=${STEPS:-scaling cuda tests}
for step in $STEPS; do
    case $step in
    scaling)
        python3 bench/scaling.py ${SCALING_MODELS:-} --cores "${CORES:-1,2,4,8,16}" \
            --budget "${BUDGET:-25}" --json "$OUT/scaling.json" --out "$OUT/scaling.txt" 2>&1 |
            tee "$OUT/scaling.log"
        ;;
    omp)
        python3 bench/omp_policy.py --models "${OMP_MODELS:-inception,light_inception_v1}" \
            --configs "${OMP_CONFIGS:-ramiel,default,active}" --rounds 5 --calls 8 \
            --out "$OUT/omp.txt" 2>&1 | tee "$OUT/omp.log"
        ;;
    standalone)
        # the installed command (pip --target puts it in /tmp/site/bin): python -m would import
        # the source tree's ramiel/, which lacks the tools
        ramiel=$(command -v ramiel || echo /tmp/site/bin/ramiel)
        model=${RAMIEL_MODEL_CACHE:-$HOME/.cache/ramiel/models}/inception-opset17-v1.onnx
        {
            "$ramiel" compile "$model" -o /tmp/standalone | tail -1
            grep "cores=" /tmp/standalone/model.py
            for _ in 1 2 3; do python3 /tmp/standalone/model.py | grep "clusters,"; done
        } 2>&1 | tee "$OUT/standalone.txt"
        ;;
    cuda)
        python3 bench/cuda_modules.py --out "$OUT/cuda.txt" ${CUDA_ARGS:-} 2>&1 | tee "$OUT/cuda.log"
        ;;
    tests)
        # from another directory: python -m puts the working directory first on sys.path, where
        # ramiel/ (the source tree, without its package-dir mapping) would shadow the package
        here=$PWD
        (cd /tmp && python3 -m pytest "$here/tests/runtime/test_runtime_distributed.py" \
            -k "cuda or nccl" -p no:cacheprovider -q -rs 2>&1 | tail -15) | tee "$OUT/pytest_cuda.txt"
        ;;
    *) echo "unknown step $step (scaling, omp, standalone, cuda, tests)"; exit 2 ;;
    esac
done
