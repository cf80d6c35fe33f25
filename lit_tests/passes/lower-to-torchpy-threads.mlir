// --lower-to-torchpy turns the ramiel.threads counts of --intra-op-threads into
// torchpy.set_threads: in a cluster function, one before the first op that has a count (the
// worker may still hold another count from the previous inference) and one before every op whose
// count differs from the one set last, never between ops with the same count; sends and receives
// keep the current count. The sequential module sets none (its caller chooses its threads), nor
// does a program whose ops carry no counts.
// RUN: ramiel-opt %s --split-input-file --lower-to-torchpy | filecheck %s
// RUN: ramiel-opt %s --split-input-file '--lower-to-torchpy{mode=sequential}' | filecheck %s --check-prefix=SEQ
// RUN: ramiel-opt %s --split-input-file '--merge{clusters=2}' --lower-to-torchpy | filecheck %s --check-prefix=DROPPED

// SEQ-NOT:     torchpy.set_threads
// DROPPED-NOT: torchpy.set_threads

// CHECK-LABEL: torchpy.func cluster @cluster_c0()
// CHECK-NEXT:    %x = torchpy.get from "input0__c0"
// CHECK-NEXT:    torchpy.set_threads 2 reason "this cluster's intra-op threads (--intra-op-threads)"
// CHECK-NEXT:    %s = torchpy.call torch.relu(%x)
// CHECK-NEXT:    %t = torchpy.call torch.exp(%s)
// CHECK-NEXT:    torchpy.put %t to "t__c0_c1"
// CHECK-NEXT:    torchpy.set_threads 1 reason "other clusters busy again"
// CHECK-NEXT:    %b1 = torchpy.call torch.sigmoid(%t)
// CHECK-NEXT:    %b2 = torchpy.get from "b2__c1_c0"
// CHECK-NEXT:    torchpy.set_threads 2 reason "other clusters idle: more intra-op threads"
// CHECK-NEXT:    %j = torchpy.call operator.add(%b1, %b2)
// CHECK-NEXT:    torchpy.put %j to "output0__out"
// CHECK-NEXT:    torchpy.return
// Cluster c1 sets its single count once, even when it is 1.
// CHECK-LABEL: torchpy.func cluster @cluster_c1()
// CHECK-NEXT:    %t = torchpy.get from "t__c0_c1"
// CHECK-NEXT:    torchpy.set_threads 1 reason "this cluster's intra-op threads (--intra-op-threads)"
// CHECK-NEXT:    %b2 = torchpy.call torch.tanh(%t)
// CHECK-NEXT:    %n = torchpy.call torch.neg(%b2)
// CHECK-NEXT:    torchpy.put %n to "b2__c1_c0"
// CHECK-NEXT:    torchpy.return
builtin.module attributes {onnx.opset = 17 : i64, ramiel.cores = 2 : i64} {
  func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
    %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
      %s = "onnx.Relu"(%x) {ramiel.cost_us = 1000.0 : f64, ramiel.threads = 2 : i64, ramiel.threaded_cost_us = 629.875 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
      %t = "onnx.Exp"(%s) {ramiel.cost_us = 1000.0 : f64, ramiel.threads = 2 : i64, ramiel.threaded_cost_us = 629.875 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
      "cluster.send"(%t) <{channel = "t__c0_c1"}> : (tensor<1x4xf32>) -> ()
      %b1 = "onnx.Sigmoid"(%t) {ramiel.cost_us = 2000.0 : f64, ramiel.threads = 1 : i64, ramiel.threaded_cost_us = 2000.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
      %b2 = "cluster.recv"() <{channel = "b2__c1_c0"}> : () -> tensor<1x4xf32>
      %j = "onnx.Add"(%b1, %b2) {ramiel.cost_us = 1000.0 : f64, ramiel.threads = 2 : i64, ramiel.threaded_cost_us = 629.875 : f64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
      "cluster.yield"(%j) : (tensor<1x4xf32>) -> ()
    }) : () -> tensor<1x4xf32>
    "cluster.cluster"() <{sym_name = "c1"}> ({
      %t_1 = "cluster.recv"() <{channel = "t__c0_c1"}> : () -> tensor<1x4xf32>
      %b2_1 = "onnx.Tanh"(%t_1) {ramiel.cost_us = 2000.0 : f64, ramiel.threads = 1 : i64, ramiel.threaded_cost_us = 2000.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
      %n = "onnx.Neg"(%b2_1) {ramiel.cost_us = 10.0 : f64, ramiel.threads = 1 : i64, ramiel.threaded_cost_us = 10.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
      "cluster.send"(%n) <{channel = "b2__c1_c0"}> : (tensor<1x4xf32>) -> ()
      "cluster.yield"() : () -> ()
    }) : () -> ()
    func.return %0 : tensor<1x4xf32>
  }
}

// -----

// Ops without counts (no --intra-op-threads): no set_threads.
// CHECK-LABEL: torchpy.func cluster @cluster_c0()
// CHECK-NOT:     torchpy.set_threads
// CHECK:         torchpy.return
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
    %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
      %s = "onnx.Relu"(%x) {ramiel.cost_us = 1000.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
      "cluster.yield"(%s) : (tensor<1x4xf32>) -> ()
    }) : () -> tensor<1x4xf32>
    func.return %0 : tensor<1x4xf32>
  }
}
