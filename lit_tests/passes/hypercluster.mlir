// --hypercluster{batch=B}: the program for B samples. The per-sample graph is replicated B times
// (graph inputs/outputs <name>__s<k>, values <name>_s<k>, node names <name>@s<k>); constants are
// shared; the module records ramiel.batch.
// RUN: ramiel-opt %s --split-input-file '--hypercluster{batch=2}' | filecheck %s
// RUN: ramiel-opt %s --split-input-file '--hypercluster{batch=1}' | filecheck %s --check-prefix=ONE
// RUN: ramiel-opt %s --split-input-file '--hypercluster{batch=3}' | filecheck %s --check-prefix=THREE
// RUN: ramiel-opt %s --split-input-file '--hypercluster{batch=2}' --estimate-cost '--merge{clusters=2}' | filecheck %s --check-prefix=MERGED
// RUN: ramiel-opt %s --split-input-file '--hypercluster{batch=2}' --linear-cluster --lower-to-torchpy 2>/dev/null | filecheck %s --check-prefix=LOWERED
// RUN: %not ramiel-opt %s --split-input-file '--hypercluster{batch=0}' 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: %not ramiel-opt %s --split-input-file '--hypercluster{batch=100000}' 2>&1 | filecheck %s --check-prefix=HUGE
// RUN: %not ramiel-opt %s --split-input-file -p 'hypercluster{batch=2},hypercluster{batch=2}' 2>&1 | filecheck %s --check-prefix=TWICE
// The clustering passes on the B-sample graph mix the samples in the workers (@diamond below):
// RUN: ramiel-opt %s --split-input-file -p 'hypercluster{batch=2},linear-cluster,merge{clusters=2}' 2>/dev/null | filecheck %s --check-prefix=PIPE2
// RUN: ramiel-opt %s --split-input-file -p 'hypercluster{batch=3},linear-cluster,merge{clusters=2}' 2>/dev/null | filecheck %s --check-prefix=PIPE3
// RUN: ramiel-opt %s --split-input-file -p 'hypercluster{batch=3},linear-cluster,merge{clusters=2},schedule-report' -o %t 2>&1 | filecheck %s --check-prefix=REPORT3

// CHECK:      builtin.module attributes {onnx.opset = 17 : i64, ramiel.batch = 2 : i64} {
// CHECK-NEXT:   func.func @main(%x_s0: tensor<1x4xf32> {onnx.name = "x__s0"}, %x_s1: tensor<1x4xf32> {onnx.name = "x__s1"}) -> (tensor<1x4xf32> {onnx.name = "y__s0"}, tensor<1x4xf32> {onnx.name = "y__s1"}) {
// CHECK-NEXT:     %w = "onnx.Constant"()
// CHECK-NEXT:     %a_s0 = "onnx.Mul"(%x_s0, %w) {onnx_node_name = "mul@s0"}
// CHECK-NEXT:     %y_s0 = "onnx.Relu"(%a_s0) {onnx_node_name = "relu@s0"}
// CHECK-NEXT:     %a_s1 = "onnx.Mul"(%x_s1, %w) {onnx_node_name = "mul@s1"}
// CHECK-NEXT:     %y_s1 = "onnx.Relu"(%a_s1) {onnx_node_name = "relu@s1"}
// CHECK-NEXT:     func.return %y_s0, %y_s1
// CHECK-NOT:    "onnx.Constant"

// batch=1 leaves the program unchanged.
// ONE:      builtin.module attributes {onnx.opset = 17 : i64} {
// ONE-NEXT:   func.func @main(%x: tensor<1x4xf32> {onnx.name = "x"}) -> (tensor<1x4xf32> {onnx.name = "y"}) {
// ONE-NEXT:     %w = "onnx.Constant"()
// ONE-NEXT:     %a = "onnx.Mul"(%x, %w) {onnx_node_name = "mul"}
// ONE-NEXT:     %y = "onnx.Relu"(%a) {onnx_node_name = "relu"}
// ONE-NEXT:     func.return %y

// THREE: func.func @main(%x_s0: {{.*}}, %x_s1: {{.*}}, %x_s2: tensor<1x4xf32> {onnx.name = "x__s2"}) -> ({{.*}}, {{.*}}, tensor<1x4xf32> {onnx.name = "y__s2"})
// THREE-COUNT-3: "onnx.Mul"
// THREE-NOT:     "onnx.Mul"

