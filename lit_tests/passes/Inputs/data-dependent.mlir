builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<3x4xf32>, %s: tensor<2xi64>) -> (tensor<2x?xf32>, tensor<?x?xf32>) {
  %r = "onnx.Relu"(%x) {onnx_node_name = "relu"} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %nz = "onnx.NonZero"(%r) {onnx_node_name = "where nonzero"} : (tensor<3x4xf32>) -> tensor<2x?xi64>
  %y = "onnx.Cast"(%nz) <{to = 1 : si64}> {onnx_node_name = "to float"} : (tensor<2x?xi64>) -> tensor<2x?xf32>
  %z = "onnx.Reshape"(%r, %s) {onnx_node_name = "reshape"} : (tensor<3x4xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  func.return %y, %z : tensor<2x?xf32>, tensor<?x?xf32>
}
}
