// RUN: ramiel-opt %s --split-input-file --fold-into-weights | filecheck %s

// BatchNormalization after a Conv without bias: W' = W * s per output channel, a new bias
// B' = B - mean * s, s = scale / sqrt(var + epsilon) = [1, 0.5] here.
// CHECK-LABEL: func.func @conv_bn
// CHECK-NEXT:    %w = "onnx.Constant"
// CHECK-NEXT:    %none = "onnx.NoValue"
// CHECK-NEXT:    %w_folded = "onnx.Constant"() <{value = dense<{{\[\[\[\[}}1.000000e+00]], {{\[\[}}2.000000e+00]]], {{\[\[\[}}1.500000e+00]], {{\[\[}}2.000000e+00]]]]> : tensor<2x2x1x1xf32>}>
// CHECK-NEXT:    %conv_B = "onnx.Constant"() <{value = dense<[5.000000e-01, -1.125000e+00]> : tensor<2xf32>}>
// CHECK-NEXT:    %conv = "onnx.Conv"(%x, %w_folded, %conv_B) <{kernel_shape = [1 : si64, 1 : si64]}> {onnx_node_name = "conv1"}
// CHECK-NOT:     onnx.BatchNormalization
// CHECK:         func.return %conv
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @conv_bn(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = "onnx.Constant"() <{value = dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>}> : () -> tensor<2x2x1x1xf32>
  %none = "onnx.NoValue"() : () -> none
  %conv = "onnx.Conv"(%x, %w, %none) <{kernel_shape = [1 : si64, 1 : si64]}> {onnx_node_name = "conv1"} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, none) -> tensor<1x2x4x4xf32>
  %scale = "onnx.Constant"() <{value = dense<[2.0, 0.5]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %b = "onnx.Constant"() <{value = dense<[1.0, -1.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %mean = "onnx.Constant"() <{value = dense<[0.5, 0.25]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %var = "onnx.Constant"() <{value = dense<[3.0, 0.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %bn = "onnx.BatchNormalization"(%conv, %scale, %b, %mean, %var) <{epsilon = 1.0 : f32}> {onnx_node_name = "bn1"} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %bn : tensor<1x2x4x4xf32>
}
}

// -----

// A chain of followers folds one after the other: Mul by a per-channel constant (on the left),
// then Add of a scalar into the bias.
// CHECK-LABEL: func.func @conv_mul_add
// CHECK:         %w_folded = "onnx.Constant"() <{value = dense<{{\[\[\[\[}}2.000000e+00]], {{\[\[}}2.000000e+00]]], {{\[\[\[}}-3.000000e+00]], {{\[\[}}-4.000000e+00]]]]>
// CHECK:         %b_folded = "onnx.Constant"() <{value = dense<[1.000000e+00, 4.000000e+00]> : tensor<2xf32>}>
// CHECK:         %b_folded_1 = "onnx.Constant"() <{value = dense<[1.500000e+00, 4.500000e+00]> : tensor<2xf32>}>
// CHECK:         %conv = "onnx.Conv"(%x, %w_folded, %b_folded_1)
// CHECK-NOT:     onnx.Mul
// CHECK-NOT:     onnx.Add
// CHECK:         func.return %conv
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @conv_mul_add(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = "onnx.Constant"() <{value = dense<[[[[1.0]], [[1.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>}> : () -> tensor<2x2x1x1xf32>
  %b = "onnx.Constant"() <{value = dense<[0.5, -4.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %conv = "onnx.Conv"(%x, %w, %b) <{kernel_shape = [1 : si64, 1 : si64]}> : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %k = "onnx.Constant"() <{value = dense<[[[2.0]], [[-1.0]]]> : tensor<2x1x1xf32>}> : () -> tensor<2x1x1xf32>
  %m = "onnx.Mul"(%k, %conv) : (tensor<2x1x1xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %half = "onnx.Constant"() <{value = dense<0.5> : tensor<f32>}> : () -> tensor<f32>
  %a = "onnx.Add"(%m, %half) : (tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  func.return %a : tensor<1x2x4x4xf32>
}
}

// -----

// MatMul + its bias Add + Mul over the last axis: both the weight and the bias are scaled.
// CHECK-LABEL: func.func @matmul_bias_mul
// CHECK:         %w_folded = "onnx.Constant"() <{value = dense<{{\[\[}}2.000000e+00, 3.000000e+00], [4.000000e+00, 6.000000e+00]]> : tensor<2x2xf32>}>
// CHECK-NEXT:    %b_folded = "onnx.Constant"() <{value = dense<[2.000000e+00, -3.000000e+00]> : tensor<2xf32>}>
// CHECK-NEXT:    %mm = "onnx.MatMul"(%x, %w_folded)
// CHECK-NEXT:    %a = "onnx.Add"(%mm, %b_folded)
// CHECK-NOT:     onnx.Mul
// CHECK:         func.return %a
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @matmul_bias_mul(%x: tensor<1x3x2xf32>) -> tensor<1x3x2xf32> {
  %w = "onnx.Constant"() <{value = dense<[[1.0, 1.0], [2.0, 2.0]]> : tensor<2x2xf32>}> : () -> tensor<2x2xf32>
  %b = "onnx.Constant"() <{value = dense<[1.0, -1.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %k = "onnx.Constant"() <{value = dense<[2.0, 3.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %mm = "onnx.MatMul"(%x, %w) : (tensor<1x3x2xf32>, tensor<2x2xf32>) -> tensor<1x3x2xf32>
  %a = "onnx.Add"(%b, %mm) : (tensor<2xf32>, tensor<1x3x2xf32>) -> tensor<1x3x2xf32>
  %y = "onnx.Mul"(%a, %k) : (tensor<1x3x2xf32>, tensor<2xf32>) -> tensor<1x3x2xf32>
  func.return %y : tensor<1x3x2xf32>
}
}

// -----

// Gemm: scaling its columns rewrites C as beta * C * k and sets beta to 1.
// CHECK-LABEL: func.func @gemm_mul
// CHECK:         %w_folded = "onnx.Constant"() <{value = dense<{{\[\[}}2.000000e+00, 3.000000e+00]]> : tensor<1x2xf32>}>
// CHECK:         %c_folded = "onnx.Constant"() <{value = dense<[8.000000e+00, 6.000000e+00]> : tensor<2xf32>}>
// CHECK:         %g = "onnx.Gemm"(%x, %w_folded, %c_folded) <{beta = 1.000000e+00 : f32}>
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @gemm_mul(%x: tensor<3x1xf32>) -> tensor<3x2xf32> {
  %w = "onnx.Constant"() <{value = dense<[[1.0, 1.0]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %c = "onnx.Constant"() <{value = dense<[2.0, 1.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %k = "onnx.Constant"() <{value = dense<[[2.0, 3.0]]> : tensor<1x2xf32>}> : () -> tensor<1x2xf32>
  %g = "onnx.Gemm"(%x, %w, %c) <{beta = 2.0 : f32}> : (tensor<3x1xf32>, tensor<1x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %y = "onnx.Mul"(%g, %k) : (tensor<3x2xf32>, tensor<1x2xf32>) -> tensor<3x2xf32>
  func.return %y : tensor<3x2xf32>
}
}

// -----

// A splat weight scaled by one value stays a splat (never materialised).
// CHECK-LABEL: func.func @splat
// CHECK:         "onnx.Constant"() <{value = dense<6.000000e-02> : tensor<4096x4096x1x1xf32>}>
// CHECK-NOT:     onnx.Mul
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @splat(%x: tensor<1x4096x1x1xf32>) -> tensor<1x4096x1x1xf32> {
  %w = "onnx.Constant"() <{value = dense<0.02> : tensor<4096x4096x1x1xf32>}> : () -> tensor<4096x4096x1x1xf32>
  %conv = "onnx.Conv"(%x, %w) <{kernel_shape = [1 : si64, 1 : si64]}> : (tensor<1x4096x1x1xf32>, tensor<4096x4096x1x1xf32>) -> tensor<1x4096x1x1xf32>
  %k = "onnx.Constant"() <{value = dense<3.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = "onnx.Mul"(%conv, %k) : (tensor<1x4096x1x1xf32>, tensor<1xf32>) -> tensor<1x4096x1x1xf32>
  func.return %y : tensor<1x4096x1x1xf32>
}
}

// -----

// Near-misses stay: the Conv result has a second user (the return); the constant varies along a
// spatial axis; the Mul after a MatMul scales rows, not output columns; c / y is not affine;
// BatchNormalization in training mode.
// CHECK-LABEL: func.func @near_misses
// CHECK-COUNT-2: onnx.Mul
// CHECK:         onnx.Div
// CHECK:         onnx.BatchNormalization
// CHECK:         onnx.Mul
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @near_misses(%x: tensor<1x2x4x4xf32>, %v: tensor<1x4x2xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x4x2xf32>) {
  %w = "onnx.Constant"() <{value = dense<[[[[1.0]], [[2.0]]], [[[3.0]], [[4.0]]]]> : tensor<2x2x1x1xf32>}> : () -> tensor<2x2x1x1xf32>
  %k = "onnx.Constant"() <{value = dense<[[[2.0]], [[3.0]]]> : tensor<2x1x1xf32>}> : () -> tensor<2x1x1xf32>
  %c1 = "onnx.Conv"(%x, %w) <{kernel_shape = [1 : si64, 1 : si64]}> : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %y1 = "onnx.Mul"(%c1, %k) : (tensor<1x2x4x4xf32>, tensor<2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %kw = "onnx.Constant"() <{value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>}> : () -> tensor<4xf32>
  %c2 = "onnx.Conv"(%x, %w) <{kernel_shape = [1 : si64, 1 : si64]}> : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %y2 = "onnx.Mul"(%c2, %kw) : (tensor<1x2x4x4xf32>, tensor<4xf32>) -> tensor<1x2x4x4xf32>
  %c3 = "onnx.Conv"(%x, %w) <{kernel_shape = [1 : si64, 1 : si64]}> : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %y3 = "onnx.Div"(%k, %c3) : (tensor<2x1x1xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = "onnx.Constant"() <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %c4 = "onnx.Conv"(%x, %w) <{kernel_shape = [1 : si64, 1 : si64]}> : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %y4 = "onnx.BatchNormalization"(%c4, %s, %s, %s, %s) <{training_mode = 1 : si64}> : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %wm = "onnx.Constant"() <{value = dense<[[1.0, 1.0], [2.0, 2.0]]> : tensor<2x2xf32>}> : () -> tensor<2x2xf32>
  %mm = "onnx.MatMul"(%v, %wm) : (tensor<1x4x2xf32>, tensor<2x2xf32>) -> tensor<1x4x2xf32>
  %kr = "onnx.Constant"() <{value = dense<[[1.0], [2.0], [3.0], [4.0]]> : tensor<4x1xf32>}> : () -> tensor<4x1xf32>
  %y5 = "onnx.Mul"(%mm, %kr) : (tensor<1x4x2xf32>, tensor<4x1xf32>) -> tensor<1x4x2xf32>
  func.return %y1, %c1, %y2, %y3, %y4, %y5 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x4x2xf32>
}
}
