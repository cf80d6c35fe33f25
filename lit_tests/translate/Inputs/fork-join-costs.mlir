builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<1x4xf32> {onnx.name = "x"}) -> (tensor<1x4xf32> {onnx.name = "y"}) {
  %s = "onnx.Relu"(%x) {onnx_node_name = "stem", ramiel.cost_us = 1000.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %b1 = "onnx.Sigmoid"(%s) {onnx_node_name = "b1", ramiel.cost_us = 2000.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %b2 = "onnx.Tanh"(%s) {onnx_node_name = "b2", ramiel.cost_us = 2000.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
  %j = "onnx.Add"(%b1, %b2) {onnx_node_name = "head", ramiel.cost_us = 1000.0 : f64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %j : tensor<1x4xf32>
}
}
