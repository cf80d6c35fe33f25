builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2x4xf32>, %y: tensor<1x1x4x4xf32>) -> (tensor<2x4xf32>, tensor<1x1x3x3xf32>) {
  %a = "onnx.Bernoulli"(%x) {onnx_node_name = "coin1"} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %b = "onnx.Bernoulli"(%a) {onnx_node_name = "coin2"} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %c = "onnx.Relu"(%b) {onnx_node_name = "relu"} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %d = "onnx.Det"(%c) {onnx_node_name = "det"} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %m = "onnx.MaxPool"(%y) <{kernel_shape = [2 : si64, 2 : si64], storage_order = 1 : si64}> {onnx_node_name = "pool"} : (tensor<1x1x4x4xf32>) -> tensor<1x1x3x3xf32>
  %r = "onnx.RandomNormalLike"(%m) {onnx_node_name = "noise"} : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  func.return %d, %r : tensor<2x4xf32>, tensor<1x1x3x3xf32>
}
}
