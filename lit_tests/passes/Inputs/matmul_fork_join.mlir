builtin.module attributes {onnx.opset = 17 : i64} {
func.func @matmul_fork_join(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %s = "onnx.MatMul"(%x, %x) {ramiel.cost_us = 10.0 : f64} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b1 = "onnx.MatMul"(%s, %x) {ramiel.cost_us = 50.0 : f64} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b2 = "onnx.MatMul"(%x, %s) {ramiel.cost_us = 200.0 : f64} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b3 = "onnx.MatMul"(%s, %s) {ramiel.cost_us = 150.0 : f64} : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %j = "onnx.Sum"(%b1, %b2, %b3) {ramiel.cost_us = 10.0 : f64} : (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %j : tensor<4x4xf32>
}
}
