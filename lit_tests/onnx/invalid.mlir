// The onnx verifier checks each op against the ONNX schema of the module's opset; errors carry
// the op's file:line:col.
// RUN: ramiel-opt --verify-diagnostics --split-input-file %s | filecheck %s

// Wrong arity: Relu takes one input.
// expected-error @+3 {{onnx.Relu expects 1 operands at opset 17 (since version 14), got 2}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "onnx.Relu"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}

// -----

// Wrong number of results.
// expected-error @+3 {{onnx.Add expects 1 results at opset 17, got 2}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y, %z = "onnx.Add"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %y : tensor<2xf32>
}
}

// -----

// An attribute the schema of this opset does not have: BatchNormalization lost `spatial` in
// opset 9.
// expected-error @+4 {{onnx.BatchNormalization (node 'bn1'): unknown attribute 'spatial'}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %s = "onnx.Constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<2xf32>
  %y = "onnx.BatchNormalization"(%x, %s, %s, %s, %s) <{spatial = 1 : si64}> {onnx_node_name = "bn1"} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %y : tensor<1x2x4x4xf32>
}
}

// -----

// An attribute that no version of the operator has.
// expected-error @+3 {{property 'alpha' is not defined by the operation 'onnx.Relu'}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "onnx.Relu"(%x) <{alpha = 1.0 : f32}> : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}

// -----

// An attribute of the wrong kind: Concat's axis is an INT.
// expected-error @+3 {{onnx.Concat: attribute 'axis' must be INT, got 1.000000e+00 : f32}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<2xf32>) -> tensor<4xf32> {
  %y = "onnx.Concat"(%x, %x) <{axis = 1.0 : f32}> : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
}

// -----

// A missing required attribute: Cast needs `to`.
// expected-error @+3 {{onnx.Cast: missing required attribute 'to'}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<2xf32>) -> tensor<2xi64> {
  %y = "onnx.Cast"(%x) : (tensor<2xf32>) -> tensor<2xi64>
  func.return %y : tensor<2xi64>
}
}

// -----

// A type-constraint violation: Sqrt is defined on floating-point tensors only.
// expected-error @+3 {{onnx.Sqrt: operand 'X' has type tensor(int64), allowed:}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<2xi64>) -> tensor<2xi64> {
  %y = "onnx.Sqrt"(%x) : (tensor<2xi64>) -> tensor<2xi64>
  func.return %y : tensor<2xi64>
}
}

// -----

// One type parameter bound to two element types: Add(f32, f16).
// expected-error @+3 {{onnx.Add: operand 'B' is tensor(float16) but type parameter T is already bound to tensor(float)}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<2xf32>, %h: tensor<2xf16>) -> tensor<2xf32> {
  %y = "onnx.Add"(%x, %h) : (tensor<2xf32>, tensor<2xf16>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}

// -----

// Shapes that do not broadcast.
// expected-error @+3 {{onnx.Mul: operand shapes [(2, 3), (2,)] do not broadcast}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<2x3xf32>, %y: tensor<2xf32>) -> tensor<2x3xf32> {
  %z = "onnx.Mul"(%x, %y) : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return %z : tensor<2x3xf32>
}
}

// -----

// An element-wise op whose result shape is not its operand's (it verified, and the generated
// code returned a (2,) tensor where (3,) was declared).
// expected-error @+3 {{onnx.Relu: result shape (3,) != operand shape (2,) (element-wise)}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<2xf32>) -> tensor<3xf32> {
  %y = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}
}

// -----

// A result shape that is not the broadcast shape.
// expected-error @+3 {{onnx.Add: result shape (3, 3) != broadcast shape (2, 3)}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<2x3xf32>, %y: tensor<3xf32>) -> tensor<3x3xf32> {
  %z = "onnx.Add"(%x, %y) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  func.return %z : tensor<3x3xf32>
}
}

// -----

// Conv: the weight's input channels (times group) must match the input's channels.
// expected-error @+4 {{onnx.Conv (node 'conv1'): X has 3 channels but W expects 4 (group=1)}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<1x3x8x8xf32>) -> tensor<1x8x6x6xf32> {
  %w = "onnx.Constant"() <{value = dense<1.0> : tensor<8x4x3x3xf32>}> : () -> tensor<8x4x3x3xf32>
  %y = "onnx.Conv"(%x, %w) {onnx_node_name = "conv1"} : (tensor<1x3x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return %y : tensor<1x8x6x6xf32>
}
}

// -----

// MatMul: inner dimensions must agree.
// expected-error @+3 {{onnx.MatMul: inner dimensions 3 and 4 differ}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  %c = "onnx.MatMul"(%a, %b) : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return %c : tensor<2x5xf32>
}
}

// -----