// The samples are independent, so two workers take one sample each, no channel between them.
// MERGED:      %0 = cluster.cluster @c0
// MERGED-NEXT:   %a_s0 = "onnx.Mul"(%x_s0, %w)
// MERGED-NEXT:   %y_s0 = "onnx.Relu"(%a_s0)
// MERGED-NEXT:   cluster.yield %y_s0
// MERGED:      %1 = cluster.cluster @c1
// MERGED-NEXT:   %a_s1 = "onnx.Mul"(%x_s1, %w)
// MERGED-NEXT:   %y_s1 = "onnx.Relu"(%a_s1)
// MERGED-NEXT:   cluster.yield %y_s1
// MERGED:      func.return %0, %1
// MERGED-NOT:  cluster.send

// The generated program takes B inputs and returns B outputs.
// LOWERED: torchpy.program @main inputs [["x__s0__c0"], ["x__s1__c1"]] outputs ["y__s0__out", "y__s1__out"] input_order ["x__s0", "x__s1"] output_order ["y__s0", "y__s1"]

// ZERO: error: hypercluster: batch must be from 1 to 1024, got 0
// HUGE: error: hypercluster: batch must be from 1 to 1024, got 100000
// Hyperclustering a module twice is an error too (one line, no traceback).
// TWICE:     error: hypercluster: the module is already the program for 2 samples (ramiel.batch); hypercluster the batch-1 module instead
// TWICE-NOT: Traceback
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<1x4xf32> {onnx.name = "x"}) -> (tensor<1x4xf32> {onnx.name = "y"}) {
  %w = "onnx.Constant"() <{value = dense<2.0> : tensor<1x4xf32>}> : () -> tensor<1x4xf32>
  %a = "onnx.Mul"(%x, %w) {onnx_node_name = "mul"} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %y = "onnx.Relu"(%a) {onnx_node_name = "relu"} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %y : tensor<1x4xf32>
}
}

// -----

// A clustered input is flattened first: every op of the diamond appears once per sample, in a
// flat function, and the send/recv pairs are gone.
// CHECK:      func.func @main(%x_s0: tensor<2xf32> {onnx.name = "input0__s0"}, %x_s1: tensor<2xf32> {onnx.name = "input0__s1"})
// CHECK-NEXT:   %a_s0 = "onnx.Relu"(%x_s0)
// CHECK-NEXT:   %b_s0 = "onnx.Neg"(%a_s0)
// CHECK-NEXT:   %a_s1 = "onnx.Relu"(%x_s1)
// CHECK-NEXT:   %b_s1 = "onnx.Neg"(%a_s1)
// CHECK-NEXT:   func.return %b_s0, %b_s1
// CHECK-NOT:  cluster.
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  "cluster.cluster"() <{sym_name = "c0"}> ({
    %a = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.send"(%a) <{channel = "a"}> : (tensor<2xf32>) -> ()
    "cluster.yield"() : () -> ()
  }) : () -> ()
  %0 = "cluster.cluster"() <{sym_name = "c1"}> ({
    %r = "cluster.recv"() <{channel = "a"}> : () -> tensor<2xf32>
    %b = "onnx.Neg"(%r) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.yield"(%b) : (tensor<2xf32>) -> ()
  }) : () -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
}

// -----

