builtin.module attributes {onnx.opset = 13 : i64, ramiel.weights = "does-not-exist.safetensors"} {
  func.func @main() -> tensor<2xf32> {
    %w = "onnx.Constant"() <{value = dense_resource<w> : tensor<20xf32>}> : () -> tensor<20xf32>
    %s = "onnx.Constant"() <{value = dense<0> : tensor<1xi64>}> : () -> tensor<1xi64>
    %e = "onnx.Constant"() <{value = dense<2> : tensor<1xi64>}> : () -> tensor<1xi64>
    %y = "onnx.Slice"(%w, %s, %e) : (tensor<20xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xf32>
    func.return %y : tensor<2xf32>
  }
}
