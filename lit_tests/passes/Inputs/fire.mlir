builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<1x96x55x55xf32>) -> tensor<1x128x55x55xf32> {
  %ws = "onnx.Constant"() <{value = dense<0.01> : tensor<16x96x1x1xf32>}> : () -> tensor<16x96x1x1xf32>
  %bs = "onnx.Constant"() <{value = dense<0.0> : tensor<16xf32>}> : () -> tensor<16xf32>
  %we1 = "onnx.Constant"() <{value = dense<0.01> : tensor<64x16x1x1xf32>}> : () -> tensor<64x16x1x1xf32>
  %we3 = "onnx.Constant"() <{value = dense<0.01> : tensor<64x16x3x3xf32>}> : () -> tensor<64x16x3x3xf32>
  %be = "onnx.Constant"() <{value = dense<0.0> : tensor<64xf32>}> : () -> tensor<64xf32>
  %sq = "onnx.Conv"(%x, %ws, %bs) <{kernel_shape = [1 : si64, 1 : si64]}> {onnx_node_name = "fire2/squeeze1x1"} : (tensor<1x96x55x55xf32>, tensor<16x96x1x1xf32>, tensor<16xf32>) -> tensor<1x16x55x55xf32>
  %sqr = "onnx.Relu"(%sq) {onnx_node_name = "fire2/relu_squeeze1x1"} : (tensor<1x16x55x55xf32>) -> tensor<1x16x55x55xf32>
  %e1 = "onnx.Conv"(%sqr, %we1, %be) <{kernel_shape = [1 : si64, 1 : si64]}> {onnx_node_name = "fire2/expand1x1"} : (tensor<1x16x55x55xf32>, tensor<64x16x1x1xf32>, tensor<64xf32>) -> tensor<1x64x55x55xf32>
  %e1r = "onnx.Relu"(%e1) {onnx_node_name = "fire2/relu_expand1x1"} : (tensor<1x64x55x55xf32>) -> tensor<1x64x55x55xf32>
  %e3 = "onnx.Conv"(%sqr, %we3, %be) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {onnx_node_name = "fire2/expand3x3"} : (tensor<1x16x55x55xf32>, tensor<64x16x3x3xf32>, tensor<64xf32>) -> tensor<1x64x55x55xf32>
  %e3r = "onnx.Relu"(%e3) {onnx_node_name = "fire2/relu_expand3x3"} : (tensor<1x64x55x55xf32>) -> tensor<1x64x55x55xf32>
  %cat = "onnx.Concat"(%e1r, %e3r) <{axis = 1 : si64}> {onnx_node_name = "fire2/concat"} : (tensor<1x64x55x55xf32>, tensor<1x64x55x55xf32>) -> tensor<1x128x55x55xf32>
  func.return %cat : tensor<1x128x55x55xf32>
}
}
