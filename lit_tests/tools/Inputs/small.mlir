builtin.module attributes {onnx.opset = 13 : i64} {
  func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %shape = "onnx.Constant"() <{value = dense<[2, 3]> : tensor<2xi64>}> : () -> tensor<2xi64>
    %w = "onnx.ConstantOfShape"(%shape) <{value = dense<0.5> : tensor<1xf32>}> : (tensor<2xi64>) -> tensor<2x3xf32>
    %y = "onnx.Mul"(%x, %w) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %dead = "onnx.Relu"(%y) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    func.return %y : tensor<2x3xf32>
  }
}
