// --clone: copy a cheap producer (a pure data-movement op such as Reshape/Unsqueeze, or any op of
// at most max_cost_us) into a cluster that consumes it when that removes a transfer (14.2 µs
// here) without new ones and without lengthening the estimated makespan.
// RUN: ramiel-opt %s --split-input-file --clone | filecheck %s
// RUN: ramiel-opt %s --split-input-file --clone --dce | filecheck %s
// RUN: ramiel-opt %s --split-input-file '--clone{max_cost_us=12.0}' | filecheck %s --check-prefix=MAX12

// An Unsqueeze of a graph input feeds both clusters: c1 computes its own copy instead of
// receiving it; no channel is left for it.
// CHECK-LABEL: func.func @unsqueeze
// CHECK-NEXT:    %ax = "onnx.Constant"()
// CHECK-NEXT:    %0 = cluster.cluster @c0 -> tensor<1x4x4xf32> {
// CHECK-NEXT:      %u = "onnx.Unsqueeze"(%x, %ax)
// CHECK-NEXT:      %b1 = "onnx.Sigmoid"(%u)
// CHECK-NEXT:      %b2 = cluster.recv from "b2__c1_c0"
// CHECK-NEXT:      %j = "onnx.Add"(%b1, %b2)
// CHECK-NEXT:      cluster.yield %j
// CHECK-NEXT:    }
// CHECK-NEXT:    cluster.cluster @c1
// CHECK-NEXT:      %u_1 = "onnx.Unsqueeze"(%x, %ax) {onnx_node_name = "u"
// CHECK-NEXT:      %b2_1 = "onnx.Tanh"(%u_1)
// CHECK-NEXT:      cluster.send %b2_1 to "b2__c1_c0"
// CHECK-NEXT:      cluster.yield
// CHECK-NEXT:    }
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @unsqueeze(%x: tensor<4x4xf32>) -> tensor<1x4x4xf32> {
  %ax = "onnx.Constant"() <{value = dense<0> : tensor<1xi64>}> : () -> tensor<1xi64>
  %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
    %u = "onnx.Unsqueeze"(%x, %ax) {onnx_node_name = "u", ramiel.cost_us = 5.0 : f64} : (tensor<4x4xf32>, tensor<1xi64>) -> tensor<1x4x4xf32>
    "cluster.send"(%u) <{channel = "u"}> : (tensor<1x4x4xf32>) -> ()
    %b1 = "onnx.Sigmoid"(%u) {ramiel.cost_us = 300.0 : f64} : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %b2 = "cluster.recv"() <{channel = "b2"}> : () -> tensor<1x4x4xf32>
    %j = "onnx.Add"(%b1, %b2) {ramiel.cost_us = 10.0 : f64} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    "cluster.yield"(%j) : (tensor<1x4x4xf32>) -> ()
  }) : () -> tensor<1x4x4xf32>
  "cluster.cluster"() <{sym_name = "c1"}> ({
    %u1 = "cluster.recv"() <{channel = "u"}> : () -> tensor<1x4x4xf32>
    %b2 = "onnx.Tanh"(%u1) {ramiel.cost_us = 200.0 : f64} : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    "cluster.send"(%b2) <{channel = "b2"}> : (tensor<1x4x4xf32>) -> ()
    "cluster.yield"() : () -> ()
  }) : () -> ()
  func.return %0 : tensor<1x4x4xf32>
}
}

// -----

