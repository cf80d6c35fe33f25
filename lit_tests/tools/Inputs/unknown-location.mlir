// expected-error @unknown {{merge: clusters must be from 1 to 1024, got 0}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}
