builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<1x192x28x28xf32>) -> tensor<1x256x28x28xf32> {
  %none = "onnx.NoValue"() : () -> none
  %w1 = "onnx.Constant"() <{value = dense<0.01> : tensor<64x192x1x1xf32>}> : () -> tensor<64x192x1x1xf32>
  %w2a = "onnx.Constant"() <{value = dense<0.01> : tensor<96x192x1x1xf32>}> : () -> tensor<96x192x1x1xf32>
  %w2b = "onnx.Constant"() <{value = dense<0.01> : tensor<128x96x3x3xf32>}> : () -> tensor<128x96x3x3xf32>
  %w3a = "onnx.Constant"() <{value = dense<0.01> : tensor<16x192x1x1xf32>}> : () -> tensor<16x192x1x1xf32>
  %w3b = "onnx.Constant"() <{value = dense<0.01> : tensor<32x16x5x5xf32>}> : () -> tensor<32x16x5x5xf32>
  %w4 = "onnx.Constant"() <{value = dense<0.01> : tensor<32x192x1x1xf32>}> : () -> tensor<32x192x1x1xf32>
  %b1 = "onnx.Conv"(%x, %w1, %none) <{kernel_shape = [1 : si64, 1 : si64]}> {onnx_node_name = "3a/1x1"} : (tensor<1x192x28x28xf32>, tensor<64x192x1x1xf32>, none) -> tensor<1x64x28x28xf32>
  %b2a = "onnx.Conv"(%x, %w2a, %none) <{kernel_shape = [1 : si64, 1 : si64]}> {onnx_node_name = "3a/3x3_reduce"} : (tensor<1x192x28x28xf32>, tensor<96x192x1x1xf32>, none) -> tensor<1x96x28x28xf32>
  %b2 = "onnx.Conv"(%b2a, %w2b, %none) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {onnx_node_name = "3a/3x3"} : (tensor<1x96x28x28xf32>, tensor<128x96x3x3xf32>, none) -> tensor<1x128x28x28xf32>
  %b3a = "onnx.Conv"(%x, %w3a, %none) <{kernel_shape = [1 : si64, 1 : si64]}> {onnx_node_name = "3a/5x5_reduce"} : (tensor<1x192x28x28xf32>, tensor<16x192x1x1xf32>, none) -> tensor<1x16x28x28xf32>
  %b3 = "onnx.Conv"(%b3a, %w3b, %none) <{kernel_shape = [5 : si64, 5 : si64], pads = [2 : si64, 2 : si64, 2 : si64, 2 : si64]}> {onnx_node_name = "3a/5x5"} : (tensor<1x16x28x28xf32>, tensor<32x16x5x5xf32>, none) -> tensor<1x32x28x28xf32>
  %b4a = "onnx.MaxPool"(%x) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {onnx_node_name = "3a/pool"} : (tensor<1x192x28x28xf32>) -> tensor<1x192x28x28xf32>
  %b4 = "onnx.Conv"(%b4a, %w4, %none) <{kernel_shape = [1 : si64, 1 : si64]}> {onnx_node_name = "3a/pool_proj"} : (tensor<1x192x28x28xf32>, tensor<32x192x1x1xf32>, none) -> tensor<1x32x28x28xf32>
  %cat = "onnx.Concat"(%b1, %b2, %b3, %b4) <{axis = 1 : si64}> {onnx_node_name = "3a/output"} : (tensor<1x64x28x28xf32>, tensor<1x128x28x28xf32>, tensor<1x32x28x28xf32>, tensor<1x32x28x28xf32>) -> tensor<1x256x28x28xf32>
  func.return %cat : tensor<1x256x28x28xf32>
}
}
