// Round trip of the onnx dialect: parse, verify, print; the printed text parses back to itself.
// RUN: ramiel-opt %s | filecheck %s
// RUN: ramiel-opt %s | ramiel-opt | filecheck %s

// CHECK: builtin.module attributes {onnx.opset = 20 : i64}
builtin.module attributes {onnx.opset = 20 : i64} {
  // CHECK-LABEL: func.func @cnn
  func.func @cnn(%x: tensor<1x3x8x8xf32>) -> tensor<1x10xf32> {
    // CHECK:      %none = "onnx.NoValue"() : () -> none
    // CHECK-NEXT: %w = "onnx.Constant"() <{value = dense<1.000000e-01> : tensor<4x3x3x3xf32>}> : () -> tensor<4x3x3x3xf32>
    // CHECK-NEXT: %conv = "onnx.Conv"(%x, %w, %none) <{group = 1 : si64, kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {onnx_node_name = "conv0"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x8x8xf32>
    %none = "onnx.NoValue"() : () -> none
    %w = "onnx.Constant"() <{value = dense<0.1> : tensor<4x3x3x3xf32>}> : () -> tensor<4x3x3x3xf32>
    %conv = "onnx.Conv"(%x, %w, %none) <{group = 1 : si64, kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {onnx_node_name = "conv0"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x8x8xf32>
    // CHECK-NEXT: %scale = "onnx.Constant"() <{value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>}>
    // CHECK:      %bn = "onnx.BatchNormalization"(%conv, %scale, %scale, %scale, %scale) <{epsilon = 1.000000e-05 : f32}>
    %scale = "onnx.Constant"() <{value = dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>}> : () -> tensor<4xf32>
    %bn = "onnx.BatchNormalization"(%conv, %scale, %scale, %scale, %scale) <{epsilon = 1.0e-05 : f32}> : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
    %r = "onnx.Relu"(%bn) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
    // Multiple results: MaxPool's optional Indices output.
    // CHECK: %pool, %idx = "onnx.MaxPool"(%r) <{kernel_shape = [2 : si64, 2 : si64], strides = [2 : si64, 2 : si64]}> : (tensor<1x4x8x8xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xi64>)
    %pool, %idx = "onnx.MaxPool"(%r) <{kernel_shape = [2 : si64, 2 : si64], strides = [2 : si64, 2 : si64]}> : (tensor<1x4x8x8xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x4x4x4xi64>)
    // Variadic operands: Concat and Sum.
    // CHECK: %cat = "onnx.Concat"(%pool, %pool, %pool) <{axis = 1 : si64}> : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x12x4x4xf32>
    // CHECK: %sum = "onnx.Sum"(%pool, %pool, %pool, %pool) : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
    %cat = "onnx.Concat"(%pool, %pool, %pool) <{axis = 1 : si64}> : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x12x4x4xf32>
    %sum = "onnx.Sum"(%pool, %pool, %pool, %pool) : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
    %gap = "onnx.GlobalAveragePool"(%cat) : (tensor<1x12x4x4xf32>) -> tensor<1x12x1x1xf32>
    // CHECK: %flat = "onnx.Flatten"(%gap) <{axis = 1 : si64}>
    %flat = "onnx.Flatten"(%gap) <{axis = 1 : si64}> : (tensor<1x12x1x1xf32>) -> tensor<1x12xf32>
    %fc_w = "onnx.Constant"() <{value = dense<0.5> : tensor<10x12xf32>}> : () -> tensor<10x12xf32>
    %fc_b = "onnx.Constant"() <{value = dense<0.0> : tensor<10xf32>}> : () -> tensor<10xf32>
    // CHECK: %fc = "onnx.Gemm"(%flat, %fc_w, %fc_b) <{alpha = 1.000000e+00 : f32, transB = 1 : si64}>
    %fc = "onnx.Gemm"(%flat, %fc_w, %fc_b) <{alpha = 1.0 : f32, transB = 1 : si64}> : (tensor<1x12xf32>, tensor<10x12xf32>, tensor<10xf32>) -> tensor<1x10xf32>
    // CHECK: %prob = "onnx.Softmax"(%fc) <{axis = -1 : si64}>
    %prob = "onnx.Softmax"(%fc) <{axis = -1 : si64}> : (tensor<1x10xf32>) -> tensor<1x10xf32>
    // CHECK: func.return %prob : tensor<1x10xf32>
    func.return %prob : tensor<1x10xf32>
  }

  // CHECK-LABEL: func.func @shapes
  func.func @shapes(%x: tensor<2x3x4xf32>) -> (tensor<4x6xf32>, tensor<2x3x2xf32>, tensor<2x3x2xf32>, tensor<2x3x4xf16>) {
    // CHECK: %s = "onnx.Shape"(%x) <{start = 1 : si64}> : (tensor<2x3x4xf32>) -> tensor<2xi64>
    %s = "onnx.Shape"(%x) <{start = 1 : si64}> : (tensor<2x3x4xf32>) -> tensor<2xi64>
    %i = "onnx.Constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    // CHECK: %g = "onnx.Gather"(%s, %i) <{axis = 0 : si64}> : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
    %g = "onnx.Gather"(%s, %i) <{axis = 0 : si64}> : (tensor<2xi64>, tensor<i64>) -> tensor<i64>
    %axes = "onnx.Constant"() <{value = dense<0> : tensor<1xi64>}> : () -> tensor<1xi64>
    %u = "onnx.Unsqueeze"(%g, %axes) : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
    %m1 = "onnx.Constant"() <{value = dense<-1> : tensor<1xi64>}> : () -> tensor<1xi64>
    %shape = "onnx.Concat"(%u, %m1) <{axis = 0 : si64}> : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
    // CHECK: %t = "onnx.Transpose"(%x) <{perm = [2 : si64, 0 : si64, 1 : si64]}> : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
    %t = "onnx.Transpose"(%x) <{perm = [2 : si64, 0 : si64, 1 : si64]}> : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
    // CHECK: %y = "onnx.Reshape"(%t, %shape) : (tensor<4x2x3xf32>, tensor<2xi64>) -> tensor<4x6xf32>
    %y = "onnx.Reshape"(%t, %shape) : (tensor<4x2x3xf32>, tensor<2xi64>) -> tensor<4x6xf32>
    // Multiple results and a variadic result count: Split.
    // CHECK: %a, %b = "onnx.Split"(%x) <{axis = 2 : si64, num_outputs = 2 : si64}> : (tensor<2x3x4xf32>) -> (tensor<2x3x2xf32>, tensor<2x3x2xf32>)
    %a, %b = "onnx.Split"(%x) <{axis = 2 : si64, num_outputs = 2 : si64}> : (tensor<2x3x4xf32>) -> (tensor<2x3x2xf32>, tensor<2x3x2xf32>)
    // A none operand in the middle: Clip without min.
    %none = "onnx.NoValue"() : () -> none
    %hi = "onnx.Constant"() <{value = dense<6.0> : tensor<f32>}> : () -> tensor<f32>
    // CHECK: %c = "onnx.Clip"(%a, %none, %hi) : (tensor<2x3x2xf32>, none, tensor<f32>) -> tensor<2x3x2xf32>
    %c = "onnx.Clip"(%a, %none, %hi) : (tensor<2x3x2xf32>, none, tensor<f32>) -> tensor<2x3x2xf32>
    // CHECK: %h = "onnx.Cast"(%x) <{to = 10 : si64}> : (tensor<2x3x4xf32>) -> tensor<2x3x4xf16>
    %h = "onnx.Cast"(%x) <{to = 10 : si64}> : (tensor<2x3x4xf32>) -> tensor<2x3x4xf16>
    func.return %y, %c, %b, %h : tensor<4x6xf32>, tensor<2x3x2xf32>, tensor<2x3x2xf32>, tensor<2x3x4xf16>
  }

  // CHECK-LABEL: func.func @encoder
  func.func @encoder(%x: tensor<1x4x8xf32>, %ids: tensor<1x4xi64>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
    %emb = "onnx.Constant"() <{value = dense_resource<embedding> : tensor<100x8xf32>}> : () -> tensor<100x8xf32>
    // CHECK: %e = "onnx.Gather"(%emb, %ids) : (tensor<100x8xf32>, tensor<1x4xi64>) -> tensor<1x4x8xf32>
    %e = "onnx.Gather"(%emb, %ids) : (tensor<100x8xf32>, tensor<1x4xi64>) -> tensor<1x4x8xf32>
    %g = "onnx.Constant"() <{value = dense<1.0> : tensor<8xf32>}> : () -> tensor<8xf32>
    // CHECK: %ln, %mean, %inv = "onnx.LayerNormalization"(%e, %g, %g) <{axis = -1 : si64, epsilon = 1.000000e-05 : f32}> : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x1xf32>, tensor<1x4x1xf32>)
    %ln, %mean, %inv = "onnx.LayerNormalization"(%e, %g, %g) <{axis = -1 : si64, epsilon = 1.0e-05 : f32}> : (tensor<1x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x1xf32>, tensor<1x4x1xf32>)
    %wt = "onnx.Constant"() <{value = dense<0.25> : tensor<8x8xf32>}> : () -> tensor<8x8xf32>
    // CHECK: %mm = "onnx.MatMul"(%ln, %wt) : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    %mm = "onnx.MatMul"(%ln, %wt) : (tensor<1x4x8xf32>, tensor<8x8xf32>) -> tensor<1x4x8xf32>
    %two = "onnx.Constant"() <{value = dense<2.0> : tensor<f32>}> : () -> tensor<f32>
    %p = "onnx.Pow"(%mm, %two) : (tensor<1x4x8xf32>, tensor<f32>) -> tensor<1x4x8xf32>
    %sq = "onnx.Sqrt"(%p) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    %er = "onnx.Erf"(%sq) : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    // CHECK: %gelu = "onnx.Gelu"(%x) <{approximate = "tanh"}> : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    %gelu = "onnx.Gelu"(%x) <{approximate = "tanh"}> : (tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    %cond = "onnx.Equal"(%er, %gelu) : (tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xi1>
    // CHECK: %sel = "onnx.Where"(%cond, %er, %gelu) : (tensor<1x4x8xi1>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    %sel = "onnx.Where"(%cond, %er, %gelu) : (tensor<1x4x8xi1>, tensor<1x4x8xf32>, tensor<1x4x8xf32>) -> tensor<1x4x8xf32>
    %axes = "onnx.Constant"() <{value = dense<-1> : tensor<1xi64>}> : () -> tensor<1xi64>
    // CHECK: %rm = "onnx.ReduceMean"(%sel, %axes) <{keepdims = 1 : si64}> : (tensor<1x4x8xf32>, tensor<1xi64>) -> tensor<1x4x1xf32>
    %rm = "onnx.ReduceMean"(%sel, %axes) <{keepdims = 1 : si64}> : (tensor<1x4x8xf32>, tensor<1xi64>) -> tensor<1x4x1xf32>
    %out = "onnx.Sub"(%sel, %rm) : (tensor<1x4x8xf32>, tensor<1x4x1xf32>) -> tensor<1x4x8xf32>
    // CHECK: %dr, %mask = "onnx.Dropout"(%out) : (tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xi1>)
    %dr, %mask = "onnx.Dropout"(%out) : (tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xi1>)
    func.return %dr, %mm : tensor<1x4x8xf32>, tensor<1x4x8xf32>
  }

  // float8 element types (opset 19) are MLIR's builtin ones (f8E4M3FN, f8E4M3FNUZ, f8E5M2,
  // f8E5M2FNUZ; f8E8M0FNU from opset 24), inline constants included.
  // CHECK-LABEL: func.func @float8
  func.func @float8(%x: tensor<2x2xf8E4M3FN>) -> (tensor<4xf32>, tensor<2x2xf8E5M2FNUZ>, tensor<2xf8E5M2>) {
    // CHECK: %c = "onnx.Constant"() <{value = dense<[1.000000e+00, -2.400000e+02]> : tensor<2xf8E4M3FNUZ>}> : () -> tensor<2xf8E4M3FNUZ>
    %c = "onnx.Constant"() <{value = dense<[1.0, -240.0]> : tensor<2xf8E4M3FNUZ>}> : () -> tensor<2xf8E4M3FNUZ>
    %shape = "onnx.Constant"() <{value = dense<4> : tensor<1xi64>}> : () -> tensor<1xi64>
    // CHECK: %r = "onnx.Reshape"(%x, %shape) : (tensor<2x2xf8E4M3FN>, tensor<1xi64>) -> tensor<4xf8E4M3FN>
    %r = "onnx.Reshape"(%x, %shape) : (tensor<2x2xf8E4M3FN>, tensor<1xi64>) -> tensor<4xf8E4M3FN>
    // CHECK: %f = "onnx.Cast"(%r) <{to = 1 : si64}> : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
    %f = "onnx.Cast"(%r) <{to = 1 : si64}> : (tensor<4xf8E4M3FN>) -> tensor<4xf32>
    // CHECK: %e = "onnx.Cast"(%x) <{saturate = 0 : si64, to = 20 : si64}> : (tensor<2x2xf8E4M3FN>) -> tensor<2x2xf8E5M2FNUZ>
    %e = "onnx.Cast"(%x) <{saturate = 0 : si64, to = 20 : si64}> : (tensor<2x2xf8E4M3FN>) -> tensor<2x2xf8E5M2FNUZ>
    // CHECK: %s = "onnx.Constant"() <{value = dense<0x7c> : tensor<f8E5M2>}>
    // CHECK: %m = "onnx.CastLike"(%c, %s) : (tensor<2xf8E4M3FNUZ>, tensor<f8E5M2>) -> tensor<2xf8E5M2>
    %s = "onnx.Constant"() <{value = dense<0x7C> : tensor<f8E5M2>}> : () -> tensor<f8E5M2>
    %m = "onnx.CastLike"(%c, %s) : (tensor<2xf8E4M3FNUZ>, tensor<f8E5M2>) -> tensor<2xf8E5M2>
    func.return %f, %e, %m : tensor<4xf32>, tensor<2x2xf8E5M2FNUZ>, tensor<2xf8E5M2>
  }
  // A broadcast whose operand shape is known only after constant folding (`?` from Shape ->
  // Range): the verifier leaves it to the folded IR and does not check the op as a unary
  // element-wise one (it had refused this valid op: result shape != operand shape).
  // CHECK-LABEL: func.func @late_broadcast
  // CHECK: %y = "onnx.Add"(%x, %m) : (tensor<2x6xf32>, tensor<1x1x1x?xf32>) -> tensor<1x1x2x6xf32>
  func.func @late_broadcast(%x: tensor<2x6xf32>, %m: tensor<1x1x1x?xf32>) -> tensor<1x1x2x6xf32> {
    %y = "onnx.Add"(%x, %m) : (tensor<2x6xf32>, tensor<1x1x1x?xf32>) -> tensor<1x1x2x6xf32>
    func.return %y : tensor<1x1x2x6xf32>
  }
}
