// RUN: ramiel-opt %s --split-input-file --inplace | filecheck %s

// A Conv's result read only by its Relu, the residual Add read only by the Relu after it, and
// that Relu on the Add's (already overwritten) buffer: all three in place. The first Relu's
// result is read twice, so the Add overwrites the other operand (operand 1).
// CHECK-LABEL: func.func @resnet_block
// CHECK:         %r = "onnx.Relu"(%c) {ramiel.inplace = 0 : i64}
// CHECK:         %a = "onnx.Add"(%r, %c2) {ramiel.inplace = 1 : i64}
// CHECK:         %y = "onnx.Relu"(%a) {ramiel.inplace = 0 : i64}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @resnet_block(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = "onnx.Constant"() <{value = dense<0.5> : tensor<2x2x1x1xf32>}> : () -> tensor<2x2x1x1xf32>
  %c = "onnx.Conv"(%x, %w) <{kernel_shape = [1 : si64, 1 : si64]}> : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = "onnx.Relu"(%c) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %c2 = "onnx.Conv"(%r, %w) <{kernel_shape = [1 : si64, 1 : si64]}> : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %a = "onnx.Add"(%r, %c2) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = "onnx.Relu"(%a) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %y, %r : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
}

// -----

// Never in place: on a graph input (%r1), on a weight (%r2), on a view (%r3 of a Reshape), on a
// tensor that is also a graph output (%r4, %r5), on an operand a broadcast grows (%s2 in %sm).
// CHECK-LABEL: func.func @never
// CHECK-NOT:     ramiel.inplace
// CHECK:         func.return
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @never(%x: tensor<1x8xf32>, %s: tensor<1xf32>) -> (tensor<1x8xf32>, tensor<1x8xf32>, tensor<8xf32>, tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>) {
  %w = "onnx.Constant"() <{value = dense<0.5> : tensor<1x8xf32>}> : () -> tensor<1x8xf32>
  %shape = "onnx.Constant"() <{value = dense<8> : tensor<1xi64>}> : () -> tensor<1xi64>
  %r1 = "onnx.Relu"(%x) : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %r2 = "onnx.Relu"(%w) : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %m = "onnx.Mul"(%x, %x) : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %v = "onnx.Reshape"(%m, %shape) : (tensor<1x8xf32>, tensor<1xi64>) -> tensor<8xf32>
  %r3 = "onnx.Relu"(%v) : (tensor<8xf32>) -> tensor<8xf32>
  %m2 = "onnx.Mul"(%x, %x) : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %r4 = "onnx.Sigmoid"(%m2) : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %m3 = "onnx.Mul"(%x, %x) : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  %r5 = "onnx.Tanh"(%m3) : (tensor<1x8xf32>) -> tensor<1x8xf32>
  %s2 = "onnx.Mul"(%s, %s) : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
  %sm = "onnx.Add"(%s2, %x) : (tensor<1xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  func.return %r1, %r2, %r3, %r4, %m3, %sm, %m2 : tensor<1x8xf32>, tensor<1x8xf32>, tensor<8xf32>, tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>, tensor<1x8xf32>
}
}

// -----

// In a clustered program a tensor that crosses a channel is never overwritten: the sent Conv
// result has two uses (the send and the Relu), the received one has no producer here.
// CHECK-LABEL: func.func @clustered
// CHECK:         %r = "onnx.Relu"(%c) : (
// CHECK:         %r2 = "onnx.Relu"(%c_recv) : (
// CHECK:         %c3 = "onnx.Conv"
// CHECK-NEXT:    %r3 = "onnx.Relu"(%c3) {ramiel.inplace = 0 : i64}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @clustered(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = "onnx.Constant"() <{value = dense<0.5> : tensor<2x2x1x1xf32>}> : () -> tensor<2x2x1x1xf32>
  %a = "cluster.cluster"() <{sym_name = "c0"}> ({
    %c = "onnx.Conv"(%x, %w) <{kernel_shape = [1 : si64, 1 : si64]}> : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
    "cluster.send"(%c) <{channel = "c__c0_c1"}> : (tensor<1x2x4x4xf32>) -> ()
    %r = "onnx.Relu"(%c) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    "cluster.yield"(%r) : (tensor<1x2x4x4xf32>) -> ()
  }) : () -> tensor<1x2x4x4xf32>
  %b = "cluster.cluster"() <{sym_name = "c1"}> ({
    %c_recv = "cluster.recv"() <{channel = "c__c0_c1"}> : () -> tensor<1x2x4x4xf32>
    %r2 = "onnx.Relu"(%c_recv) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    %c3 = "onnx.Conv"(%r2, %w) <{kernel_shape = [1 : si64, 1 : si64]}> : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
    %r3 = "onnx.Relu"(%c3) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    "cluster.yield"(%r3) : (tensor<1x2x4x4xf32>) -> ()
  }) : () -> tensor<1x2x4x4xf32>
  func.return %a, %b : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
}

// -----

// ONNX Sum (the residual join of the zoo's ResNet-50): a two-input Sum overwrites the Conv's
// fresh result (operand 0; operand 1, the block input, is read twice), and the Relu after it
// overwrites the Sum's buffer. A one-input Sum is its input itself (the lowering returns it), so
// the Relu after %one is not in place; neither is a Sum whose inputs are both read elsewhere.
// CHECK-LABEL: func.func @sum_join
// CHECK:         %s = "onnx.Sum"(%c, %r) {ramiel.inplace = 0 : i64}
// CHECK:         %y = "onnx.Relu"(%s) {ramiel.inplace = 0 : i64}
// CHECK:         %one = "onnx.Sum"(%c3) :
// CHECK:         %z = "onnx.Relu"(%one) :
// CHECK:         %both = "onnx.Sum"(%y, %r) :
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @sum_join(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  %w = "onnx.Constant"() <{value = dense<0.5> : tensor<2x2x1x1xf32>}> : () -> tensor<2x2x1x1xf32>
  %r = "onnx.Relu"(%x) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %c = "onnx.Conv"(%r, %w) <{kernel_shape = [1 : si64, 1 : si64]}> : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %s = "onnx.Sum"(%c, %r) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %y = "onnx.Relu"(%s) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %c3 = "onnx.Conv"(%x, %w) <{kernel_shape = [1 : si64, 1 : si64]}> : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %one = "onnx.Sum"(%c3) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %z = "onnx.Relu"(%one) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %both = "onnx.Sum"(%y, %r) : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %y, %z, %both, %r, %c3 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}
}
