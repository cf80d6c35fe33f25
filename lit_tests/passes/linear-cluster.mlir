// --linear-cluster: peel the critical path (node costs ramiel.cost_us + edge transfer costs) of
// the unclustered graph into a cluster, repeatedly. Costs are given explicitly below (threads
// backend: a transfer of these tiny tensors costs 14.2 µs), or by --estimate-cost.
// RUN: ramiel-opt %s --split-input-file --linear-cluster 2>&1 | filecheck %s
// RUN: ramiel-opt %s --split-input-file --linear-cluster --linear-cluster 2>&1 | filecheck %s
// RUN: %not ramiel-opt %S/Inputs/cycle.mlir --linear-cluster 2>&1 | filecheck %s --check-prefix=CYCLE

// A chain has no parallelism: one cluster, the ops in order, no channel.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %0 = cluster.cluster @c0 -> tensor<1x4xf32> {
// CHECK-NEXT:      %a = "onnx.Relu"(%x)
// CHECK-NEXT:      %b = "onnx.Sigmoid"(%a)
// CHECK-NEXT:      %c = "onnx.Tanh"(%b)
// CHECK-NEXT:      cluster.yield %c
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %0
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @chain(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %a = "onnx.Relu"(%x) {ramiel.cost_us = 10.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %b = "onnx.Sigmoid"(%a) {ramiel.cost_us = 10.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %c = "onnx.Tanh"(%b) {ramiel.cost_us = 10.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %c : tensor<1x4xf32>
}
}

// -----

// A diamond a -> {b (100 µs), c (50 µs)} -> d: the critical path a, b, d is c0; c is c1. a is sent
// to c1 right after it is computed, c comes back right before d needs it.
// CHECK-LABEL: func.func @diamond
// CHECK-NEXT:    %0 = cluster.cluster @c0 -> tensor<1x4xf32> {
// CHECK-NEXT:      %a = "onnx.Relu"(%x)
// CHECK-NEXT:      cluster.send %a to "a__c0_c1"
// CHECK-NEXT:      %b = "onnx.Sigmoid"(%a)
// CHECK-NEXT:      %c = cluster.recv from "c__c1_c0"
// CHECK-NEXT:      %d = "onnx.Add"(%b, %c)
// CHECK-NEXT:      cluster.yield %d
// CHECK-NEXT:    }
// CHECK-NEXT:    cluster.cluster @c1
// CHECK-NEXT:      %a_1 = cluster.recv from "a__c0_c1"
// CHECK-NEXT:      %c_1 = "onnx.Tanh"(%a_1)
// CHECK-NEXT:      cluster.send %c_1 to "c__c1_c0"
// CHECK-NEXT:      cluster.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %0
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

// Fork-join of three branches of 100, 300 and 200 µs: the heaviest branch joins the critical
// path (c0), then the others are peeled by decreasing b-level: c1 = b3 (200), c2 = b1 (100).
// CHECK-LABEL: func.func @fork_join
// CHECK-NEXT:    %0 = cluster.cluster @c0
// CHECK-NEXT:      %s = "onnx.Relu"(%x)
// CHECK-NEXT:      cluster.send %s to "s__c0_c1"
// CHECK-NEXT:      cluster.send %s to "s__c0_c2"
// CHECK-NEXT:      %b2 = "onnx.Tanh"(%s)
// CHECK-NEXT:      %b1 = cluster.recv from "b1__c2_c0"
// CHECK-NEXT:      %b3 = cluster.recv from "b3__c1_c0"
// CHECK-NEXT:      %j = "onnx.Sum"(%b1, %b2, %b3)
// CHECK-NEXT:      cluster.yield %j
// CHECK:         cluster.cluster @c1
// CHECK-NEXT:      %s_1 = cluster.recv from "s__c0_c1"
// CHECK-NEXT:      %b3_1 = "onnx.Neg"(%s_1) {onnx_node_name = "b3"
// CHECK-NEXT:      cluster.send %b3_1 to "b3__c1_c0"
// CHECK:         cluster.cluster @c2
// CHECK-NEXT:      %s_2 = cluster.recv from "s__c0_c2"
// CHECK-NEXT:      %b1_1 = "onnx.Sigmoid"(%s_2) {onnx_node_name = "b1"
// CHECK-NEXT:      cluster.send %b1_1 to "b1__c2_c0"
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @fork_join(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %s = "onnx.Relu"(%x) {onnx_node_name = "split", ramiel.cost_us = 10.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %b1 = "onnx.Sigmoid"(%s) {onnx_node_name = "b1", ramiel.cost_us = 100.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %b2 = "onnx.Tanh"(%s) {onnx_node_name = "b2", ramiel.cost_us = 300.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %b3 = "onnx.Neg"(%s) {onnx_node_name = "b3", ramiel.cost_us = 200.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %j = "onnx.Sum"(%b1, %b2, %b3) {onnx_node_name = "join", ramiel.cost_us = 10.0 : f64} : (tensor<1x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %j : tensor<1x4xf32>
}
}

// -----

// Edge weights count: b (49.5 µs) outputs 4 MB, c (50 µs) a scalar. By node costs alone c is
// heavier, but b's edge to d costs 14.2 + 4194304 * 1.3e-7 = 14.745 µs against c's 14.2 µs, so
// the path through b is longer (98.99 vs 98.945 µs) and b joins the critical path; c is peeled
// alone.
// CHECK-LABEL: func.func @edge_weights
// CHECK-NEXT:    %0 = cluster.cluster @c0
// CHECK-NEXT:      %a = "onnx.Relu"(%x)
// CHECK-NEXT:      cluster.send %a to "a__c0_c1"
// CHECK-NEXT:      %b = "onnx.Sigmoid"(%a)
// CHECK-NEXT:      %c = cluster.recv from "c__c1_c0"
// CHECK-NEXT:      %d = "onnx.Add"(%b, %c)
// CHECK:         cluster.cluster @c1
// CHECK-NEXT:      %a_1 = cluster.recv from "a__c0_c1"
// CHECK-NEXT:      %c_1 = "onnx.ReduceSum"(%a_1)
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @edge_weights(%x: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %a = "onnx.Relu"(%x) {ramiel.cost_us = 10.0 : f64} : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %b = "onnx.Sigmoid"(%a) {ramiel.cost_us = 49.5 : f64} : (tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  %c = "onnx.ReduceSum"(%a) {ramiel.cost_us = 50.0 : f64} : (tensor<1024x1024xf32>) -> tensor<1x1xf32>
  %d = "onnx.Add"(%b, %c) {ramiel.cost_us = 10.0 : f64} : (tensor<1024x1024xf32>, tensor<1x1xf32>) -> tensor<1024x1024xf32>
  func.return %d : tensor<1024x1024xf32>
}
}

// A SqueezeNet fire module (fire2), costs from --estimate-cost. The 3x3 expand (748 µs) is on the
// critical path with the squeeze and the concat; the 1x1 expand and its Relu form c1.
// RUN: ramiel-opt %S/Inputs/fire.mlir --estimate-cost --linear-cluster | filecheck %s --check-prefix=FIRE
// FIRE:      %0 = cluster.cluster @c0 -> tensor<1x128x55x55xf32> {
// FIRE-NEXT:   %sq = "onnx.Conv"(%x, %ws, %bs) {{.*}}"fire2/squeeze1x1", ramiel.cost_us = 1.289040e+02
// FIRE-NEXT:   %sqr = "onnx.Relu"(%sq)
// FIRE-NEXT:   cluster.send %sqr to "sqr__c0_c1" : tensor<1x16x55x55xf32>
// FIRE-NEXT:   %e3 = "onnx.Conv"(%sqr, %we3, %be) {{.*}}"fire2/expand3x3", ramiel.cost_us = 7.484240e+02
// FIRE-NEXT:   %e3r = "onnx.Relu"(%e3)
// FIRE-NEXT:   %e1r = cluster.recv from "e1r__c1_c0" : tensor<1x64x55x55xf32>
// FIRE-NEXT:   %cat = "onnx.Concat"(%e1r, %e3r)
// FIRE-NEXT:   cluster.yield %cat
// FIRE-NEXT: }
// FIRE-NEXT: cluster.cluster @c1
// FIRE-NEXT:   %sqr_1 = cluster.recv from "sqr__c0_c1"
// FIRE-NEXT:   %e1 = "onnx.Conv"(%sqr_1, %we1, %be) {{.*}}"fire2/expand1x1", ramiel.cost_us = 8.760300e+01
// FIRE-NEXT:   %e1r_1 = "onnx.Relu"(%e1)
// FIRE-NEXT:   cluster.send %e1r_1 to "e1r__c1_c0"
// FIRE-NEXT:   cluster.yield

// An inception block (GoogLeNet 3a), costs from --estimate-cost: the 3x3 branch is the slowest
// (2707 µs), then the pooling branch (3x3 max pooling of 192 channels, 803 µs with the
// conversions to channels-last and back, and its 1x1 conv: 937 µs), the 5x5 branch (342 µs) and
// the 1x1 branch (262 µs): four clusters, one per branch, and the concat on the critical path.
// RUN: ramiel-opt %S/Inputs/inception.mlir --estimate-cost --linear-cluster | filecheck %s --check-prefix=INCEPTION
// INCEPTION:      %0 = cluster.cluster @c0
// INCEPTION-NEXT:   %b2a = "onnx.Conv"(%x, %w2a, %none)
// INCEPTION-NEXT:   %b2 = "onnx.Conv"(%b2a, %w2b, %none)
// INCEPTION-NEXT:   %b1 = cluster.recv from "b1__c3_c0"
// INCEPTION-NEXT:   %b3 = cluster.recv from "b3__c2_c0"
// INCEPTION-NEXT:   %b4 = cluster.recv from "b4__c1_c0"
// INCEPTION-NEXT:   %cat = "onnx.Concat"(%b1, %b2, %b3, %b4)
// INCEPTION:      cluster.cluster @c1
// INCEPTION-NEXT:   %b4a = "onnx.MaxPool"(%x)
// INCEPTION-NEXT:   %b4_1 = "onnx.Conv"(%b4a, %w4, %none)
// INCEPTION-NEXT:   cluster.send %b4_1 to "b4__c1_c0"
// INCEPTION:      cluster.cluster @c2
// INCEPTION-NEXT:   %b3a = "onnx.Conv"(%x, %w3a, %none)
// INCEPTION-NEXT:   %b3_1 = "onnx.Conv"(%b3a, %w3b, %none)
// INCEPTION-NEXT:   cluster.send %b3_1 to "b3__c2_c0"
// INCEPTION:      cluster.cluster @c3
// INCEPTION-NEXT:   %b1_1 = "onnx.Conv"(%x, %w1, %none)
// INCEPTION-NEXT:   cluster.send %b1_1 to "b1__c3_c0"

// -----

// One node: one cluster.
// CHECK-LABEL: func.func @one_node
// CHECK-NEXT:    %0 = cluster.cluster @c0 -> tensor<2xf32> {
// CHECK-NEXT:      %a = "onnx.Relu"(%x)
// CHECK-NEXT:      cluster.yield %a
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %0
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @one_node(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = "onnx.Relu"(%x) {ramiel.cost_us = 1.0 : f64} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %a : tensor<2xf32>
}
}

// -----

// Disconnected components: one cluster per chain, the longer one first; no channel at all.
// CHECK-LABEL: func.func @components
// CHECK-NEXT:    %0 = cluster.cluster @c0
// CHECK-NEXT:      %c = "onnx.Neg"(%y)
// CHECK-NEXT:      %d = "onnx.Exp"(%c)
// CHECK-NEXT:      cluster.yield %d
// CHECK:         %1 = cluster.cluster @c1
// CHECK-NEXT:      %a = "onnx.Relu"(%x)
// CHECK-NEXT:      %b = "onnx.Sigmoid"(%a)
// CHECK-NEXT:      cluster.yield %b
// CHECK:         func.return %1, %0
// CHECK-NOT:     cluster.send
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @components(%x: tensor<2xf32>, %y: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %a = "onnx.Relu"(%x) {ramiel.cost_us = 10.0 : f64} : (tensor<2xf32>) -> tensor<2xf32>
  %b = "onnx.Sigmoid"(%a) {ramiel.cost_us = 10.0 : f64} : (tensor<2xf32>) -> tensor<2xf32>
  %c = "onnx.Neg"(%y) {ramiel.cost_us = 10.0 : f64} : (tensor<2xf32>) -> tensor<2xf32>
  %d = "onnx.Exp"(%c) {ramiel.cost_us = 30.0 : f64} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %b, %d : tensor<2xf32>, tensor<2xf32>
}
}

// -----

// Ops without ramiel.cost_us fall back to the analytic model, with a warning.
// CHECK: warning: ops carry no ramiel.cost_us (run --estimate-cost first); using the analytic cost model
// CHECK-LABEL: func.func @no_costs
// CHECK:         cluster.cluster @c0
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @no_costs(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %a : tensor<2xf32>
}
}

// A cycle in textual IR uses a value before it is defined: the verifier rejects it where it
// starts, before any pass runs (the scheduler's own cycle check is for graphs built in Python).
// CYCLE: cycle.mlir:3:3: error: onnx.Add uses %b before the op that defines it