// Concat: operands must agree off the concatenation axis.
// expected-error @+3 {{onnx.Concat: operand shapes [(2, 3), (3, 3)] differ off axis 1}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) -> tensor<2x6xf32> {
  %c = "onnx.Concat"(%a, %b) <{axis = 1 : si64}> : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  func.return %c : tensor<2x6xf32>
}
}

// -----

// A required input given as `none`.
// expected-error @+4 {{onnx.Gemm: required input 'B' (operand #1) is none}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %none = "onnx.NoValue"() : () -> none
  %c = "onnx.Gemm"(%a, %none) : (tensor<2x3xf32>, none) -> tensor<2x3xf32>
  func.return %c : tensor<2x3xf32>
}
}

// -----

// An op that does not exist yet at the module's opset: Gelu arrived in opset 20.
// expected-error @+3 {{onnx.Gelu is not defined at opset 17}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "onnx.Gelu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}

// -----

// An attribute that changed into an input: Unsqueeze's `axes` is an input since opset 13.
// expected-error @+4 {{onnx.Unsqueeze: unknown attribute 'axes'}}
builtin.module attributes {onnx.opset = 13 : i64} {
func.func @f(%x: tensor<2xf32>) -> tensor<1x2xf32> {
  %axes = "onnx.Constant"() <{value = dense<0> : tensor<1xi64>}> : () -> tensor<1xi64>
  %y = "onnx.Unsqueeze"(%x, %axes) <{axes = [0 : si64]}> : (tensor<2xf32>, tensor<1xi64>) -> tensor<1x2xf32>
  func.return %y : tensor<1x2xf32>
}
}

// -----

// The same op is valid at opset 11.
// CHECK: "onnx.Unsqueeze"(%x) <{axes = [0 : si64]}>
builtin.module attributes {onnx.opset = 11 : i64} {
func.func @f(%x: tensor<2xf32>) -> tensor<1x2xf32> {
  %y = "onnx.Unsqueeze"(%x) <{axes = [0 : si64]}> : (tensor<2xf32>) -> tensor<1x2xf32>
  func.return %y : tensor<1x2xf32>
}
}

// -----

// float8 element types are checked against the schema like any other: Relu computes on none.
// expected-error @+3 {{onnx.Relu: operand 'X' has type tensor(float8e4m3fn), allowed: ['tensor(bfloat16)'}}
builtin.module attributes {onnx.opset = 21 : i64} {
func.func @f(%x: tensor<2xf8E4M3FN>) -> tensor<2xf8E4M3FN> {
  %y = "onnx.Relu"(%x) : (tensor<2xf8E4M3FN>) -> tensor<2xf8E4M3FN>
  func.return %y : tensor<2xf8E4M3FN>
}
}

// -----

// ramiel.inplace (set by --inplace) is checked: never in place on a graph input.
// expected-error @+3 {{onnx.Relu: ramiel.inplace: operand 0 is not computed by an onnx op in the same block}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "onnx.Relu"(%x) {ramiel.inplace = 0 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}

// -----

// ... nor on a tensor someone else reads (here the function's return).
// expected-error @+4 {{onnx.Add: ramiel.inplace: operand 0 has other uses (a graph output, a channel or another reader)}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %m = "onnx.Mul"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %y = "onnx.Add"(%m, %x) {ramiel.inplace = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y, %m : tensor<2xf32>, tensor<2xf32>
}
}

// -----

// ... nor through a view, and only on the operands an op's in-place form writes.
// expected-error @+5 {{onnx.Relu: ramiel.inplace: operand 0 comes from onnx.Identity, whose result may alias other memory}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %m = "onnx.Mul"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %i = "onnx.Identity"(%m) : (tensor<2xf32>) -> tensor<2xf32>
  %y = "onnx.Relu"(%i) {ramiel.inplace = 0 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}

// -----

// expected-error @+4 {{onnx.Sub: ramiel.inplace: operand 1 of onnx.Sub cannot be overwritten}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
  %m = "onnx.Mul"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %y = "onnx.Sub"(%x, %m) {ramiel.inplace = 1 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}

// -----

// An axis out of the operand's rank (the Python said "Dimension out of range" at run time).
// expected-error @+3 {{onnx.Concat: axis 7 is out of range for an operand of rank 2 ([-2, 1])}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<2x2xf32>) -> tensor<2x4xf32> {
  %y = "onnx.Concat"(%x, %x) <{axis = 7 : si64}> : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
}

// -----

// A LayerNormalization's axis too (its Python had normalised over every dimension).
// expected-error @+4 {{onnx.LayerNormalization: axis 7 is out of range for an operand of rank 3 ([-3, 2])}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %s = "onnx.Constant"() <{value = dense<1.0> : tensor<4xf32>}> : () -> tensor<4xf32>
  %y = "onnx.LayerNormalization"(%x, %s) <{axis = 7 : si64, epsilon = 1.0e-05 : f32}> : (tensor<2x3x4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  func.return %y : tensor<2x3x4xf32>
}
}

// -----

