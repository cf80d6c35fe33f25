// Expectations that are not met (lit_tests/tools/verify-diagnostics.mlir checks the messages).
// A different text than the error's: the error is unexpected, the expectation not produced.
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @wrong_text(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{onnx.Relu expects 2 operands}}
  %y = "onnx.Relu"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}

// -----

// The right text on the wrong line.
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @wrong_line(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+2 {{onnx.Relu expects 1 operands}}
  %y = "onnx.Relu"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}

// -----

// An error that never comes.
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @missing(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32> // expected-error {{never produced}}
  func.return %y : tensor<2xf32>
}
}

// -----

// An error without any expectation.
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @unexpected(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "onnx.Relu"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}

// -----

// An expectation of another kind on the error's line.
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @wrong_kind(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-warning @+1 {{onnx.Relu expects 1 operands}}
  %y = "onnx.Relu"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}

// -----

// An expectation in one chunk does not match an error of another.
// expected-error @+10 {{onnx.Relu expects 1 operands}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @other_chunk(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
}

// -----

builtin.module attributes {onnx.opset = 17 : i64} {
func.func @this_chunk(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "onnx.Relu"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}

// -----

// Malformed comments are errors, not ignored.
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @malformed(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 onnx.Relu expects 1 operands
  // expected-error @next {{onnx.Relu}}
  %y = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}
