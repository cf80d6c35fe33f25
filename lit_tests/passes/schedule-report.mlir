// --schedule-report prints the schedule estimate of the current clustering on stderr and leaves
// the IR unchanged; json=FILE also writes it as JSON, quiet=true skips the text.
// RUN: ramiel-opt %s --split-input-file --linear-cluster --schedule-report 2>&1 >/dev/null | filecheck %s --check-prefix=LINEAR
// RUN: ramiel-opt %s --split-input-file '--merge{clusters=1}' --schedule-report 2>&1 >/dev/null | filecheck %s --check-prefix=SEQ
// RUN: ramiel-opt %s --split-input-file --schedule-report 2>&1 >/dev/null | filecheck %s --check-prefix=SEQ
// RUN: ramiel-opt %s --split-input-file --linear-cluster > %t.clustered.mlir
// RUN: ramiel-opt %s --split-input-file --linear-cluster --schedule-report 2>/dev/null | diff - %t.clustered.mlir
// RUN: ramiel-opt %S/Inputs/diamond.mlir --linear-cluster '--schedule-report{json="%t.json" quiet=true}' 2>&1 >/dev/null | filecheck %s --check-prefix=QUIET --allow-empty
// RUN: filecheck %s --check-prefix=JSON < %t.json

// The diamond a (10 µs) -> {b (100 µs), c (50 µs)} -> d (10 µs). Work W = 170 µs; the critical
// path a, b, d is CP = 120 µs. c1 gets a at 10 + 14.2 = 24.2 µs and returns c at 74.2 + 14.2 =
// 88.4 µs, before b ends at 110 µs: makespan 120 µs, speed-up 170 / 120 = 1.42.
// LINEAR:      cluster  ops  work_us  start_us  finish_us  xfer_in  bytes_in  xfer_out  bytes_out
// LINEAR-NEXT: -------
// LINEAR-NEXT: 0          3    120.0       0.0      120.0        1        16         1         16
// LINEAR-NEXT: 1          1     50.0      24.2       74.2        1        16         1         16
// LINEAR-EMPTY:
// LINEAR-NEXT: nodes             4 (4 copies)
// LINEAR-NEXT: clusters          2
// LINEAR-NEXT: work W            170.0 us (+0.0 us cloned)
// LINEAR-NEXT: critical path CP  120.0 us (computation only)
// LINEAR-NEXT: W/CP              1.42
// LINEAR-NEXT: est. makespan     120.0 us
// LINEAR-NEXT: est. speed-up     1.42x over sequential
// LINEAR-NEXT: transfers         2 (32 bytes, 28.4 us)
// The critical path a, b, d stays in cluster 0: no transfer delays the result.
// LINEAR-NEXT: transfer share    0.0 % of the makespan (0.0 us of transfers on the critical path)

// On one cluster (or flat, reported as one cluster) the makespan is W and the speed-up 1.
// SEQ:      0          4    170.0       0.0      170.0        0         0         0          0
// SEQ:      clusters          1
// SEQ-NEXT: work W            170.0 us (+0.0 us cloned)
// SEQ-NEXT: critical path CP  120.0 us (computation only)
// SEQ-NEXT: W/CP              1.42
// SEQ-NEXT: est. makespan     170.0 us
// SEQ-NEXT: est. speed-up     1.00x over sequential
// SEQ-NEXT: transfers         0 (0 bytes, 0.0 us)

