// Round trip of the cluster dialect: parse, verify, print; the printed text parses back to itself.
// The first case is written in the generic form (which still parses), the others in the ops'
// custom assembly format.
// RUN: ramiel-opt %s --split-input-file | filecheck %s
// RUN: ramiel-opt %s --split-input-file | ramiel-opt --split-input-file | filecheck %s

// A diamond on two clusters: graph inputs and constants are used directly by every cluster,
// the tensors that cross clusters go through send/recv pairs, each cluster yields the graph
// outputs it computes (c1 computes none).
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%x: tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:    %w = "onnx.Constant"() <{value = dense<2.000000e+00> : tensor<1x4xf32>}> : () -> tensor<1x4xf32>
// CHECK-NEXT:    %0 = cluster.cluster @c0 -> tensor<1x4xf32> {
// CHECK-NEXT:      %a = "onnx.Mul"(%x, %w) {ramiel.cost_us = 1.000000e+01 : f64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
// CHECK-NEXT:      cluster.send %a to "a__c0_c1" : tensor<1x4xf32>
// CHECK-NEXT:      %b = "onnx.Sigmoid"(%a)
// CHECK-NEXT:      %c = cluster.recv from "c__c1_c0" : tensor<1x4xf32>
// CHECK-NEXT:      %d = "onnx.Add"(%b, %c)
// CHECK-NEXT:      cluster.yield %d : tensor<1x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    cluster.cluster @c1 {
// CHECK-NEXT:      %a_1 = cluster.recv from "a__c0_c1" : tensor<1x4xf32>
// CHECK-NEXT:      %c_1 = "onnx.Add"(%a_1, %w)
// CHECK-NEXT:      cluster.send %c_1 to "c__c1_c0" : tensor<1x4xf32>
// CHECK-NEXT:      cluster.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %0 : tensor<1x4xf32>
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %w = "onnx.Constant"() <{value = dense<2.0> : tensor<1x4xf32>}> : () -> tensor<1x4xf32>
  %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
    %a = "onnx.Mul"(%x, %w) {ramiel.cost_us = 10.0 : f64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    "cluster.send"(%a) <{channel = "a__c0_c1"}> : (tensor<1x4xf32>) -> ()
    %b = "onnx.Sigmoid"(%a) : (tensor<1x4xf32>) -> tensor<1x4xf32>
    %c = "cluster.recv"() <{channel = "c__c1_c0"}> : () -> tensor<1x4xf32>
    %d = "onnx.Add"(%b, %c) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    "cluster.yield"(%d) : (tensor<1x4xf32>) -> ()
  }) : () -> tensor<1x4xf32>
  "cluster.cluster"() <{sym_name = "c1"}> ({
    %a_1 = "cluster.recv"() <{channel = "a__c0_c1"}> : () -> tensor<1x4xf32>
    %c_1 = "onnx.Add"(%a_1, %w) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    "cluster.send"(%c_1) <{channel = "c__c1_c0"}> : (tensor<1x4xf32>) -> ()
    "cluster.yield"() : () -> ()
  }) : () -> ()
  func.return %0 : tensor<1x4xf32>
}
}

// -----

// A cluster may yield several graph outputs; the function returns them in graph order, which
// need not be the clusters' order.
// CHECK-LABEL: func.func @outputs
// CHECK:         %0, %1 = cluster.cluster @left -> tensor<2xf32>, tensor<2xf32> {
// CHECK:           cluster.yield %a, %b : tensor<2xf32>, tensor<2xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %2 = cluster.cluster @right -> tensor<2xf32> {
// CHECK:         func.return %1, %2, %0 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @outputs(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
    %0, %1 = cluster.cluster @left -> tensor<2xf32>, tensor<2xf32> {
      %a = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      %b = "onnx.Neg"(%a) : (tensor<2xf32>) -> tensor<2xf32>
      cluster.yield %a, %b : tensor<2xf32>, tensor<2xf32>
    }
    %2 = cluster.cluster @right -> tensor<2xf32> {
      %c = "onnx.Sigmoid"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      cluster.yield %c : tensor<2xf32>
    }
    func.return %1, %2, %0 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  }
}

// -----

// Channels form a pipeline over three clusters whose order is consistent with one global
// topological order even though c2 appears before c1 in the text: no deadlock.
// CHECK-LABEL: func.func @pipeline
// CHECK:         cluster.cluster @c0
// CHECK:         cluster.cluster @c2
// CHECK:         cluster.cluster @c1
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @pipeline(%x: tensor<2xf32>) -> tensor<2xf32> {
    cluster.cluster @c0 {
      %a = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
      cluster.send %a to "ab" : tensor<2xf32>
      cluster.yield
    }
    %0 = cluster.cluster @c2 -> tensor<2xf32> {
      %b = cluster.recv from "bc" : tensor<2xf32>
      %c = "onnx.Neg"(%b) : (tensor<2xf32>) -> tensor<2xf32>
      cluster.yield %c : tensor<2xf32>
    }
    cluster.cluster @c1 {
      %a_1 = cluster.recv from "ab" : tensor<2xf32>
      %b_1 = "onnx.Sigmoid"(%a_1) : (tensor<2xf32>) -> tensor<2xf32>
      cluster.send %b_1 to "bc" : tensor<2xf32>
      cluster.yield
    }
    func.return %0 : tensor<2xf32>
  }
}