// Several inputs and outputs, grouped by sample: an output that is a graph input returns that
// sample's argument; an output that is a constant returns the one shared constant; onnx.NoValue is
// shared too. Other argument attributes are kept; unnamed inputs/outputs get input<i>/output<i>.
// CHECK-LABEL: func.func @multi(
// CHECK-SAME:      %a_s0: tensor<2xf32> {onnx.name = "a__s0", test.keep = 1 : i64}, %b_s0: tensor<2xf32> {onnx.name = "input1__s0"},
// CHECK-SAME:      %a_s1: tensor<2xf32> {onnx.name = "a__s1", test.keep = 1 : i64}, %b_s1: tensor<2xf32> {onnx.name = "input1__s1"})
// CHECK-SAME:      -> (tensor<2xf32> {onnx.name = "m__s0"}, tensor<2xf32> {onnx.name = "a__s0"}, tensor<2xf32> {onnx.name = "output2__s0"},
// CHECK-SAME:          tensor<2xf32> {onnx.name = "m__s1"}, tensor<2xf32> {onnx.name = "a__s1"}, tensor<2xf32> {onnx.name = "output2__s1"})
// CHECK-NEXT:      %c = "onnx.Constant"()
// CHECK-NEXT:      %none = "onnx.NoValue"()
// CHECK-NEXT:      %m_s0 = "onnx.Sub"(%a_s0, %b_s0)
// CHECK-NEXT:      %k_s0 = "onnx.Clip"(%m_s0, %none, %none)
// CHECK-NEXT:      %m_s1 = "onnx.Sub"(%a_s1, %b_s1)
// CHECK-NEXT:      %k_s1 = "onnx.Clip"(%m_s1, %none, %none)
// CHECK-NEXT:      func.return %k_s0, %a_s0, %c, %k_s1, %a_s1, %c :
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @multi(%a: tensor<2xf32> {onnx.name = "a", test.keep = 1 : i64}, %b: tensor<2xf32>) -> (tensor<2xf32> {onnx.name = "m"}, tensor<2xf32> {onnx.name = "a"}, tensor<2xf32>) {
  %c = "onnx.Constant"() <{value = dense<2.0> : tensor<2xf32>}> : () -> tensor<2xf32>
  %none = "onnx.NoValue"() : () -> none
  %m = "onnx.Sub"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %k = "onnx.Clip"(%m, %none, %none) : (tensor<2xf32>, none, none) -> tensor<2xf32>
  func.return %k, %a, %c : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
}

// -----

