builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "foo.bar"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %z = "onnx.Relu"(%y) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %z : tensor<2xf32>
}
}
