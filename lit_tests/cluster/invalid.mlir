// The cluster verifier: every channel has exactly one send and one recv of the same type, in
// different clusters; a cluster only uses its own values, the graph inputs and the constants;
// cluster names are unique; the program cannot deadlock. Errors point at the function's first
// cluster, where the whole program is checked.
// RUN: ramiel-opt --verify-diagnostics --split-input-file %s

// A recv whose channel nobody sends on.
// expected-error @+4 {{channel 'x1' is received by @c0 but never sent}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
    %a = "cluster.recv"() <{channel = "x1"}> : () -> tensor<2xf32>
    %b = "onnx.Relu"(%a) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.yield"(%b) : (tensor<2xf32>) -> ()
  }) : () -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
}

// -----

// A send nobody receives: a dangling channel.
// expected-error @+5 {{channel 'a__c0_c1' is sent by @c0 but never received}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
    %a = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.send"(%a) <{channel = "a__c0_c1"}> : (tensor<2xf32>) -> ()
    "cluster.yield"(%a) : (tensor<2xf32>) -> ()
  }) : () -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
}

// -----

// Two sends on one channel.
// expected-error @+10 {{channel 'a' has more than one cluster.send}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  "cluster.cluster"() <{sym_name = "c0"}> ({
    %a = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.send"(%a) <{channel = "a"}> : (tensor<2xf32>) -> ()
    "cluster.yield"() : () -> ()
  }) : () -> ()
  "cluster.cluster"() <{sym_name = "c1"}> ({
    %b = "onnx.Sigmoid"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.send"(%b) <{channel = "a"}> : (tensor<2xf32>) -> ()
    "cluster.yield"() : () -> ()
  }) : () -> ()
  %0 = "cluster.cluster"() <{sym_name = "c2"}> ({
    %r = "cluster.recv"() <{channel = "a"}> : () -> tensor<2xf32>
    "cluster.yield"(%r) : (tensor<2xf32>) -> ()
  }) : () -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
}

// -----

// Two receives on one channel (a tensor needed twice is received once and reused).
// expected-error @+10 {{channel 'a' has more than one cluster.recv}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  "cluster.cluster"() <{sym_name = "c0"}> ({
    %a = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.send"(%a) <{channel = "a"}> : (tensor<2xf32>) -> ()
    "cluster.yield"() : () -> ()
  }) : () -> ()
  %0 = "cluster.cluster"() <{sym_name = "c1"}> ({
    %r1 = "cluster.recv"() <{channel = "a"}> : () -> tensor<2xf32>
    %r2 = "cluster.recv"() <{channel = "a"}> : () -> tensor<2xf32>
    %s = "onnx.Add"(%r1, %r2) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    "cluster.yield"(%s) : (tensor<2xf32>) -> ()
  }) : () -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
}

// -----

// A channel that starts and ends in the same cluster.
// expected-error @+6 {{channel 'a' is sent and received in the same cluster}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
    %a = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.send"(%a) <{channel = "a"}> : (tensor<2xf32>) -> ()
    %r = "cluster.recv"() <{channel = "a"}> : () -> tensor<2xf32>
    "cluster.yield"(%r) : (tensor<2xf32>) -> ()
  }) : () -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
}

// -----

// A cluster that reads another cluster's value directly instead of receiving it.
// expected-error @+8 {{cluster @c1: onnx.Sigmoid uses a value defined in another cluster; it must arrive through cluster.recv}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
    %a = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.yield"(%a) : (tensor<2xf32>) -> ()
  }) : () -> tensor<2xf32>
  %1 = "cluster.cluster"() <{sym_name = "c1"}> ({
    %b = "onnx.Sigmoid"(%0) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.yield"(%b) : (tensor<2xf32>) -> ()
  }) : () -> tensor<2xf32>
  func.return %1 : tensor<2xf32>
}
}

// -----

// A compute op outside every cluster of a clustered function (no cluster would run it).
// expected-error @+3 {{onnx.Relu is outside every cluster}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %a = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
    %b = "onnx.Sigmoid"(%a) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.yield"(%b) : (tensor<2xf32>) -> ()
  }) : () -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
}

// -----

// A deadlock: each cluster waits for the other before it sends.
// expected-error @+3 {{the clustered program can deadlock: @c0 waits on channel 'b', @c1 waits on channel 'a'}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
    %rb = "cluster.recv"() <{channel = "b"}> : () -> tensor<2xf32>
    %a = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.send"(%a) <{channel = "a"}> : (tensor<2xf32>) -> ()
    %s = "onnx.Add"(%a, %rb) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    "cluster.yield"(%s) : (tensor<2xf32>) -> ()
  }) : () -> tensor<2xf32>
  %1 = "cluster.cluster"() <{sym_name = "c1"}> ({
    %ra = "cluster.recv"() <{channel = "a"}> : () -> tensor<2xf32>
    %b = "onnx.Sigmoid"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.send"(%b) <{channel = "b"}> : (tensor<2xf32>) -> ()
    %m = "onnx.Mul"(%b, %ra) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    "cluster.yield"(%m) : (tensor<2xf32>) -> ()
  }) : () -> tensor<2xf32>
  func.return %0, %1 : tensor<2xf32>, tensor<2xf32>
}
}

// -----

