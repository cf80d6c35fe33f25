// ramiel-opt --verify-diagnostics with MLIR's semantics: every expected-<kind> comment must be
// met by a diagnostic of its kind on its line, each chunk alone, and every diagnostic expected.
// This file meets all of them: exit status 0, and the chunks without a diagnostic are printed.
// RUN: ramiel-opt --verify-diagnostics --split-input-file %s | filecheck %s
// The failing cases (a wrong text, a missing or an unexpected diagnostic): exit status 1, each
// mismatch one located line on stderr.
// RUN: %not ramiel-opt --verify-diagnostics --split-input-file %S/Inputs/wrong-expectations.mlir 2>%t.err >/dev/null
// RUN: filecheck %s --check-prefix=WRONG --match-full-lines < %t.err
// WRONG:      {{.*}}wrong-expectations.mlir:6:3: error: unexpected error: onnx.Relu expects 1 operands at opset 17 (since version 14), got 2
// WRONG-NEXT: {{.*}}wrong-expectations.mlir:5:6: error: expected error "onnx.Relu expects 2 operands" was not produced
// WRONG-NEXT: {{.*}}wrong-expectations.mlir:17:3: error: unexpected error: onnx.Relu expects 1 operands {{.*}}
// WRONG-NEXT: {{.*}}wrong-expectations.mlir:16:6: error: expected error "onnx.Relu expects 1 operands" was not produced
// WRONG-NEXT: {{.*}}wrong-expectations.mlir:27:62: error: expected error "never produced" was not produced
// WRONG-NEXT: {{.*}}wrong-expectations.mlir:37:3: error: unexpected error: onnx.Relu expects 1 operands {{.*}}
// WRONG-NEXT: {{.*}}wrong-expectations.mlir:48:3: error: 'error' diagnostic emitted when expecting a 'warning'
// WRONG-NEXT: {{.*}}wrong-expectations.mlir:56:4: error: expected error "onnx.Relu expects 1 operands" was not produced
// WRONG-NEXT: {{.*}}wrong-expectations.mlir:67:3: error: unexpected error: onnx.Relu expects 1 operands {{.*}}
// WRONG-NEXT: {{.*}}wrong-expectations.mlir:77:6: error: expected-error without its {{[{][{]}}message{{[}][}]}}
// WRONG-NEXT: {{.*}}wrong-expectations.mlir:78:6: error: unknown designator '@next' (@+N, @-N, @above, @below, @unknown)
// WRONG-EMPTY:

// The expectation on the op's own line.
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @same_line(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "onnx.Relu"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> // expected-error {{onnx.Relu expects 1 operands}}
  func.return %y : tensor<2xf32>
}
}

// -----

// @+N and @-N count lines from the comment.
// expected-error @+3 {{onnx.Relu expects 1 operands}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @relative(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "onnx.Relu"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}

// -----

builtin.module attributes {onnx.opset = 17 : i64} {
func.func @relative_above(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "onnx.Relu"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>

  // expected-error @-2 {{onnx.Relu expects 1 operands}}
  func.return %y : tensor<2xf32>
}
}

// -----

// @below: the next line without an expected-* comment; @above: the last one.
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @below(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @below {{onnx.Add: result shape (3,) != broadcast shape (2,)}}
  %y = "onnx.Add"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xf32>
  func.return %y : tensor<3xf32>
}
}

// -----

builtin.module attributes {onnx.opset = 17 : i64} {
func.func @above(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "onnx.Add"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<3xf32>
  // expected-error @above {{result shape (3,) != broadcast shape (2,)}}
  func.return %y : tensor<3xf32>
}
}

// -----

// -re: the {{...}} pieces inside the text are regular expressions, the rest literal text.
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @regex(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error-re @+1 {{onnx.Relu expects {{[0-9]+}} operands at opset 17 (since version {{.*}}), got 2}}
  %y = "onnx.Relu"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}

// -----

// A syntax error is a diagnostic too, at its position.
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @syntax(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "onnx.Relu"(%x : (tensor<2xf32>) -> tensor<2xf32> // expected-error {{')' expected in operation argument list}}
  func.return %y : tensor<2xf32>
}
}

// -----

// A chunk without diagnostics is printed as without the flag.
// CHECK:      func.func @valid(%x: tensor<2xf32>) -> tensor<2xf32> {
// CHECK-NEXT:   %y = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @valid(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}
// An error a pass raises, without a location, is expected @unknown.
// RUN: ramiel-opt --verify-diagnostics --linear-cluster --merge{clusters=0} %S/Inputs/unknown-location.mlir