// A Reshape of a value c1 already receives moves to c1: the transfer of its result goes, and so
// does the original copy, which had no other user.
// CHECK-LABEL: func.func @reshape_moves
// CHECK:         %0 = cluster.cluster @c0
// CHECK-NEXT:      %a = "onnx.Relu"(%x)
// CHECK-NEXT:      cluster.send %a to "a__c0_c1"
// CHECK-NEXT:      %b = "onnx.Sigmoid"(%a)
// CHECK-NEXT:      %c = cluster.recv from "c__c1_c0"
// CHECK-NEXT:      %d = "onnx.Add"(%b, %c)
// CHECK-NEXT:      cluster.yield %d
// CHECK:         %1 = cluster.cluster @c1
// CHECK-NEXT:      %a_1 = cluster.recv from "a__c0_c1"
// CHECK-NEXT:      %c_1 = "onnx.Tanh"(%a_1)
// CHECK-NEXT:      cluster.send %c_1 to "c__c1_c0"
// CHECK-NEXT:      %r = "onnx.Reshape"(%a_1, %shape)
// CHECK-NEXT:      %e = "onnx.Neg"(%r)
// CHECK-NEXT:      cluster.yield %e
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @reshape_moves(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<16xf32>) {
  %shape = "onnx.Constant"() <{value = dense<16> : tensor<1xi64>}> : () -> tensor<1xi64>
  %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
    %a = "onnx.Relu"(%x) {ramiel.cost_us = 20.0 : f64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    "cluster.send"(%a) <{channel = "a"}> : (tensor<4x4xf32>) -> ()
    %r = "onnx.Reshape"(%a, %shape) {ramiel.cost_us = 5.0 : f64} : (tensor<4x4xf32>, tensor<1xi64>) -> tensor<16xf32>
    "cluster.send"(%r) <{channel = "r"}> : (tensor<16xf32>) -> ()
    %b = "onnx.Sigmoid"(%a) {ramiel.cost_us = 300.0 : f64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %c = "cluster.recv"() <{channel = "c"}> : () -> tensor<4x4xf32>
    %d = "onnx.Add"(%b, %c) {ramiel.cost_us = 10.0 : f64} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    "cluster.yield"(%d) : (tensor<4x4xf32>) -> ()
  }) : () -> tensor<4x4xf32>
  %1 = "cluster.cluster"() <{sym_name = "c1"}> ({
    %a1 = "cluster.recv"() <{channel = "a"}> : () -> tensor<4x4xf32>
    %c = "onnx.Tanh"(%a1) {ramiel.cost_us = 200.0 : f64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    "cluster.send"(%c) <{channel = "c"}> : (tensor<4x4xf32>) -> ()
    %r1 = "cluster.recv"() <{channel = "r"}> : () -> tensor<16xf32>
    %e = "onnx.Neg"(%r1) {ramiel.cost_us = 10.0 : f64} : (tensor<16xf32>) -> tensor<16xf32>
    "cluster.yield"(%e) : (tensor<16xf32>) -> ()
  }) : () -> tensor<16xf32>
  func.return %0, %1 : tensor<4x4xf32>, tensor<16xf32>
}
}

// -----

// A Reshape whose input c1 does not have is not cloned (that would only trade one transfer for
// another), and the clusters keep their order: the Reshape is still sent before the 300 µs
// Sigmoid, so c1 does not wait for it.
// CHECK-LABEL: func.func @reshape_stays
// CHECK:         %0 = cluster.cluster @c0
// CHECK-NEXT:      %a = "onnx.Relu"(%x)
// CHECK-NEXT:      %r = "onnx.Reshape"(%a, %shape)
// CHECK-NEXT:      cluster.send %r to "r__c0_c1"
// CHECK-NEXT:      %b = "onnx.Sigmoid"(%a)
// CHECK-NEXT:      cluster.yield %b
// CHECK:         %1 = cluster.cluster @c1
// CHECK-NEXT:      %r_1 = cluster.recv from "r__c0_c1"
// CHECK-NEXT:      %e = "onnx.Neg"(%r_1)
// CHECK-NEXT:      cluster.yield %e
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @reshape_stays(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<16xf32>) {
  %shape = "onnx.Constant"() <{value = dense<16> : tensor<1xi64>}> : () -> tensor<1xi64>
  %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
    %a = "onnx.Relu"(%x) {ramiel.cost_us = 20.0 : f64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %r = "onnx.Reshape"(%a, %shape) {ramiel.cost_us = 5.0 : f64} : (tensor<4x4xf32>, tensor<1xi64>) -> tensor<16xf32>
    "cluster.send"(%r) <{channel = "r"}> : (tensor<16xf32>) -> ()
    %b = "onnx.Sigmoid"(%a) {ramiel.cost_us = 300.0 : f64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    "cluster.yield"(%b) : (tensor<4x4xf32>) -> ()
  }) : () -> tensor<4x4xf32>
  %1 = "cluster.cluster"() <{sym_name = "c1"}> ({
    %r1 = "cluster.recv"() <{channel = "r"}> : () -> tensor<16xf32>
    %e = "onnx.Neg"(%r1) {ramiel.cost_us = 200.0 : f64} : (tensor<16xf32>) -> tensor<16xf32>
    "cluster.yield"(%e) : (tensor<16xf32>) -> ()
  }) : () -> tensor<16xf32>
  func.return %0, %1 : tensor<4x4xf32>, tensor<16xf32>
}
}