// Two clusters with the same name.
// expected-error @+7 {{duplicate cluster name @c0}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
    %a = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.yield"(%a) : (tensor<2xf32>) -> ()
  }) : () -> tensor<2xf32>
  %1 = "cluster.cluster"() <{sym_name = "c0"}> ({
    %b = "onnx.Sigmoid"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.yield"(%b) : (tensor<2xf32>) -> ()
  }) : () -> tensor<2xf32>
  func.return %0, %1 : tensor<2xf32>, tensor<2xf32>
}
}

// -----

// The received type differs from the sent one.
// expected-error @+9 {{channel 'a': received type tensor<3xf32> differs from sent tensor<2xf32>}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2xf32>) -> tensor<3xf32> {
  "cluster.cluster"() <{sym_name = "c0"}> ({
    %a = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.send"(%a) <{channel = "a"}> : (tensor<2xf32>) -> ()
    "cluster.yield"() : () -> ()
  }) : () -> ()
  %0 = "cluster.cluster"() <{sym_name = "c1"}> ({
    %r = "cluster.recv"() <{channel = "a"}> : () -> tensor<3xf32>
    "cluster.yield"(%r) : (tensor<3xf32>) -> ()
  }) : () -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
}

// -----

// A cluster must end with cluster.yield.
// expected-error @+3 {{cluster @c0 must end with cluster.yield}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  "cluster.cluster"() <{sym_name = "c0"}> ({
    %a = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  }) : () -> ()
  func.return %x : tensor<2xf32>
}
}

// -----

// The yielded values must match the cluster's result types.
// expected-error @+3 {{cluster @c0: yielded types differ from the cluster's results}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0, %1 = "cluster.cluster"() <{sym_name = "c0"}> ({
    %a = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.yield"(%a) : (tensor<2xf32>) -> ()
  }) : () -> (tensor<2xf32>, tensor<2xf32>)
  func.return %0 : tensor<2xf32>
}
}

// -----

// send/recv only live inside a cluster.
// expected-error @+3 {{'cluster.recv' expects parent op 'cluster.cluster'}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %r = "cluster.recv"() <{channel = "a"}> : () -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}
}

// -----

// Inside a cluster, ops run in block order: a value is used before its recv (what a clustering
// whose receives were placed in the wrong order would produce).
// expected-error @+9 {{cluster @c1: onnx.Neg uses a value before the op that defines it}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  "cluster.cluster"() <{sym_name = "c0"}> ({
    %a = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.send"(%a) <{channel = "a"}> : (tensor<2xf32>) -> ()
    "cluster.yield"() : () -> ()
  }) : () -> ()
  %0 = "cluster.cluster"() <{sym_name = "c1"}> ({
    %b = "onnx.Neg"(%r) : (tensor<2xf32>) -> tensor<2xf32>
    %r = "cluster.recv"() <{channel = "a"}> : () -> tensor<2xf32>
    "cluster.yield"(%b) : (tensor<2xf32>) -> ()
  }) : () -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
}

// -----

// A value a region captures is a dependence of the region op: an If in @c1 whose branch reads
// a value of @c0 directly (not through cluster.recv).
// expected-error @+8 {{cluster @c1: onnx.If uses a value defined in another cluster; it must arrive through cluster.recv}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2xf32>, %c: tensor<i1>) -> tensor<2xf32> {
  %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
    %a = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.yield"(%a) : (tensor<2xf32>) -> ()
  }) : () -> tensor<2xf32>
  %1 = "cluster.cluster"() <{sym_name = "c1"}> ({
    %r = "onnx.If"(%c) ({
      "onnx.Yield"(%0) : (tensor<2xf32>) -> ()
    }, {
      "onnx.Yield"(%x) : (tensor<2xf32>) -> ()
    }) : (tensor<i1>) -> tensor<2xf32>
    "cluster.yield"(%r) : (tensor<2xf32>) -> ()
  }) : () -> tensor<2xf32>
  func.return %1 : tensor<2xf32>
}
}

// -----

// A channel's buffer is sized at compile time: its type is static (and fits in memory).
// expected-error @+5 {{channel 'a__c0_c1': the tensor type tensor<?xf32> has a dynamic or negative dimension (?): shapes are static}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  "cluster.cluster"() <{sym_name = "c0"}> ({
    %a = "onnx.Relu"(%x) : (tensor<?xf32>) -> tensor<?xf32>
    "cluster.send"(%a) <{channel = "a__c0_c1"}> : (tensor<?xf32>) -> ()
    "cluster.yield"() : () -> ()
  }) : () -> ()
  %1 = "cluster.cluster"() <{sym_name = "c1"}> ({
    %b = "cluster.recv"() <{channel = "a__c0_c1"}> : () -> tensor<?xf32>
    "cluster.yield"(%b) : (tensor<?xf32>) -> ()
  }) : () -> tensor<?xf32>
  func.return %1 : tensor<?xf32>
}
}

// -----

// A malformed recv in a later cluster (no channel, an operand) is reported at the recv, before
// the program check (run from the first cluster) reads its channel (found by tests/test_fuzz.py).
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  "cluster.cluster"() <{sym_name = "c0"}> ({
    %a = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.send"(%a) <{channel = "a__c0_c1"}> : (tensor<2xf32>) -> ()
    "cluster.yield"() : () -> ()
  }) : () -> ()
  %1 = "cluster.cluster"() <{sym_name = "c1"}> ({
    // expected-error @+1 {{Expected 0 operands, but got 1}}
    %b = "cluster.recv"(%x) <{axis = 1 : si64}> : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.yield"(%b) : (tensor<2xf32>) -> ()
  }) : () -> tensor<2xf32>
  func.return %1 : tensor<2xf32>
}
}
