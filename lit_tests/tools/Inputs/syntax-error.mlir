builtin.module attributes {onnx.opset = 13 : i64} {
  func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %y = "onnx.Relu"(%x : (tensor<2x3xf32>) -> tensor<2x3xf32>
    func.return %y : tensor<2x3xf32>
  }
}