// -----

// A compute op is cloned only if it costs at most max_cost_us (default 10 µs) and less than the
// transfer it saves: the 12 µs Relu stays by default, is cloned with max_cost_us=12.
// CHECK-LABEL: func.func @threshold
// CHECK:         cluster.send %s to "s__c0_c1"
// CHECK:         cluster.cluster @c1
// CHECK-NEXT:      %s_1 = cluster.recv from "s__c0_c1"
// MAX12-LABEL: func.func @threshold
// MAX12:         %0 = cluster.cluster @c0
// MAX12-NEXT:      %s = "onnx.Relu"(%x)
// MAX12-NEXT:      %b1 = "onnx.Sigmoid"(%s)
// MAX12:         cluster.cluster @c1
// MAX12-NEXT:      %s_1 = "onnx.Relu"(%x)
// MAX12-NEXT:      %b2_1 = "onnx.Tanh"(%s_1)
// MAX12-NOT:     cluster.recv from "s__c0_c1"
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @threshold(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
    %s = "onnx.Relu"(%x) {ramiel.cost_us = 12.0 : f64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    "cluster.send"(%s) <{channel = "s"}> : (tensor<4x4xf32>) -> ()
    %b1 = "onnx.Sigmoid"(%s) {ramiel.cost_us = 300.0 : f64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    %b2 = "cluster.recv"() <{channel = "b2"}> : () -> tensor<4x4xf32>
    %j = "onnx.Add"(%b1, %b2) {ramiel.cost_us = 10.0 : f64} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    "cluster.yield"(%j) : (tensor<4x4xf32>) -> ()
  }) : () -> tensor<4x4xf32>
  "cluster.cluster"() <{sym_name = "c1"}> ({
    %s1 = "cluster.recv"() <{channel = "s"}> : () -> tensor<4x4xf32>
    %b2 = "onnx.Tanh"(%s1) {ramiel.cost_us = 200.0 : f64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
    "cluster.send"(%b2) <{channel = "b2"}> : (tensor<4x4xf32>) -> ()
    "cluster.yield"() : () -> ()
  }) : () -> ()
  func.return %0 : tensor<4x4xf32>
}
}

// -----

// A flat function (no clusters) is left unchanged.
// CHECK-LABEL: func.func @flat
// CHECK-NEXT:    %u = "onnx.Unsqueeze"(%x, %ax)
// CHECK-NEXT:    func.return %u
// CHECK-NOT:     cluster.cluster
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @flat(%x: tensor<4x4xf32>, %ax: tensor<1xi64>) -> tensor<1x4x4xf32> {
  %u = "onnx.Unsqueeze"(%x, %ax) {ramiel.cost_us = 5.0 : f64} : (tensor<4x4xf32>, tensor<1xi64>) -> tensor<1x4x4xf32>
  func.return %u : tensor<1x4x4xf32>
}
}
