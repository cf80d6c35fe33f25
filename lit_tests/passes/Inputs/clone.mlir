builtin.module attributes {onnx.opset = 17 : i64} {
func.func @unsqueeze(%x: tensor<4x4xf32>) -> tensor<1x4x4xf32> {
  %ax = "onnx.Constant"() <{value = dense<0> : tensor<1xi64>}> : () -> tensor<1xi64>
  %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
    %u = "onnx.Unsqueeze"(%x, %ax) {onnx_node_name = "u", ramiel.cost_us = 5.0 : f64} : (tensor<4x4xf32>, tensor<1xi64>) -> tensor<1x4x4xf32>
    "cluster.send"(%u) <{channel = "u"}> : (tensor<1x4x4xf32>) -> ()
    %b1 = "onnx.Sigmoid"(%u) {ramiel.cost_us = 300.0 : f64} : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %b2 = "cluster.recv"() <{channel = "b2"}> : () -> tensor<1x4x4xf32>
    %j = "onnx.Add"(%b1, %b2) {ramiel.cost_us = 10.0 : f64} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    "cluster.yield"(%j) : (tensor<1x4x4xf32>) -> ()
  }) : () -> tensor<1x4x4xf32>
  "cluster.cluster"() <{sym_name = "c1"}> ({
    %u1 = "cluster.recv"() <{channel = "u"}> : () -> tensor<1x4x4xf32>
    %b2 = "onnx.Tanh"(%u1) {ramiel.cost_us = 200.0 : f64} : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    "cluster.send"(%b2) <{channel = "b2"}> : (tensor<1x4x4xf32>) -> ()
    "cluster.yield"() : () -> ()
  }) : () -> ()
  func.return %0 : tensor<1x4x4xf32>
}
}
