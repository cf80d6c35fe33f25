// --prepack-matmul: the float32 matrix products (..., K) @ (K, N) with a constant weight of at
// least MIN_WEIGHTS (262144) elements and at least MIN_MACS (4 M) multiply-accumulates get
// ramiel.prepack and lower to ops.matmul_prepacked (LOWER), which reorders the weight once per
// process into oneDNN's format; the bias Add that alone reads the product, and the Relu that
// alone reads the sum, run fused in that call (ramiel.prepack = "bias", "bias+relu"; the ops stay
// in the IR). A Gelu stays F.gelu (oneDNN's GELU post-op was measured slower).
// RUN: ramiel-opt %s --split-input-file --prepack-matmul | filecheck %s
// RUN: ramiel-opt %s --split-input-file --prepack-matmul --lower-to-torchpy | filecheck %s --check-prefix=LOWER

// A transformer's projection (32 tokens x 768 @ 768 x 3072) and its bias Add: one fused call
// named after the Add; the small head (768 x 16, 12K elements) stays torch.matmul, and so does
// a large weight against one row (1 x 768 @ 768 x 768: 0.6 M multiply-accumulates).
// CHECK-LABEL: func.func @projection
// CHECK:         %h = "onnx.MatMul"(%x, %w) {onnx_node_name = "fc", ramiel.prepack = "bias"}
// CHECK-NEXT:    %hb = "onnx.Add"(%h, %b) {onnx_node_name = "bias"}
// CHECK-NEXT:    %y = "onnx.MatMul"(%x, %wh) {onnx_node_name = "head"}
// CHECK-NEXT:    %r = "onnx.MatMul"(%row, %wr) {onnx_node_name = "row"}
// LOWER-LABEL: torchpy.func sequential @forward(
// LOWER:         %hb = torchpy.call ops.matmul_prepacked(%x, %w, %b)
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

