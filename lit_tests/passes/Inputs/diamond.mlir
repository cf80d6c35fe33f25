builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %a = "onnx.Relu"(%x) {onnx_node_name = "a", ramiel.cost_us = 10.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %b = "onnx.Sigmoid"(%a) {onnx_node_name = "b", ramiel.cost_us = 100.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %c = "onnx.Tanh"(%a) {onnx_node_name = "c", ramiel.cost_us = 50.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %d = "onnx.Add"(%b, %c) {onnx_node_name = "d", ramiel.cost_us = 10.0 : f64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %d : tensor<1x4xf32>
}
}
