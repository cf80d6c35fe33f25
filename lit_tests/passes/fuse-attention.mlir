// RUN: ramiel-opt %s --split-input-file --fuse-attention --dce | filecheck %s

// What torch.onnx.export writes for F.scaled_dot_product_attention with a mask: the scale
// split as sqrt on Q and on Kt, the NaN guard after the Softmax. The Transpose that made Kt
// ([0, 2, 3, 1]) and the swap back give K = Transpose(perm = [0, 2, 1, 3]); scale = 0.5 * 0.5.
// CHECK-LABEL: func.func @sdpa_export
// CHECK:         %[[K:.*]] = "onnx.Transpose"(%k) <{perm = [0 : si64, 2 : si64, 1 : si64, 3 : si64]}> : (tensor<1x6x2x8xf32>) -> tensor<1x2x6x8xf32>
// CHECK-NEXT:    %y = "onnx.Attention"(%q, %[[K]], %v, %mask) <{scale = 2.500000e-01 : f32}> {onnx.opset = 23 : i64} : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x1x4x6xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT:    func.return %y
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @sdpa_export(%q: tensor<1x2x4x8xf32>, %k: tensor<1x6x2x8xf32>, %v: tensor<1x2x6x8xf32>, %mask: tensor<1x1x4x6xf32>) -> tensor<1x2x4x8xf32> {
  %c = "onnx.Constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
  %zero = "onnx.Constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %kt = "onnx.Transpose"(%k) <{perm = [0 : si64, 2 : si64, 3 : si64, 1 : si64]}> : (tensor<1x6x2x8xf32>) -> tensor<1x2x8x6xf32>
  %qs = "onnx.Mul"(%q, %c) : (tensor<1x2x4x8xf32>, tensor<f32>) -> tensor<1x2x4x8xf32>
  %ks = "onnx.Mul"(%kt, %c) : (tensor<1x2x8x6xf32>, tensor<f32>) -> tensor<1x2x8x6xf32>
  %s = "onnx.MatMul"(%qs, %ks) : (tensor<1x2x4x8xf32>, tensor<1x2x8x6xf32>) -> tensor<1x2x4x6xf32>
  %a = "onnx.Add"(%s, %mask) : (tensor<1x2x4x6xf32>, tensor<1x1x4x6xf32>) -> tensor<1x2x4x6xf32>
  %p = "onnx.Softmax"(%a) <{axis = -1 : si64}> : (tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
  %nan = "onnx.IsNaN"(%p) : (tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xi1>
  %pg = "onnx.Where"(%nan, %zero, %p) : (tensor<1x2x4x6xi1>, tensor<f32>, tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
  %y = "onnx.MatMul"(%pg, %v) : (tensor<1x2x4x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32>
  func.return %y : tensor<1x2x4x8xf32>
}
}

// -----

// Hand-written attention: scores divided by sqrt(head) = 4, no mask, no guard; Kt is an input,
// so K is its swap. At opset 23 the op needs no opset of its own.
// CHECK-LABEL: func.func @eager
// CHECK:         %[[K:.*]] = "onnx.Transpose"(%kt) <{perm = [0 : si64, 1 : si64, 3 : si64, 2 : si64]}>
// CHECK-NEXT:    %y = "onnx.Attention"(%q, %[[K]], %v) <{scale = 2.500000e-01 : f32}> : (
// CHECK-NOT:     onnx.Softmax
builtin.module attributes {onnx.opset = 23 : i64} {
func.func @eager(%q: tensor<1x2x4x16xf32>, %kt: tensor<1x2x16x6xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32> {
  %c = "onnx.Constant"() <{value = dense<4.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %s = "onnx.MatMul"(%q, %kt) : (tensor<1x2x4x16xf32>, tensor<1x2x16x6xf32>) -> tensor<1x2x4x6xf32>
  %d = "onnx.Div"(%s, %c) : (tensor<1x2x4x6xf32>, tensor<f32>) -> tensor<1x2x4x6xf32>
  %p = "onnx.Softmax"(%d) <{axis = 3 : si64}> : (tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
  %y = "onnx.MatMul"(%p, %v) : (tensor<1x2x4x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32>
  func.return %y : tensor<1x2x4x8xf32>
}
}

// -----

// Near-misses stay: a mask from a graph input without the NaN guard (a row of -inf would be
// NaN here but zeros in Attention); the Softmax over another axis; the scores read outside.
// CHECK-LABEL: func.func @near_misses
// CHECK-NOT:     onnx.Attention
// CHECK:         func.return
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @near_misses(%q: tensor<1x2x4x8xf32>, %kt: tensor<1x2x8x6xf32>, %v: tensor<1x2x6x8xf32>, %mask: tensor<1x1x4x6xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x6xf32>) {
  %s1 = "onnx.MatMul"(%q, %kt) : (tensor<1x2x4x8xf32>, tensor<1x2x8x6xf32>) -> tensor<1x2x4x6xf32>
  %a1 = "onnx.Add"(%s1, %mask) : (tensor<1x2x4x6xf32>, tensor<1x1x4x6xf32>) -> tensor<1x2x4x6xf32>
  %p1 = "onnx.Softmax"(%a1) <{axis = -1 : si64}> : (tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
  %y1 = "onnx.MatMul"(%p1, %v) : (tensor<1x2x4x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32>
  %s2 = "onnx.MatMul"(%q, %kt) : (tensor<1x2x4x8xf32>, tensor<1x2x8x6xf32>) -> tensor<1x2x4x6xf32>
  %p2 = "onnx.Softmax"(%s2) <{axis = 2 : si64}> : (tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
  %y2 = "onnx.MatMul"(%p2, %v) : (tensor<1x2x4x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32>
  %s3 = "onnx.MatMul"(%q, %kt) : (tensor<1x2x4x8xf32>, tensor<1x2x8x6xf32>) -> tensor<1x2x4x6xf32>
  %p3 = "onnx.Softmax"(%s3) <{axis = -1 : si64}> : (tensor<1x2x4x6xf32>) -> tensor<1x2x4x6xf32>
  %y3 = "onnx.MatMul"(%p3, %v) : (tensor<1x2x4x6xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32>
  func.return %y1, %y2, %y3, %s3 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x6xf32>
}
}
