// RUN: ramiel-opt %s --split-input-file --fuse-layer-norm --dce | filecheck %s

// nn.LayerNorm as torch.onnx.export writes it before opset 17: one LayerNormalization of
// opset 17 over the last axis, epsilon from the constant.
// CHECK-LABEL: func.func @decomposed
// CHECK:         %y = "onnx.LayerNormalization"(%x, %g, %b) <{axis = 2 : si64, epsilon = 1.000000e-05 : f32}> {onnx_node_name = "Add_8", onnx.opset = 17 : i64} : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT:    func.return %y
builtin.module attributes {onnx.opset = 14 : i64} {
func.func @decomposed(%x: tensor<2x3x8xf32>, %g: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %two = "onnx.Constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %eps = "onnx.Constant"() <{value = dense<1.000000e-05> : tensor<f32>}> : () -> tensor<f32>
  %mu = "onnx.ReduceMean"(%x) <{axes = [-1 : si64]}> : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32>
  %d = "onnx.Sub"(%x, %mu) : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %p = "onnx.Pow"(%d, %two) : (tensor<2x3x8xf32>, tensor<f32>) -> tensor<2x3x8xf32>
  %var = "onnx.ReduceMean"(%p) <{axes = [-1 : si64]}> : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32>
  %ve = "onnx.Add"(%var, %eps) : (tensor<2x3x1xf32>, tensor<f32>) -> tensor<2x3x1xf32>
  %s = "onnx.Sqrt"(%ve) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %n = "onnx.Div"(%d, %s) : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %sc = "onnx.Mul"(%g, %n) : (tensor<8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %y = "onnx.Add"(%sc, %b) {onnx_node_name = "Add_8"} : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  func.return %y : tensor<2x3x8xf32>
}
}

// -----

// Without the affine part, over the last two axes, the square as Mul(d, d) and axes as an
// input (opset 18): the scale is a new constant of ones, there is no bias.
// CHECK-LABEL: func.func @plain_two_axes
// CHECK:         %[[ONES:.*]] = "onnx.Constant"() <{value = dense<1.000000e+00> : tensor<3x8xf32>}>
// CHECK-NEXT:    %n = "onnx.LayerNormalization"(%x, %[[ONES]]) <{axis = 1 : si64, epsilon = 1.000000e-03 : f32}> : (tensor<2x3x8xf32>, tensor<3x8xf32>) -> tensor<2x3x8xf32>
builtin.module attributes {onnx.opset = 18 : i64} {
func.func @plain_two_axes(%x: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %axes = "onnx.Constant"() <{value = dense<[-2, -1]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %eps = "onnx.Constant"() <{value = dense<1.000000e-03> : tensor<1xf32>}> : () -> tensor<1xf32>
  %mu = "onnx.ReduceMean"(%x, %axes) : (tensor<2x3x8xf32>, tensor<2xi64>) -> tensor<2x1x1xf32>
  %d = "onnx.Sub"(%x, %mu) : (tensor<2x3x8xf32>, tensor<2x1x1xf32>) -> tensor<2x3x8xf32>
  %p = "onnx.Mul"(%d, %d) : (tensor<2x3x8xf32>, tensor<2x3x8xf32>) -> tensor<2x3x8xf32>
  %var = "onnx.ReduceMean"(%p, %axes) : (tensor<2x3x8xf32>, tensor<2xi64>) -> tensor<2x1x1xf32>
  %ve = "onnx.Add"(%eps, %var) : (tensor<1xf32>, tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %s = "onnx.Sqrt"(%ve) : (tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %n = "onnx.Div"(%d, %s) : (tensor<2x3x8xf32>, tensor<2x1x1xf32>) -> tensor<2x3x8xf32>
  func.return %n : tensor<2x3x8xf32>
}
}

// -----

// Near-misses stay: epsilon added after the square root; a mean over an inner axis (the
// channels-first norm of ConvNeXt's stem, axis 1 of a 4-D tensor); the centred value read
// outside the pattern.
// CHECK-LABEL: func.func @near_misses
// CHECK-NOT:     onnx.LayerNormalization
// CHECK:         func.return
builtin.module attributes {onnx.opset = 14 : i64} {
func.func @near_misses(%x: tensor<2x3x8xf32>, %z: tensor<1x4x2x2xf32>) -> (tensor<2x3x8xf32>, tensor<1x4x2x2xf32>, tensor<2x3x8xf32>) {
  %two = "onnx.Constant"() <{value = dense<2.000000e+00> : tensor<f32>}> : () -> tensor<f32>
  %eps = "onnx.Constant"() <{value = dense<1.000000e-05> : tensor<f32>}> : () -> tensor<f32>
  %mu = "onnx.ReduceMean"(%x) <{axes = [-1 : si64]}> : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32>
  %d = "onnx.Sub"(%x, %mu) : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %p = "onnx.Pow"(%d, %two) : (tensor<2x3x8xf32>, tensor<f32>) -> tensor<2x3x8xf32>
  %var = "onnx.ReduceMean"(%p) <{axes = [-1 : si64]}> : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32>
  %s = "onnx.Sqrt"(%var) : (tensor<2x3x1xf32>) -> tensor<2x3x1xf32>
  %se = "onnx.Add"(%s, %eps) : (tensor<2x3x1xf32>, tensor<f32>) -> tensor<2x3x1xf32>
  %n = "onnx.Div"(%d, %se) : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %zmu = "onnx.ReduceMean"(%z) <{axes = [1 : si64]}> : (tensor<1x4x2x2xf32>) -> tensor<1x1x2x2xf32>
  %zd = "onnx.Sub"(%z, %zmu) : (tensor<1x4x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x2x2xf32>
  %zp = "onnx.Pow"(%zd, %two) : (tensor<1x4x2x2xf32>, tensor<f32>) -> tensor<1x4x2x2xf32>
  %zvar = "onnx.ReduceMean"(%zp) <{axes = [1 : si64]}> : (tensor<1x4x2x2xf32>) -> tensor<1x1x2x2xf32>
  %zve = "onnx.Add"(%zvar, %eps) : (tensor<1x1x2x2xf32>, tensor<f32>) -> tensor<1x1x2x2xf32>
  %zs = "onnx.Sqrt"(%zve) : (tensor<1x1x2x2xf32>) -> tensor<1x1x2x2xf32>
  %zn = "onnx.Div"(%zd, %zs) : (tensor<1x4x2x2xf32>, tensor<1x1x2x2xf32>) -> tensor<1x4x2x2xf32>
  func.return %n, %zn, %d : tensor<2x3x8xf32>, tensor<1x4x2x2xf32>, tensor<2x3x8xf32>
}
}
