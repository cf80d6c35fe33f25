// Control flow in the onnx dialect: If, Loop and Scan hold their subgraphs as regions (like
// onnx-mlir's ONNXIfOp/ONNXLoopOp/ONNXScanOp), each ending in onnx.Yield; regions read values of
// the enclosing blocks directly (ONNX's outer-scope names). Round trip: parse, verify, print.
// RUN: ramiel-opt %s | filecheck %s
// RUN: ramiel-opt %s | ramiel-opt | filecheck %s

builtin.module attributes {onnx.opset = 17 : i64} {
  // CHECK-LABEL: func.func @if_with_capture
  // CHECK:      %r = "onnx.If"(%c) ({
  // CHECK-NEXT:   %a = "onnx.Relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK-NEXT:   "onnx.Yield"(%a) : (tensor<4xf32>) -> ()
  // CHECK-NEXT: }, {
  // CHECK-NEXT:   "onnx.Yield"(%x) : (tensor<4xf32>) -> ()
  // CHECK-NEXT: }) {onnx_node_name = "if0"} : (tensor<i1>) -> tensor<4xf32>
  func.func @if_with_capture(%c: tensor<i1>, %x: tensor<4xf32>) -> tensor<4xf32> {
    %r = "onnx.If"(%c) ({
      %a = "onnx.Relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
      "onnx.Yield"(%a) : (tensor<4xf32>) -> ()
    }, {
      "onnx.Yield"(%x) : (tensor<4xf32>) -> ()
    }) {onnx_node_name = "if0"} : (tensor<i1>) -> tensor<4xf32>
    func.return %r : tensor<4xf32>
  }

  // Loop: M, cond, one carried value (i64 and f32 carried together: the carried values'
  // types are independent), one scan output stacked on a new leading axis of length M.
  // CHECK-LABEL: func.func @loop
  // CHECK:      %y, %k, %ys = "onnx.Loop"(%m, %none, %x, %k0) ({
  // CHECK-NEXT: ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %acc: tensor<2xf32>, %kk: tensor<i64>):
  // CHECK:        "onnx.Yield"(%cond, %next, %k1, %next) : (tensor<i1>, tensor<2xf32>, tensor<i64>, tensor<2xf32>) -> ()
  // CHECK-NEXT: }) : (tensor<i64>, none, tensor<2xf32>, tensor<i64>) -> (tensor<2xf32>, tensor<i64>, tensor<3x2xf32>)
  func.func @loop(%x: tensor<2xf32>, %w: tensor<2xf32>) -> tensor<3x2xf32> {
    %m = "onnx.Constant"() <{value = dense<3> : tensor<i64>}> : () -> tensor<i64>
    %k0 = "onnx.Constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
    %none = "onnx.NoValue"() : () -> none
    %y, %k, %ys = "onnx.Loop"(%m, %none, %x, %k0) ({
    ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %acc: tensor<2xf32>, %kk: tensor<i64>):
      %next = "onnx.Add"(%acc, %w) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      %k1 = "onnx.Add"(%kk, %i) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      "onnx.Yield"(%cond, %next, %k1, %next) : (tensor<i1>, tensor<2xf32>, tensor<i64>, tensor<2xf32>) -> ()
    }) : (tensor<i64>, none, tensor<2xf32>, tensor<i64>) -> (tensor<2xf32>, tensor<i64>, tensor<3x2xf32>)
    func.return %ys : tensor<3x2xf32>
  }

  // Scan (opset 9+): one state, one scanned input, one scan output.
  // CHECK-LABEL: func.func @scan
  // CHECK:      %s, %ys = "onnx.Scan"(%s0, %xs) <{num_scan_inputs = 1 : si64}> ({
  // CHECK-NEXT: ^bb0(%acc: tensor<2xf32>, %x: tensor<2xf32>):
  func.func @scan(%s0: tensor<2xf32>, %xs: tensor<5x2xf32>) -> tensor<5x2xf32> {
    %s, %ys = "onnx.Scan"(%s0, %xs) <{num_scan_inputs = 1 : si64}> ({
    ^bb0(%acc: tensor<2xf32>, %x: tensor<2xf32>):
      %n = "onnx.Add"(%acc, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      "onnx.Yield"(%n, %n) : (tensor<2xf32>, tensor<2xf32>) -> ()
    }) : (tensor<2xf32>, tensor<5x2xf32>) -> (tensor<2xf32>, tensor<5x2xf32>)
    func.return %ys : tensor<5x2xf32>
  }
}