// Epilogues: bias (either operand order, a (1, N) bias) then Relu; bias then a Gelu (the Gelu
// stays, tanh or exact). Left unfused: a product also read elsewhere (%p2 is an output), a bias that is a
// computed value (%t), a bias of the product's full shape (%full), and a Relu after an Add whose
// sum is read twice (the Add fuses, the Relu does not).
// CHECK-LABEL: func.func @epilogues
// CHECK:         %p0 = "onnx.MatMul"(%x, %w) {ramiel.prepack = "bias+relu"}
// CHECK:         %p1 = "onnx.MatMul"(%x, %w) {ramiel.prepack = "bias"}
// CHECK:         %p2 = "onnx.MatMul"(%x, %w) {ramiel.prepack = "none"}
// CHECK:         %p3 = "onnx.MatMul"(%x, %w) {ramiel.prepack = "none"}
// CHECK:         %p4 = "onnx.MatMul"(%x, %w) {ramiel.prepack = "none"}
// CHECK:         %p5 = "onnx.MatMul"(%x, %w) {ramiel.prepack = "bias"}
// CHECK:         %p6 = "onnx.MatMul"(%x, %w) {ramiel.prepack = "bias"}
// LOWER-LABEL: torchpy.func sequential @forward(
// LOWER:         %r0 = torchpy.call ops.matmul_prepacked(%x, %w, %b2) kwargs {activation = "'relu'"}
// LOWER:         %s1 = torchpy.call ops.matmul_prepacked(%x, %w, %b)
// LOWER-NEXT:    %g1 = torchpy.call F.gelu(%s1) kwargs {approximate = "'tanh'"}
// LOWER:         %p2 = torchpy.call ops.matmul_prepacked(%x, %w)
// LOWER:         %p3 = torchpy.call ops.matmul_prepacked(%x, %w)
// LOWER:         %p4 = torchpy.call ops.matmul_prepacked(%x, %w)
// LOWER:         %s5 = torchpy.call ops.matmul_prepacked(%x, %w, %b)
// LOWER:         %r5 = torchpy.call torch.relu(%s5)
// LOWER:         %s6 = torchpy.call ops.matmul_prepacked(%x, %w, %b)
// LOWER-NEXT:    %g6 = torchpy.call F.gelu(%s6)
// LOWER-NOT:     ops.matmul_prepacked
// LOWER:         torchpy.return
builtin.module attributes {onnx.opset = 20 : i64} {
func.func @epilogues(%x: tensor<1x32x768xf32>, %t: tensor<768xf32>) -> (tensor<1x32x768xf32>, tensor<1x32x768xf32>, tensor<1x32x768xf32>, tensor<1x32x768xf32>, tensor<1x32x768xf32>, tensor<1x32x768xf32>, tensor<1x32x768xf32>, tensor<1x32x768xf32>, tensor<1x32x768xf32>) {
  %w = "onnx.Constant"() <{value = dense<0.5> : tensor<768x768xf32>}> : () -> tensor<768x768xf32>
  %b = "onnx.Constant"() <{value = dense<0.1> : tensor<768xf32>}> : () -> tensor<768xf32>
  %b2 = "onnx.Constant"() <{value = dense<0.2> : tensor<1x768xf32>}> : () -> tensor<1x768xf32>
  %bf = "onnx.Constant"() <{value = dense<0.3> : tensor<1x32x768xf32>}> : () -> tensor<1x32x768xf32>
  %p0 = "onnx.MatMul"(%x, %w) : (tensor<1x32x768xf32>, tensor<768x768xf32>) -> tensor<1x32x768xf32>
  %s0 = "onnx.Add"(%b2, %p0) : (tensor<1x768xf32>, tensor<1x32x768xf32>) -> tensor<1x32x768xf32>
  %r0 = "onnx.Relu"(%s0) : (tensor<1x32x768xf32>) -> tensor<1x32x768xf32>
  %p1 = "onnx.MatMul"(%x, %w) : (tensor<1x32x768xf32>, tensor<768x768xf32>) -> tensor<1x32x768xf32>
  %s1 = "onnx.Add"(%p1, %b) : (tensor<1x32x768xf32>, tensor<768xf32>) -> tensor<1x32x768xf32>
  %g1 = "onnx.Gelu"(%s1) {approximate = "tanh"} : (tensor<1x32x768xf32>) -> tensor<1x32x768xf32>
  %p2 = "onnx.MatMul"(%x, %w) : (tensor<1x32x768xf32>, tensor<768x768xf32>) -> tensor<1x32x768xf32>
  %s2 = "onnx.Add"(%p2, %b) : (tensor<1x32x768xf32>, tensor<768xf32>) -> tensor<1x32x768xf32>
  %p3 = "onnx.MatMul"(%x, %w) : (tensor<1x32x768xf32>, tensor<768x768xf32>) -> tensor<1x32x768xf32>
  %s3 = "onnx.Add"(%p3, %t) : (tensor<1x32x768xf32>, tensor<768xf32>) -> tensor<1x32x768xf32>
  %p4 = "onnx.MatMul"(%x, %w) : (tensor<1x32x768xf32>, tensor<768x768xf32>) -> tensor<1x32x768xf32>
  %s4 = "onnx.Add"(%p4, %bf) : (tensor<1x32x768xf32>, tensor<1x32x768xf32>) -> tensor<1x32x768xf32>
  %p5 = "onnx.MatMul"(%x, %w) : (tensor<1x32x768xf32>, tensor<768x768xf32>) -> tensor<1x32x768xf32>
  %s5 = "onnx.Add"(%p5, %b) : (tensor<1x32x768xf32>, tensor<768xf32>) -> tensor<1x32x768xf32>
  %r5 = "onnx.Relu"(%s5) : (tensor<1x32x768xf32>) -> tensor<1x32x768xf32>
  %p6 = "onnx.MatMul"(%x, %w) : (tensor<1x32x768xf32>, tensor<768x768xf32>) -> tensor<1x32x768xf32>
  %s6 = "onnx.Add"(%p6, %b) : (tensor<1x32x768xf32>, tensor<768xf32>) -> tensor<1x32x768xf32>
  %g6 = "onnx.Gelu"(%s6) : (tensor<1x32x768xf32>) -> tensor<1x32x768xf32>
  func.return %r0, %g1, %p2, %s2, %s3, %s4, %s5, %r5, %g6 : tensor<1x32x768xf32>, tensor<1x32x768xf32>, tensor<1x32x768xf32>, tensor<1x32x768xf32>, tensor<1x32x768xf32>, tensor<1x32x768xf32>, tensor<1x32x768xf32>, tensor<1x32x768xf32>, tensor<1x32x768xf32>
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