// A clustered diamond (branch c on c1, sent back to c0): each receive becomes the sent value, and
// costs already estimated stay on every copy.
// CHECK-LABEL: func.func @clustered(
// CHECK-SAME:      %x_s0: tensor<1x4xf32> {onnx.name = "x__s0"}, %x_s1: tensor<1x4xf32> {onnx.name = "x__s1"}
// CHECK-NOT:       cluster.
// CHECK:           %a_s0 = "onnx.Relu"(%x_s0) {onnx_node_name = "a@s0", ramiel.cost_us = 2.000000e+01 : f64}
// CHECK-DAG:       %[[B0:.*]] = "onnx.Sigmoid"(%a_s0) {onnx_node_name = "b@s0"
// CHECK-DAG:       %[[C0:.*]] = "onnx.Tanh"(%a_s0) {onnx_node_name = "c@s0"
// CHECK:           %d_s0 = "onnx.Add"(%[[B0]], %[[C0]]) {onnx_node_name = "d@s0"
// CHECK:           %d_s1 = "onnx.Add"({{.*}}) {onnx_node_name = "d@s1"
// CHECK-NOT:       cluster.
// CHECK:           func.return %d_s0, %d_s1 :
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @clustered(%x: tensor<1x4xf32> {onnx.name = "x"}) -> (tensor<1x4xf32> {onnx.name = "y"}) {
  %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
    %a = "onnx.Relu"(%x) {onnx_node_name = "a", ramiel.cost_us = 20.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
    "cluster.send"(%a) <{channel = "a__c0_c1"}> : (tensor<1x4xf32>) -> ()
    %b = "onnx.Sigmoid"(%a) {onnx_node_name = "b", ramiel.cost_us = 100.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
    %c = "cluster.recv"() <{channel = "c__c1_c0"}> : () -> tensor<1x4xf32>
    %d = "onnx.Add"(%b, %c) {onnx_node_name = "d", ramiel.cost_us = 10.0 : f64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    "cluster.yield"(%d) : (tensor<1x4xf32>) -> ()
  }) : () -> tensor<1x4xf32>
  "cluster.cluster"() <{sym_name = "c1"}> ({
    %a_1 = "cluster.recv"() <{channel = "a__c0_c1"}> : () -> tensor<1x4xf32>
    %c_1 = "onnx.Tanh"(%a_1) {onnx_node_name = "c", ramiel.cost_us = 100.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
    "cluster.send"(%c_1) <{channel = "c__c1_c0"}> : (tensor<1x4xf32>) -> ()
    "cluster.yield"() : () -> ()
  }) : () -> ()
  func.return %0 : tensor<1x4xf32>
}
}

// -----

// The diamond a -> {b, c} -> d (10, 100, 100, 10 µs) on two workers. At batch 1 the branches run
// in parallel; with two samples, linear clustering and merging on the replicated graph give each
// worker one whole sample and no transfer (W/2 = 220 µs; splitting the branches would pay two
// transfers per sample).
// PIPE2-LABEL: func.func @diamond
// PIPE2:         cluster.cluster @c0
// PIPE2-NEXT:      %a_s0 = "onnx.Relu"(%x_s0)
// PIPE2-NEXT:      %b_s0 = "onnx.Sigmoid"(%a_s0)
// PIPE2-NEXT:      %c_s0 = "onnx.Tanh"(%a_s0)
// PIPE2-NEXT:      %d_s0 = "onnx.Add"(%b_s0, %c_s0)
// PIPE2-NEXT:      cluster.yield %d_s0
// PIPE2:         cluster.cluster @c1
// PIPE2-NEXT:      %a_s1 = "onnx.Relu"(%x_s1)
// PIPE2-NEXT:      %b_s1 = "onnx.Sigmoid"(%a_s1)
// PIPE2-NEXT:      %c_s1 = "onnx.Tanh"(%a_s1)
// PIPE2-NEXT:      %d_s1 = "onnx.Add"(%b_s1, %c_s1)
// PIPE2-NEXT:      cluster.yield %d_s1
// PIPE2-NOT:     cluster.send

// With three samples, whole samples would leave one worker idle for a third of the time
// (440 µs); instead sample 0's branches are split over both workers (c computed on c1 and sent
// back) and interleaved with samples 2 (on c0) and 1 (on c1): 340 µs, close to W/2 = 330 µs.
// PIPE3-LABEL: func.func @diamond
// PIPE3:         cluster.cluster @c0
// PIPE3-NEXT:      %a_s0 = "onnx.Relu"(%x_s0)
// PIPE3-NEXT:      cluster.send %a_s0 to "a_s0__c0_c1"
// PIPE3-NEXT:      %a_s2 = "onnx.Relu"(%x_s2)
// PIPE3-NEXT:      %b_s0 = "onnx.Sigmoid"(%a_s0)
// PIPE3-NEXT:      %b_s2 = "onnx.Sigmoid"(%a_s2)
// PIPE3-NEXT:      %c_s2 = "onnx.Tanh"(%a_s2)
// PIPE3-NEXT:      %c_s0 = cluster.recv from "c_s0__c1_c0"
// PIPE3-NEXT:      %d_s0 = "onnx.Add"(%b_s0, %c_s0)
// PIPE3-NEXT:      %d_s2 = "onnx.Add"(%b_s2, %c_s2)
// PIPE3-NEXT:      cluster.yield %d_s0, %d_s2
// PIPE3:         cluster.cluster @c1
// PIPE3-NEXT:      %a_s1 = "onnx.Relu"(%x_s1)
// PIPE3-NEXT:      %b_s1 = "onnx.Sigmoid"(%a_s1)
// PIPE3-NEXT:      %a_s0_1 = cluster.recv from "a_s0__c0_c1"
// PIPE3-NEXT:      %c_s0_1 = "onnx.Tanh"(%a_s0_1)
// PIPE3-NEXT:      cluster.send %c_s0_1 to "c_s0__c1_c0"
// PIPE3-NEXT:      %c_s1 = "onnx.Tanh"(%a_s1)
// PIPE3-NEXT:      %d_s1 = "onnx.Add"(%b_s1, %c_s1)
// PIPE3-NEXT:      cluster.yield %d_s1
// The results are still in sample order: y__s0 and y__s2 come from c0, y__s1 from c1.
// PIPE3:         func.return %0, %2, %1 :

// The schedule report shows the estimate of the three-sample program.
// REPORT3:      work W            660.0 us
// REPORT3-NEXT: critical path CP  120.0 us
// REPORT3-NEXT: W/CP              5.50
// REPORT3-NEXT: est. makespan     340.0 us
// REPORT3:      transfers         2 (32 bytes, 28.4 us)
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @diamond(%x: tensor<1x4xf32> {onnx.name = "x"}) -> (tensor<1x4xf32> {onnx.name = "y"}) {
  %a = "onnx.Relu"(%x) {onnx_node_name = "a", ramiel.cost_us = 10.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %b = "onnx.Sigmoid"(%a) {onnx_node_name = "b", ramiel.cost_us = 100.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %c = "onnx.Tanh"(%a) {onnx_node_name = "c", ramiel.cost_us = 100.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %d = "onnx.Add"(%b, %c) {onnx_node_name = "d", ramiel.cost_us = 10.0 : f64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %d : tensor<1x4xf32>
}
}