// A window's strides, dilations and pads: >= 1, >= 1 and >= 0.
// expected-error @+4 {{onnx.Conv: strides [0, 1] must each be >= 1}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<1x3x8x8xf32>) -> tensor<1x8x6x6xf32> {
  %w = "onnx.Constant"() <{value = dense<1.0> : tensor<8x3x3x3xf32>}> : () -> tensor<8x3x3x3xf32>
  %y = "onnx.Conv"(%x, %w) <{strides = [0 : si64, 1 : si64]}> : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32>
  func.return %y : tensor<1x8x6x6xf32>
}
}

// -----

// expected-error @+4 {{onnx.MaxPool: pads [-2, 2, 2, 2] must each be >= 0}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x10x10xf32> {
  %c = "onnx.Relu"(%x) : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  %y = "onnx.MaxPool"(%c) <{kernel_shape = [3 : si64, 3 : si64], pads = [-2 : si64, 2 : si64, 2 : si64, 2 : si64]}> : (tensor<1x3x8x8xf32>) -> tensor<1x3x10x10xf32>
  func.return %y : tensor<1x3x10x10xf32>
}
}

// -----

// A Conv's kernel_shape must be its kernel's (it was ignored).
// expected-error @+4 {{onnx.Conv: kernel_shape [3, 3] differs from the kernel's spatial shape [5, 5]}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<1x3x8x8xf32>) -> tensor<1x8x4x4xf32> {
  %w = "onnx.Constant"() <{value = dense<1.0> : tensor<8x3x5x5xf32>}> : () -> tensor<8x3x5x5xf32>
  %y = "onnx.Conv"(%x, %w) <{kernel_shape = [3 : si64, 3 : si64]}> : (tensor<1x3x8x8xf32>, tensor<8x3x5x5xf32>) -> tensor<1x8x4x4xf32>
  func.return %y : tensor<1x8x4x4xf32>
}
}

// -----

// A declared result shape the op's operands and attributes contradict: ReduceMax with keepdims
// (its Python returned (1, 1, 4) where the IR said (1, 4), silently).
// expected-error @+3 {{onnx.ReduceMax: result shape [1, 4] differs from the [1, 1, 4] its operands and attributes give}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<1x3x4xf32>) -> tensor<1x4xf32> {
  %y = "onnx.ReduceMax"(%x) <{axes = [1 : si64], keepdims = 1 : si64}> : (tensor<1x3x4xf32>) -> tensor<1x4xf32>
  func.return %y : tensor<1x4xf32>
}
}

// -----

// expected-error @+4 {{onnx.Gemm: inner dimensions 8 and 6 differ (A [2, 8], transA 0; B [6, 8], transB 0)}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%a: tensor<2x8xf32>) -> tensor<2x6xf32> {
  %b = "onnx.Constant"() <{value = dense<1.0> : tensor<6x8xf32>}> : () -> tensor<6x8xf32>
  %y = "onnx.Gemm"(%a, %b) : (tensor<2x8xf32>, tensor<6x8xf32>) -> tensor<2x6xf32>
  func.return %y : tensor<2x6xf32>
}
}

// -----

// expected-error @+3 {{onnx.Transpose: perm [0, 0, 1] is no permutation of 3 axes}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<1x3x4xf32>) -> tensor<1x1x3xf32> {
  %y = "onnx.Transpose"(%x) <{perm = [0 : si64, 0 : si64, 1 : si64]}> : (tensor<1x3x4xf32>) -> tensor<1x1x3xf32>
  func.return %y : tensor<1x1x3xf32>
}
}

// -----

// LSTM: the initial state's batch must be X's (PyTorch's fused LSTM does not check it and
// corrupted the heap of the generated program).
// expected-error @+6 {{onnx.LSTM: initial_h (input 5) has shape [1, 1, 6], not [1, 2, 6] (num_directions, batch_size, hidden_size; X is [5, 2, 4])}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%x: tensor<5x2x4xf32>, %h: tensor<1x1x6xf32>) -> tensor<1x2x6xf32> {
  %w = "onnx.Constant"() <{value = dense<1.0> : tensor<1x24x4xf32>}> : () -> tensor<1x24x4xf32>
  %r = "onnx.Constant"() <{value = dense<1.0> : tensor<1x24x6xf32>}> : () -> tensor<1x24x6xf32>
  %none = "onnx.NoValue"() : () -> none
  %y, %yh, %yc = "onnx.LSTM"(%x, %w, %r, %none, %none, %h, %none, %none) <{hidden_size = 6 : si64}> : (tensor<5x2x4xf32>, tensor<1x24x4xf32>, tensor<1x24x6xf32>, none, none, tensor<1x1x6xf32>, none, none) -> (tensor<5x1x2x6xf32>, tensor<1x2x6xf32>, tensor<1x2x6xf32>)
  func.return %yh : tensor<1x2x6xf32>
}
}
