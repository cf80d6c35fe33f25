#!/usr/bin/env bash
# Set up .venv if needed, then run Ramiel's main job on the default model: the GoogLeNet
# (Inception v1) test model that ships inside the onnx wheel (light_inception_v1.onnx).
#
#   bash scripts/demo.sh [MODEL.onnx] [ramiel run options, e.g. --backend processes]
#
# The job: compile the model into out/<model>/ (parallel module model.py, sequential module
# model_seq.py, weights.safetensors, schedule.txt, the clustered IR model.mlir), run the parallel
# module as the compiler's defaults make it on this machine's cores (clusters = cores, or one
# cluster with intra-op threads where its estimate is lower: on 2 cores, with the default's
# oneDNN Graph segments, light_inception_v1 is one cluster of 2 threads; --clusters 2 forces
# the task-parallel split) on deterministic inputs (seeded random weights: the zoo test model's
# constant weights would make every output equal), check it against onnxruntime and print the
# latency of the parallel module, the sequential module and onnxruntime.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# shellcheck disable=SC1091
. .venv/bin/activate
export ORT_DISABLE_TELEMETRY=1

model="${1:-$(python -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light", "light_inception_v1.onnx"))')}"
shift || true
name="$(basename "$model" .onnx)"
out="out/$name"

ramiel run "$model" --random-weights -o "$out" "$@"
echo
echo "generated code: $out/model.py (parallel), $out/model_seq.py (sequential); schedule: $out/schedule.txt"
