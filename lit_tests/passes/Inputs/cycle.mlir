builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
  %a = "onnx.Add"(%x, %b) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
  %b = "onnx.Relu"(%a) : (tensor<1x4xf32>) -> tensor<1x4xf32>
  func.return %b : tensor<1x4xf32>
}
}
