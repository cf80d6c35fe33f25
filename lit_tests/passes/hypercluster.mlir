// --hypercluster{batch=B}: the program for B samples. The per-sample graph is replicated B times
// (graph inputs/outputs <name>__s<k>, values <name>_s<k>, node names <name>@s<k>); constants are
// shared; the module records ramiel.batch.
// RUN: ramiel-opt %s --split-input-file '--hypercluster{batch=2}' | filecheck %s
// RUN: ramiel-opt %s --split-input-file '--hypercluster{batch=1}' | filecheck %s --check-prefix=ONE
// RUN: ramiel-opt %s --split-input-file '--hypercluster{batch=3}' | filecheck %s --check-prefix=THREE
// RUN: ramiel-opt %s --split-input-file '--hypercluster{batch=2}' --estimate-cost '--merge{clusters=2}' | filecheck %s --check-prefix=MERGED
// RUN: ramiel-opt %s --split-input-file '--hypercluster{batch=2}' --linear-cluster --lower-to-torchpy 2>/dev/null | filecheck %s --check-prefix=LOWERED
// RUN: %not ramiel-opt %s --split-input-file '--hypercluster{batch=0}' 2>&1 | filecheck %s --check-prefix=ZERO

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
// MERGED:      %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
// MERGED-NEXT:   %a_s0 = "onnx.Mul"(%x_s0, %w)
// MERGED-NEXT:   %y_s0 = "onnx.Relu"(%a_s0)
// MERGED-NEXT:   "cluster.yield"(%y_s0)
// MERGED:      %1 = "cluster.cluster"() <{sym_name = "c1"}> ({
// MERGED-NEXT:   %a_s1 = "onnx.Mul"(%x_s1, %w)
// MERGED-NEXT:   %y_s1 = "onnx.Relu"(%a_s1)
// MERGED-NEXT:   "cluster.yield"(%y_s1)
// MERGED:      func.return %0, %1
// MERGED-NOT:  cluster.send

// The generated program takes B inputs and returns B outputs.
// LOWERED: "torchpy.program"() <{sym_name = "main", inputs = [["x__s0__c0"], ["x__s1__c1"]], outputs = ["y__s0__out", "y__s1__out"], input_order = ["x__s0", "x__s1"], output_order = ["y__s0", "y__s1"]}>

// ZERO: error: hypercluster: batch must be at least 1, got 0
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
