builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<1x2x4x4xf32> {onnx.name = "input"}) -> (tensor<1x8xf32> {onnx.name = "output"}) {
  %none = "onnx.NoValue"() : () -> none
  %onnx__Conv_7 = "onnx.Constant"() <{value = dense<0.5> : tensor<3x2x3x3xf32>}> : () -> tensor<3x2x3x3xf32>
  %shape = "onnx.Constant"() <{value = dense<[1, -1]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %st = "onnx.Constant"() <{value = dense<1> : tensor<1xi64>}> : () -> tensor<1xi64>
  %en = "onnx.Constant"() <{value = dense<9223372036854775807> : tensor<1xi64>}> : () -> tensor<1xi64>
  %ax = "onnx.Constant"() <{value = dense<1> : tensor<1xi64>}> : () -> tensor<1xi64>
  %c = "onnx.Conv"(%x, %onnx__Conv_7, %none) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64], strides = [2 : si64, 2 : si64]}> {onnx_node_name = "conv1"} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>, none) -> tensor<1x3x2x2xf32>
  %p = "onnx.MaxPool"(%c) <{kernel_shape = [2 : si64, 2 : si64], auto_pad = "SAME_UPPER"}> {onnx_node_name = "pool"} : (tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
  %s = "onnx.Slice"(%p, %st, %en, %ax) {onnx_node_name = "slice"} : (tensor<1x3x2x2xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<1x2x2x2xf32>
  %r = "onnx.Reshape"(%s, %shape) {onnx_node_name = "flat"} : (tensor<1x2x2x2xf32>, tensor<2xi64>) -> tensor<1x8xf32>
  %g = "onnx.Gemm"(%r, %r) <{transB = 1 : si64, alpha = 0.5 : f32}> {onnx_node_name = "gemm"} : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x1xf32>
  %o = "onnx.Add"(%r, %g) {onnx_node_name = "add"} : (tensor<1x8xf32>, tensor<1x1xf32>) -> tensor<1x8xf32>
  func.return %o : tensor<1x8xf32>
}
}
