// --prepack-matmul: the float32 matrix products (..., K) @ (K, N) with a constant weight of at
// least MIN_WEIGHTS (262144) elements and at least MIN_MACS (4 M) multiply-accumulates get
// ramiel.prepack = "none" and lower to ops.matmul_prepacked (LOWER), which reorders the weight
// once per process into oneDNN's format.
// RUN: ramiel-opt %s --split-input-file --prepack-matmul | filecheck %s
// RUN: ramiel-opt %s --split-input-file --prepack-matmul --lower-to-torchpy | filecheck %s --check-prefix=LOWER

// A transformer's projection (32 tokens x 768 @ 768 x 3072) and its bias Add: the MatMul runs
// prepacked, the Add stays; the small head (768 x 16, 12K elements) stays torch.matmul, and so
// does a large weight against one row (1 x 768 @ 768 x 768: 0.6 M multiply-accumulates).
// CHECK-LABEL: func.func @projection
// CHECK:         %h = "onnx.MatMul"(%x, %w) {onnx_node_name = "fc", ramiel.prepack = "none"}
// CHECK-NEXT:    %hb = "onnx.Add"(%h, %b) {onnx_node_name = "bias"}
// CHECK-NEXT:    %y = "onnx.MatMul"(%x, %wh) {onnx_node_name = "head"}
// CHECK-NEXT:    %r = "onnx.MatMul"(%row, %wr) {onnx_node_name = "row"}
// LOWER-LABEL: torchpy.func sequential @forward(
// LOWER:         %h = torchpy.call ops.matmul_prepacked(%x, %w)
// LOWER-NEXT:    %hb = torchpy.call operator.add(%h, %b)
// LOWER-NEXT:    %y = torchpy.call torch.matmul(%x, %wh)
// LOWER-NEXT:    %r = torchpy.call torch.matmul(%row, %wr)
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @projection(%x: tensor<1x32x768xf32> {onnx.name = "x"}, %row: tensor<1x768xf32> {onnx.name = "row"}) -> (tensor<1x32x3072xf32> {onnx.name = "hb"}, tensor<1x32x16xf32> {onnx.name = "y"}, tensor<1x768xf32> {onnx.name = "r"}) {
  %w = "onnx.Constant"() <{value = dense<0.5> : tensor<768x3072xf32>}> : () -> tensor<768x3072xf32>
  %b = "onnx.Constant"() <{value = dense<0.1> : tensor<3072xf32>}> : () -> tensor<3072xf32>
  %wh = "onnx.Constant"() <{value = dense<0.25> : tensor<768x16xf32>}> : () -> tensor<768x16xf32>
  %wr = "onnx.Constant"() <{value = dense<0.125> : tensor<768x768xf32>}> : () -> tensor<768x768xf32>
  %h = "onnx.MatMul"(%x, %w) {onnx_node_name = "fc"} : (tensor<1x32x768xf32>, tensor<768x3072xf32>) -> tensor<1x32x3072xf32>
  %hb = "onnx.Add"(%h, %b) {onnx_node_name = "bias"} : (tensor<1x32x3072xf32>, tensor<3072xf32>) -> tensor<1x32x3072xf32>
  %y = "onnx.MatMul"(%x, %wh) {onnx_node_name = "head"} : (tensor<1x32x768xf32>, tensor<768x16xf32>) -> tensor<1x32x16xf32>
  %r = "onnx.MatMul"(%row, %wr) {onnx_node_name = "row"} : (tensor<1x768xf32>, tensor<768x768xf32>) -> tensor<1x768xf32>
  func.return %hb, %y, %r : tensor<1x32x3072xf32>, tensor<1x32x16xf32>, tensor<1x768xf32>
}
}

// -----

// Left alone (each large enough otherwise): a product of two activations (attention scores),
// a batched constant weight (3-D) and a float64 product.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     ramiel.prepack
// CHECK:         func.return
// LOWER-LABEL: torchpy.func sequential @forward(
// LOWER-NOT:     ops.matmul_prepacked
// LOWER:         torchpy.return
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @left_alone(%q: tensor<1x12x512x64xf32>, %k: tensor<1x12x64x512xf32>, %x: tensor<2x512x512xf32>, %x64: tensor<1x512x512xf64>) -> (tensor<1x12x512x512xf32>, tensor<2x512x512xf32>, tensor<1x512x512xf64>) {
  %wb = "onnx.Constant"() <{value = dense<0.5> : tensor<2x512x512xf32>}> : () -> tensor<2x512x512xf32>
  %w64 = "onnx.Constant"() <{value = dense<0.5> : tensor<512x512xf64>}> : () -> tensor<512x512xf64>
  %s = "onnx.MatMul"(%q, %k) : (tensor<1x12x512x64xf32>, tensor<1x12x64x512xf32>) -> tensor<1x12x512x512xf32>
  %b = "onnx.MatMul"(%x, %wb) : (tensor<2x512x512xf32>, tensor<2x512x512xf32>) -> tensor<2x512x512xf32>
  %d = "onnx.MatMul"(%x64, %w64) : (tensor<1x512x512xf64>, tensor<512x512xf64>) -> tensor<1x512x512xf64>
  func.return %s, %b, %d : tensor<1x12x512x512xf32>, tensor<2x512x512xf32>, tensor<1x512x512xf64>
}
}
