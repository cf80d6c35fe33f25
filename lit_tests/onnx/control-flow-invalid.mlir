// The verifier of If, Loop and Scan: regions against operands and results; errors carry the
// op's file:line:col.
// RUN: ramiel-opt --verify-diagnostics --split-input-file %s

// A branch yields a value of another shape than the result's (a result whose shape depends on
// the condition is dynamic, `?`; the lowering rejects it unless constant folding picks a branch).
// expected-error @+3 {{onnx.If (node 'if0'): result #0 is tensor<4xf32> but else_branch yields tensor<5xf32>}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%c: tensor<i1>, %a: tensor<4xf32>, %b: tensor<5xf32>) -> tensor<4xf32> {
  %r = "onnx.If"(%c) ({
    "onnx.Yield"(%a) : (tensor<4xf32>) -> ()
  }, {
    "onnx.Yield"(%b) : (tensor<5xf32>) -> ()
  }) {onnx_node_name = "if0"} : (tensor<i1>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
}

// -----

// A branch yields the wrong number of values.
// expected-error @+3 {{onnx.If: else_branch yields 2 value(s), the op has 1 result(s)}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%c: tensor<i1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  %r = "onnx.If"(%c) ({
    "onnx.Yield"(%a) : (tensor<4xf32>) -> ()
  }, {
    "onnx.Yield"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> ()
  }) : (tensor<i1>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
}

// -----

// The condition must be one bool.
// expected-error @+3 {{onnx.If: cond must be one bool, got tensor<2xi1>}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%c: tensor<2xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  %r = "onnx.If"(%c) ({
    "onnx.Yield"(%a) : (tensor<4xf32>) -> ()
  }, {
    "onnx.Yield"(%a) : (tensor<4xf32>) -> ()
  }) : (tensor<2xi1>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
}

// -----

// A loop-carried value whose shape the body changes.
// expected-error @+4 {{onnx.Loop: loop-carried value #0 changes type or shape: it enters as tensor<2xf32> and the body yields tensor<4xf32>}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%m: tensor<i64>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %none = "onnx.NoValue"() : () -> none
  %y = "onnx.Loop"(%m, %none, %x) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %acc: tensor<2xf32>):
    %n = "onnx.Concat"(%acc, %acc) <{axis = 0 : si64}> : (tensor<2xf32>, tensor<2xf32>) -> tensor<4xf32>
    "onnx.Yield"(%c, %n) : (tensor<i1>, tensor<4xf32>) -> ()
  }) : (tensor<i64>, none, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}

// -----

// The body of a Loop takes iteration_num, cond and one argument per carried value.
// expected-error @+4 {{onnx.Loop: the body takes 2 argument(s), expected 2 + 1}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%m: tensor<i64>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %none = "onnx.NoValue"() : () -> none
  %y = "onnx.Loop"(%m, %none, %x) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>):
    "onnx.Yield"(%c, %x) : (tensor<i1>, tensor<2xf32>) -> ()
  }) : (tensor<i64>, none, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}

// -----

// A scan output must be the yielded slice stacked on a new axis.
// expected-error @+3 {{onnx.Scan: scan output #0 is tensor<5x3xf32>, which is not the body's tensor<2xf32> stacked on axis 0}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @f(%s0: tensor<2xf32>, %xs: tensor<5x2xf32>) -> tensor<5x3xf32> {
  %s, %ys = "onnx.Scan"(%s0, %xs) <{num_scan_inputs = 1 : si64}> ({
  ^bb0(%acc: tensor<2xf32>, %x: tensor<2xf32>):
    "onnx.Yield"(%acc, %x) : (tensor<2xf32>, tensor<2xf32>) -> ()
  }) : (tensor<2xf32>, tensor<5x2xf32>) -> (tensor<2xf32>, tensor<5x3xf32>)
  func.return %ys : tensor<5x3xf32>
}
}

// -----

// onnx.Yield only ends the regions of If, Loop and Scan.
// expected-error @+3 {{onnx.Yield must end a region of onnx.If, onnx.Loop or onnx.Scan}}
builtin.module attributes {onnx.opset = 17 : i64} {
%x = "onnx.Constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<2xf32>
"onnx.Yield"(%x) : (tensor<2xf32>) -> ()
}
