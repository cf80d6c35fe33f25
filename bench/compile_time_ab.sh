#!/bin/bash
# Compile time A/B of two checkouts, alternating, each compile in its own process.
#   bash bench/compile_time_ab.sh OLD_CHECKOUT [NEW_CHECKOUT] [ROUNDS]
# OLD_CHECKOUT: e.g. `git worktree add /tmp/old <commit>`; NEW_CHECKOUT: default this one.
# Compiles hf_bert (exported into ramiel's model cache) statically and with --dynamic-batch;
# prints wall seconds and peak resident KB per compile (/usr/bin/time), with the load average.
set -euo pipefail
OLD=${1:?old checkout}
NEW=${2:-$(cd "$(dirname "$0")/.." && pwd)}
ROUNDS=${3:-3}
export ORT_DISABLE_TELEMETRY=1
S=$(python -c "from ramiel.models import export_model; print(export_model('hf_bert'))")
D=$(python -c "from ramiel.models import export_model; print(export_model('hf_bert', dynamic_batch=True))")
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
cd "$OUT"  # python -m puts the current directory first on sys.path: not a checkout
echo "# $(date -u +%Y-%m-%dT%H:%M) load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$ROUNDS"); do
  for which in old new; do
    if [ "$which" = old ]; then PP=$OLD; else PP=$NEW; fi
    for mode in static dynamic; do
      if [ "$mode" = static ]; then args=("$S"); else args=("$D" --dynamic-batch); fi
      rm -rf "$OUT/x"
      /usr/bin/time -f "$which $mode %e s %M KB" -o "$OUT/time" \
        env PYTHONPATH="$PP" python -m tools.driver compile "${args[@]}" -o "$OUT/x" > /dev/null 2>&1
      cat "$OUT/time"
    done
  done
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
