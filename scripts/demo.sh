#!/usr/bin/env bash
# Set up .venv if needed, then run Ramiel's main job on the default model: the GoogLeNet
# (Inception v1) test model that ships inside the onnx wheel (light_inception_v1.onnx).
#
#   bash scripts/demo.sh [MODEL.onnx]     # outputs in out/<model>/
#
# Today the job is the front end: import to onnx dialect IR, then constant folding and dead code
# elimination. Each step writes its IR, so every stage can be rerun alone with ramiel-opt.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# shellcheck disable=SC1091
. .venv/bin/activate
export ORT_DISABLE_TELEMETRY=1

model="${1:-$(python -c 'import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light", "light_inception_v1.onnx"))')}"
name="$(basename "$model" .onnx)"
out="out/$name"
mkdir -p "$out"

set -x
ramiel-translate --import-onnx "$model" -o "$out/$name.mlir"
ramiel-opt --constant-fold --dce "$out/$name.mlir" -o "$out/$name.clean.mlir"
{ set +x; } 2>/dev/null

count() { grep -o '"onnx\.[A-Za-z]*"' "$1" | sort | uniq -c | sort -rn | awk '{printf "%s%s %s", sep, $1, $2; sep=", "}'; }
echo
echo "imported:     $out/$name.mlir ($(wc -c <"$out/$name.mlir") bytes)"
echo "  ops: $(count "$out/$name.mlir")"
echo "cleaned up:   $out/$name.clean.mlir ($(wc -c <"$out/$name.clean.mlir") bytes)"
echo "  ops: $(count "$out/$name.clean.mlir")"
