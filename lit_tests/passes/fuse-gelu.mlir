// RUN: ramiel-opt %s --split-input-file --fuse-gelu --dce | filecheck %s

// The erf form torch.onnx.export writes for nn.GELU: x * (erf(x / sqrt(2)) + 1) * 0.5. The
// model's opset (17) has no Gelu: the op carries its own onnx.opset = 20.
// CHECK-LABEL: func.func @erf_form
// CHECK-NEXT:    %y = "onnx.Gelu"(%x) {onnx_node_name = "Mul_4", onnx.opset = 20 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT:    func.return %y
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @erf_form(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %s2 = "onnx.Constant"() <{value = dense<1.41421354> : tensor<f32>}> : () -> tensor<f32>
  %one = "onnx.Constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %half = "onnx.Constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
  %d = "onnx.Div"(%x, %s2) : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = "onnx.Erf"(%d) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %a = "onnx.Add"(%e, %one) : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %m = "onnx.Mul"(%x, %a) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = "onnx.Mul"(%m, %half) {onnx_node_name = "Mul_4"} : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}
}

// -----

// The tanh approximation as transformers' NewGELU writes it: (x * 0.5) * (tanh(sqrt(2/pi) *
// (x + 0.044715 * x^3)) + 1); at opset 20 the op needs no opset of its own.
// CHECK-LABEL: func.func @tanh_form
// CHECK-NEXT:    %y = "onnx.Gelu"(%x) <{approximate = "tanh"}> : (tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT:    func.return %y
builtin.module attributes {onnx.opset = 20 : i64} {
func.func @tanh_form(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %half = "onnx.Constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
  %three = "onnx.Constant"() <{value = dense<3.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %k = "onnx.Constant"() <{value = dense<0.0447149985> : tensor<f32>}> : () -> tensor<f32>
  %c = "onnx.Constant"() <{value = dense<0.797884583> : tensor<f32>}> : () -> tensor<f32>
  %one = "onnx.Constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %xh = "onnx.Mul"(%x, %half) : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %x3 = "onnx.Pow"(%x, %three) : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %kx3 = "onnx.Mul"(%x3, %k) : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %in = "onnx.Add"(%x, %kx3) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %ci = "onnx.Mul"(%in, %c) : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %t = "onnx.Tanh"(%ci) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %t1 = "onnx.Add"(%t, %one) : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %y = "onnx.Mul"(%xh, %t1) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}
}

// -----

// Near-misses stay: 0.25 instead of 0.5; an intermediate (the erf) read outside the pattern.
// CHECK-LABEL: func.func @near_misses
// CHECK-NOT:     onnx.Gelu
// CHECK:         func.return
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @near_misses(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %s2 = "onnx.Constant"() <{value = dense<1.41421354> : tensor<f32>}> : () -> tensor<f32>
  %one = "onnx.Constant"() <{value = dense<1.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %quarter = "onnx.Constant"() <{value = dense<2.500000e-01> : tensor<f32>}> : () -> tensor<f32>
  %half = "onnx.Constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
  %d = "onnx.Div"(%x, %s2) : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = "onnx.Erf"(%d) : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %a = "onnx.Add"(%e, %one) : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %m = "onnx.Mul"(%x, %a) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y1 = "onnx.Mul"(%m, %quarter) : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %y2 = "onnx.Mul"(%m, %half) : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  func.return %y1, %y2, %e : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}
}
