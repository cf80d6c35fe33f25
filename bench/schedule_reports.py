"""Schedule reports of zoo models for 2 and 12 workers (issue 3's checked-in estimates).

    python bench/schedule_reports.py            # writes bench/results/schedule_reports.txt

For each model: import, --constant-fold --dce, --estimate-cost (the analytic cost model; costs
in µs), --linear-cluster, --merge{clusters=P}, then the schedule report (W, CP, W/CP, estimated
makespan and speed-up over sequential). These are estimates of the cost model, not measurements
(measured speed-ups are in docs/benchmarks.md).
"""

from __future__ import annotations

import datetime
import os
import sys
import tempfile

import onnx

from ramiel.context import make_context
from ramiel.importer import ImportOptions, import_onnx
from ramiel.passes.constant_fold import ConstantFold
from ramiel.passes.dce import DeadCodeElimination
from ramiel.passes.estimate_cost import EstimateCost
from ramiel.passes.linear_cluster import LinearCluster
from ramiel.passes.merge import Merge
from ramiel.passes.schedule_report import schedule_report
from ramiel.pipeline import run_passes

MODELS = ("light_inception_v1", "light_inception_v2", "light_squeezenet")
WORKERS = (2, 12)


def main() -> None:
    zoo = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data", "light")
    out = [
        f"# Schedule reports (estimates), {datetime.date.today().isoformat()}",
        "# command: python bench/schedule_reports.py",
        "",
    ]
    with tempfile.TemporaryDirectory() as d:
        ctx = make_context(d)
        for name in MODELS:
            for p in WORKERS:
                m = import_onnx(
                    os.path.join(zoo, f"{name}.onnx"),
                    ImportOptions(
                        weights_path=os.path.join(d, "w.safetensors"), weights_ref="w.safetensors"
                    ),
                )
                run_passes(
                    m,
                    [
                        ConstantFold(),
                        DeadCodeElimination(),
                        EstimateCost(),
                        LinearCluster(),
                        Merge(clusters=p),
                    ],
                    ctx,
                )
                r = schedule_report(m)
                out.append(
                    f"## {name}, merge{{clusters={p}}}: W/CP {r.parallelism:.2f}, "
                    f"estimated speed-up {r.speedup:.2f}x over sequential"
                )
                out.append(r.to_text())
                out.append("")
    text = "\n".join(out)
    path = os.path.join(os.path.dirname(__file__), "results", "schedule_reports.txt")
    with open(path, "w") as f:
        f.write(text + "\n")
    sys.stdout.write(text + "\n")


if __name__ == "__main__":
    main()
