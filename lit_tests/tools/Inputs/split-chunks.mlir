// Three chunks; the second fails verification (opt-errors.test, --split-input-file).
func.func @a(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
// -----
func.func @b(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}
// -----
func.func @c(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "onnx.Neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