// QUIET-NOT: {{.}}
// JSON:      "clusters": [
// JSON:        "index": 0,
// JSON-NEXT:   "ops": 3,
// JSON-NEXT:   "work_us": 120.0,
// JSON:        "index": 1,
// JSON-NEXT:   "ops": 1,
// JSON-NEXT:   "work_us": 50.0,
// JSON-NEXT:   "start_us": 24.2,
// JSON-NEXT:   "finish_us": 74.2,
// JSON:      "nodes": 4,
// JSON:      "work_us": 170.0,
// JSON:      "critical_path_us": 120.0,
// JSON-NEXT: "parallelism": 1.416
// JSON-NEXT: "makespan_us": 120.0,
// JSON-NEXT: "speedup": 1.416
// JSON-NEXT: "transfers": 2,
// JSON-NEXT: "transfer_bytes": 32,
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @diamond(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %a = "onnx.Relu"(%x) {ramiel.cost_us = 10.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %b = "onnx.Sigmoid"(%a) {ramiel.cost_us = 100.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %c = "onnx.Tanh"(%a) {ramiel.cost_us = 50.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %d = "onnx.Add"(%b, %c) {ramiel.cost_us = 10.0 : f64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %d : tensor<1x4xf32>
}
}

// -----

// Fork-join, branches 100, 300 and 200 µs. Linear clustering: one cluster per branch, makespan
// 10 + 300 + 10 = 320 µs = CP (W/CP = 620 / 320 = 1.94). Merged onto two workers, b1 and b3 run
// one after the other in c1 (24.2 + 300 = 324.2 µs, arriving at 338.4 µs): makespan 348.4 µs,
// speed-up 620 / 348.4 = 1.78.
// LINEAR:      0          3    320.0       0.0      320.0        2        32         2         32
// LINEAR-NEXT: 1          1    200.0      24.2      224.2        1        16         1         16
// LINEAR-NEXT: 2          1    100.0      24.2      124.2        1        16         1         16
// LINEAR:      clusters          3
// LINEAR-NEXT: work W            620.0 us (+0.0 us cloned)
// LINEAR-NEXT: critical path CP  320.0 us (computation only)
// LINEAR-NEXT: W/CP              1.94
// LINEAR-NEXT: est. makespan     320.0 us
// LINEAR-NEXT: est. speed-up     1.94x over sequential
// LINEAR-NEXT: transfers         4 (64 bytes, 56.8 us)
// RUN: ramiel-opt %s --split-input-file '--merge{clusters=2}' --schedule-report 2>&1 >/dev/null | filecheck %s --check-prefix=TWO
// TWO:      0          3    320.0       0.0      348.4        2        32         1         16
// TWO-NEXT: 1          2    300.0      24.2      324.2        1        16         2         32
// TWO:      clusters          2
// TWO:      W/CP              1.94
// TWO-NEXT: est. makespan     348.4 us
// TWO-NEXT: est. speed-up     1.78x over sequential
// TWO-NEXT: transfers         3 (48 bytes, 42.6 us)
// The join waits for c1's last branch, which waited for s: two transfers of 14.2 µs.
// TWO-NEXT: transfer share    8.2 % of the makespan (28.4 us of transfers on the critical path)
// SEQ:      0          5    620.0       0.0      620.0        0         0         0          0
// SEQ:      est. makespan     620.0 us
// SEQ-NEXT: est. speed-up     1.00x over sequential
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @fork_join(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %s = "onnx.Relu"(%x) {ramiel.cost_us = 10.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %b1 = "onnx.Sigmoid"(%s) {ramiel.cost_us = 100.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %b2 = "onnx.Tanh"(%s) {ramiel.cost_us = 300.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %b3 = "onnx.Neg"(%s) {ramiel.cost_us = 200.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %j = "onnx.Sum"(%b1, %b2, %b3) {ramiel.cost_us = 10.0 : f64} : (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %j : tensor<1x4xf32>
}
}

// -----

// A clone's work counts once in W and separately as cloned work; the copies are counted.
// RUN: ramiel-opt %S/Inputs/clone.mlir --schedule-report 2>&1 >/dev/null | filecheck %s --check-prefix=CLONE
// CLONE:      nodes             4 (4 copies)
// CLONE:      work W            515.0 us (+0.0 us cloned)
// RUN: ramiel-opt %S/Inputs/clone.mlir --clone --schedule-report 2>&1 >/dev/null | filecheck %s --check-prefix=CLONED
// CLONED:      nodes             4 (5 copies)
// CLONED:      work W            515.0 us (+5.0 us cloned)
// CLONED-NEXT: critical path CP  315.0 us (computation only)
// CLONED:      transfers         1 (64 bytes, 14.2 us)
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @one(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = "onnx.Relu"(%x) {ramiel.cost_us = 7.0 : f64} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %a : tensor<2xf32>
}
}

// -----

// The diamond where a message costs 100 µs (ramiel.transfer_cost, as --estimate-cost{transfer-cost=
// FILE} sets it): linear clustering keeps a, b, d (320 µs with transfers) and sends a to c1; c
// arrives back at 10 + 100 + 50 + 100 = 260 µs, so d ends at 270 µs, 200 µs of it transfers.
// RUN: ramiel-opt %s --split-input-file --linear-cluster --schedule-report 2>&1 >/dev/null | filecheck %s --check-prefix=SLOW
// SLOW-LABEL: est. makespan     270.0 us
// SLOW:       transfer share    74.1 % of the makespan (200.0 us of transfers on the critical path)
builtin.module attributes {onnx.opset = 17 : i64, ramiel.transfer_cost = [100.0 : f64, 0.0 : f64]} {
func.func @slow_diamond(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %a = "onnx.Relu"(%x) {ramiel.cost_us = 10.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %b = "onnx.Sigmoid"(%a) {ramiel.cost_us = 100.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %c = "onnx.Tanh"(%a) {ramiel.cost_us = 50.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %d = "onnx.Add"(%b, %c) {ramiel.cost_us = 10.0 : f64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %d : tensor<1x4xf32>
}
}
