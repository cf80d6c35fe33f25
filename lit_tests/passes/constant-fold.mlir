// RUN: ramiel-opt %s --split-input-file --constant-fold | filecheck %s
// RUN: ramiel-opt %s --split-input-file --constant-fold --dce | filecheck %s --check-prefix=DCE

// A ConstantOfShape weight (the ONNX zoo files) becomes a compact splat constant that keeps the
// node name; the shape constant it read is left for --dce.
// CHECK-LABEL: func.func @constant_of_shape
// CHECK-NEXT:    %shape = "onnx.Constant"() <{value = dense<[4096, 25088]> : tensor<2xi64>}>
// CHECK-NEXT:    %w = "onnx.Constant"() <{value = dense<2.000000e-02> : tensor<4096x25088xf32>}> {onnx_node_name = "fc6_w"} : () -> tensor<4096x25088xf32>
// CHECK-NEXT:    func.return %w
// DCE-LABEL:   func.func @constant_of_shape
// DCE-NEXT:      %w = "onnx.Constant"()
// DCE-NEXT:      func.return %w
builtin.module attributes {onnx.opset = 9 : i64} {
func.func @constant_of_shape() -> tensor<4096x25088xf32> {
  %shape = "onnx.Constant"() <{value = dense<[4096, 25088]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %w = "onnx.ConstantOfShape"(%shape) <{value = dense<0.02> : tensor<1xf32>}> {onnx_node_name = "fc6_w"} : (tensor<2xi64>) -> tensor<4096x25088xf32>
  func.return %w : tensor<4096x25088xf32>
}
}

// -----

// ConstantOfShape without a value attribute gives float32 zeros.
// CHECK-LABEL: func.func @zeros
// CHECK:         "onnx.Constant"() <{value = dense<0.000000e+00> : tensor<3x2xf32>}>
// CHECK-NOT:     onnx.ConstantOfShape
builtin.module attributes {onnx.opset = 9 : i64} {
func.func @zeros() -> tensor<3x2xf32> {
  %shape = "onnx.Constant"() <{value = dense<[3, 2]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %z = "onnx.ConstantOfShape"(%shape) : (tensor<2xi64>) -> tensor<3x2xf32>
  func.return %z : tensor<3x2xf32>
}
}

// -----

// Element-wise ops and data-movement ops on splats stay splats (computed from one element, so
// nothing of the large size is ever materialised).
// CHECK-LABEL: func.func @splat_arith
// CHECK:         %scaled = "onnx.Constant"() <{value = dense<3.000000e+00> : tensor<1024x1024xf32>}>
// CHECK:         %u = "onnx.Constant"() <{value = dense<3.000000e+00> : tensor<1024x1x1024xf32>}>
// CHECK-NOT:     onnx.Mul
// CHECK-NOT:     onnx.Unsqueeze
builtin.module attributes {onnx.opset = 11 : i64} {
func.func @splat_arith() -> tensor<1024x1x1024xf32> {
  %a = "onnx.Constant"() <{value = dense<1.5> : tensor<1024x1024xf32>}> : () -> tensor<1024x1024xf32>
  %two = "onnx.Constant"() <{value = dense<2.0> : tensor<f32>}> : () -> tensor<f32>
  %scaled = "onnx.Mul"(%a, %two) : (tensor<1024x1024xf32>, tensor<f32>) -> tensor<1024x1024xf32>
  %u = "onnx.Unsqueeze"(%scaled) <{axes = [1 : si64]}> : (tensor<1024x1024xf32>) -> tensor<1024x1x1024xf32>
  func.return %u : tensor<1024x1x1024xf32>
}
}

// -----

// Small non-splat results are folded inline.
// CHECK-LABEL: func.func @small
// CHECK:         %s = "onnx.Constant"() <{value = dense<[5, 7, 9]> : tensor<3xi64>}>
// CHECK:         %f = "onnx.Constant"() <{value = dense<[5.000000e+00, 7.000000e+00, 9.000000e+00]> : tensor<3xf32>}>
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @small() -> tensor<3xf32> {
  %a = "onnx.Constant"() <{value = dense<[1, 2, 3]> : tensor<3xi64>}> : () -> tensor<3xi64>
  %b = "onnx.Constant"() <{value = dense<[4, 5, 6]> : tensor<3xi64>}> : () -> tensor<3xi64>
  %s = "onnx.Add"(%a, %b) : (tensor<3xi64>, tensor<3xi64>) -> tensor<3xi64>
  %f = "onnx.Cast"(%s) <{to = 1 : si64}> : (tensor<3xi64>) -> tensor<3xf32>
  func.return %f : tensor<3xf32>
}
}

// -----

// Shape of a statically shaped tensor is a constant although the tensor is not: the PyTorch
// export chain Shape -> Gather -> Unsqueeze -> Concat folds to the Reshape's shape operand.
// CHECK-LABEL: func.func @shape_chain
// CHECK-DAG:     %shape = "onnx.Constant"() <{value = dense<[2, 3, 4]> : tensor<3xi64>}>
// CHECK-DAG:     %dim = "onnx.Constant"() <{value = dense<2> : tensor<i64>}>
// CHECK-DAG:     %dim1 = "onnx.Constant"() <{value = dense<2> : tensor<1xi64>}>
// CHECK-DAG:     %target = "onnx.Constant"() <{value = dense<[2, -1]> : tensor<2xi64>}>
// CHECK:         %y = "onnx.Reshape"(%x, %target) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
// DCE-LABEL:   func.func @shape_chain
// DCE-NEXT:      %target = "onnx.Constant"() <{value = dense<[2, -1]> : tensor<2xi64>}>
// DCE-NEXT:      %y = "onnx.Reshape"(%x, %target)
// DCE-NEXT:      func.return %y
builtin.module attributes {onnx.opset = 13 : i64} {
func.func @shape_chain(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  %shape = "onnx.Shape"(%x) : (tensor<2x3x4xf32>) -> tensor<3xi64>
  %zero = "onnx.Constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
  %dim = "onnx.Gather"(%shape, %zero) <{axis = 0 : si64}> : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %axes = "onnx.Constant"() <{value = dense<0> : tensor<1xi64>}> : () -> tensor<1xi64>
  %dim1 = "onnx.Unsqueeze"(%dim, %axes) : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %minus1 = "onnx.Constant"() <{value = dense<-1> : tensor<1xi64>}> : () -> tensor<1xi64>
  %target = "onnx.Concat"(%dim1, %minus1) <{axis = 0 : si64}> : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  %y = "onnx.Reshape"(%x, %target) : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x12xf32>
  func.return %y : tensor<2x12xf32>
}
}

// -----

// Shape with start/end (opset 15) and Size.
// CHECK-LABEL: func.func @shape_slice
// CHECK:         %s = "onnx.Constant"() <{value = dense<[3, 4]> : tensor<2xi64>}>
// CHECK:         %n = "onnx.Constant"() <{value = dense<24> : tensor<i64>}>
builtin.module attributes {onnx.opset = 15 : i64} {
func.func @shape_slice(%x: tensor<2x3x4xf32>) -> (tensor<2xi64>, tensor<i64>) {
  %s = "onnx.Shape"(%x) <{start = 1 : si64}> : (tensor<2x3x4xf32>) -> tensor<2xi64>
  %n = "onnx.Size"(%x) : (tensor<2x3x4xf32>) -> tensor<i64>
  func.return %s, %n : tensor<2xi64>, tensor<i64>
}
}

// -----

// Shape of a tensor with a dynamic dimension is not a constant.
// CHECK-LABEL: func.func @dynamic_shape
// CHECK:         "onnx.Shape"(%x)
builtin.module attributes {onnx.opset = 13 : i64} {
func.func @dynamic_shape(%x: tensor<?x3xf32>) -> tensor<2xi64> {
  %s = "onnx.Shape"(%x) : (tensor<?x3xf32>) -> tensor<2xi64>
  func.return %s : tensor<2xi64>
}
}

// -----

// Result types refine once operands are constant: the Reshape's unranked result becomes static,
// and so does the function's result type.
// CHECK-LABEL: func.func @refine
// CHECK-SAME:    -> tensor<6x4xf32>
// CHECK:         %y = "onnx.Reshape"(%x, %shape) : (tensor<4x6xf32>, tensor<2xi64>) -> tensor<6x4xf32>
// CHECK:         %r = "onnx.Relu"(%y) : (tensor<6x4xf32>) -> tensor<6x4xf32>
// CHECK:         func.return %r : tensor<6x4xf32>
builtin.module attributes {onnx.opset = 13 : i64} {
func.func @refine(%x: tensor<4x6xf32>) -> tensor<*xf32> {
  %a = "onnx.Constant"() <{value = dense<[3, 2]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %b = "onnx.Constant"() <{value = dense<[2, 2]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %shape = "onnx.Mul"(%a, %b) : (tensor<2xi64>, tensor<2xi64>) -> tensor<?xi64>
  %y = "onnx.Reshape"(%x, %shape) : (tensor<4x6xf32>, tensor<?xi64>) -> tensor<*xf32>
  %r = "onnx.Relu"(%y) : (tensor<*xf32>) -> tensor<*xf32>
  func.return %r : tensor<*xf32>
}
}

// -----

// A large non-splat result no larger than its constant operands (a Transpose of a weight) is
// folded, so no inference recomputes it. This module has no weights file (every constant is
// inline), so the result is inline too; with one, it becomes a new weight
// (constant-fold-weights.test).
// CHECK-LABEL: func.func @large_result
// CHECK-NEXT:    %w = "onnx.Constant"()
// CHECK-NEXT:    %t = "onnx.Constant"() <{value = dense<{{\[}}[1, 6, 11, 16], [2, 7, 12, 17], [3, 8, 13, 18], [4, 9, 14, 19], [5, 10, 15, 20]]> : tensor<5x4xi64>}>
// CHECK-NEXT:    func.return %t
builtin.module attributes {onnx.opset = 13 : i64} {
func.func @large_result() -> tensor<5x4xi64> {
  %w = "onnx.Constant"() <{value = dense<[[1, 2, 3, 4, 5], [6, 7, 8, 9, 10], [11, 12, 13, 14, 15], [16, 17, 18, 19, 20]]> : tensor<4x5xi64>}> : () -> tensor<4x5xi64>
  %t = "onnx.Transpose"(%w) : (tensor<4x5xi64>) -> tensor<5x4xi64>
  func.return %t : tensor<5x4xi64>
}
}

// -----

// A large non-splat result larger than its constant operands (an Expand or Tile of a weight) is
// not folded: the weights would grow.
// CHECK-LABEL: func.func @larger_than_operands
// CHECK:         %e = "onnx.Expand"(%w, %shape)
// CHECK:         %t = "onnx.Tile"(%w, %reps)
builtin.module attributes {onnx.opset = 13 : i64} {
func.func @larger_than_operands() -> (tensor<2x4x5xi64>, tensor<4x10xi64>) {
  %w = "onnx.Constant"() <{value = dense<[[1, 2, 3, 4, 5], [6, 7, 8, 9, 10], [11, 12, 13, 14, 15], [16, 17, 18, 19, 20]]> : tensor<4x5xi64>}> : () -> tensor<4x5xi64>
  %shape = "onnx.Constant"() <{value = dense<[2, 4, 5]> : tensor<3xi64>}> : () -> tensor<3xi64>
  %e = "onnx.Expand"(%w, %shape) : (tensor<4x5xi64>, tensor<3xi64>) -> tensor<2x4x5xi64>
  %reps = "onnx.Constant"() <{value = dense<[1, 2]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %t = "onnx.Tile"(%w, %reps) : (tensor<4x5xi64>, tensor<2xi64>) -> tensor<4x10xi64>
  func.return %e, %t : tensor<2x4x5xi64>, tensor<4x10xi64>
}
}

// -----

// Multiple results: Split folds to one constant per result.
// CHECK-LABEL: func.func @split
// CHECK-DAG:     %lo = "onnx.Constant"() <{value = dense<[1, 2]> : tensor<2xi64>}>
// CHECK-DAG:     %hi = "onnx.Constant"() <{value = dense<[3, 4]> : tensor<2xi64>}>
// CHECK:         func.return %lo, %hi
builtin.module attributes {onnx.opset = 13 : i64} {
func.func @split() -> (tensor<2xi64>, tensor<2xi64>) {
  %v = "onnx.Constant"() <{value = dense<[1, 2, 3, 4]> : tensor<4xi64>}> : () -> tensor<4xi64>
  %lo, %hi = "onnx.Split"(%v) <{axis = 0 : si64}> : (tensor<4xi64>) -> (tensor<2xi64>, tensor<2xi64>)
  func.return %lo, %hi : tensor<2xi64>, tensor<2xi64>
}
}

// -----

// Ops whose operands are not all constant stay.
// CHECK-LABEL: func.func @not_constant
// CHECK:         "onnx.Add"(%x, %c)
builtin.module attributes {onnx.opset = 13 : i64} {
func.func @not_constant(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = "onnx.Constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<2xf32>
  %y = "onnx.Add"(%x, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}

// -----

// Never folded: where onnx.reference is wrong (Softmax before opset 13 without the flatten to
// 2-D; LRN over the wrong axis), and nondeterministic ops.
// CHECK-LABEL: func.func @not_folded
// CHECK:         "onnx.Softmax"
// CHECK:         "onnx.LRN"
// CHECK:         "onnx.RandomNormalLike"
builtin.module attributes {onnx.opset = 11 : i64} {
func.func @not_folded() -> (tensor<1x2x2xf32>, tensor<1x2x1x1xf32>, tensor<2xf32>) {
  %a = "onnx.Constant"() <{value = dense<[[[1.0, 2.0], [3.0, 4.0]]]> : tensor<1x2x2xf32>}> : () -> tensor<1x2x2xf32>
  %s = "onnx.Softmax"(%a) <{axis = 1 : si64}> : (tensor<1x2x2xf32>) -> tensor<1x2x2xf32>
  %b = "onnx.Constant"() <{value = dense<[[[[1.0]], [[2.0]]]]> : tensor<1x2x1x1xf32>}> : () -> tensor<1x2x1x1xf32>
  %l = "onnx.LRN"(%b) <{size = 3 : si64}> : (tensor<1x2x1x1xf32>) -> tensor<1x2x1x1xf32>
  %c = "onnx.Constant"() <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %r = "onnx.RandomNormalLike"(%c) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %s, %l, %r : tensor<1x2x2xf32>, tensor<1x2x1x1xf32>, tensor<2xf32>
}
}

// -----

// Softmax from opset 13 on is folded.
// CHECK-LABEL: func.func @softmax13
// CHECK:         "onnx.Constant"() <{value = dense<[0.268941402, 0.731058598]> : tensor<2xf32>}>
// CHECK-NOT:     onnx.Softmax
builtin.module attributes {onnx.opset = 13 : i64} {
func.func @softmax13() -> tensor<2xf32> {
  %a = "onnx.Constant"() <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : () -> tensor<2xf32>
  %s = "onnx.Softmax"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %s : tensor<2xf32>
}
}

// -----

// Pad with negative pads is left alone (onnx.reference rejects them).
// CHECK-LABEL: func.func @negative_pad
// CHECK:         "onnx.Pad"
builtin.module attributes {onnx.opset = 13 : i64} {
func.func @negative_pad() -> tensor<2xf32> {
  %a = "onnx.Constant"() <{value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>}> : () -> tensor<3xf32>
  %p = "onnx.Constant"() <{value = dense<[0, -1]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %y = "onnx.Pad"(%a, %p) : (tensor<3xf32>, tensor<2xi64>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}

// -----

// An If whose condition is a constant is replaced by the ops of the branch it takes; the other
// branch is gone, and the inlined ops fold in turn.
// CHECK-LABEL: func.func @if_constant_condition
// CHECK-NOT:     onnx.If
// CHECK:         %a = "onnx.Relu"(%x)
// CHECK-NEXT:    func.return %a
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @if_constant_condition(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c = "onnx.Constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
  %r = "onnx.If"(%c) ({
    %a = "onnx.Relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    "onnx.Yield"(%a) : (tensor<4xf32>) -> ()
  }, {
    %b = "onnx.Neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    "onnx.Yield"(%b) : (tensor<4xf32>) -> ()
  }) : (tensor<i1>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
}

// -----

// A computed constant condition (false): the else branch is taken.
// CHECK-LABEL: func.func @if_folded_condition
// CHECK-NOT:     onnx.If
// CHECK:         %b = "onnx.Neg"(%x)
// CHECK-NEXT:    func.return %b
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @if_folded_condition(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = "onnx.Constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
  %two = "onnx.Constant"() <{value = dense<2.0> : tensor<f32>}> : () -> tensor<f32>
  %c = "onnx.Greater"(%one, %two) : (tensor<f32>, tensor<f32>) -> tensor<i1>
  %r = "onnx.If"(%c) ({
    %a = "onnx.Relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    "onnx.Yield"(%a) : (tensor<4xf32>) -> ()
  }, {
    %b = "onnx.Neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
    "onnx.Yield"(%b) : (tensor<4xf32>) -> ()
  }) : (tensor<i1>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
}

// -----

// Folding inside regions: ops of a Loop body whose operands are constants (here captured from
// outside the loop) fold; the ones reading the loop's arguments stay.
// CHECK-LABEL: func.func @fold_in_loop_body
// CHECK:         "onnx.Loop"
// CHECK:           %w2 = "onnx.Constant"() <{value = dense<4.000000e+00> : tensor<2xf32>}>
// CHECK-NEXT:      %n = "onnx.Add"(%acc, %w2)
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @fold_in_loop_body(%x: tensor<2xf32>) -> tensor<2xf32> {
  %m = "onnx.Constant"() <{value = dense<3> : tensor<i64>}> : () -> tensor<i64>
  %w = "onnx.Constant"() <{value = dense<2.0> : tensor<2xf32>}> : () -> tensor<2xf32>
  %none = "onnx.NoValue"() : () -> none
  %y = "onnx.Loop"(%m, %none, %x) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %acc: tensor<2xf32>):
    %w2 = "onnx.Mul"(%w, %w) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %n = "onnx.Add"(%acc, %w2) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    "onnx.Yield"(%c, %n) : (tensor<i1>, tensor<2xf32>) -> ()
  }) : (tensor<i64>, none, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}

// -----

// A Loop with a constant trip count that cannot stop early: its scan outputs get their static
// leading axis (the trip count).
// CHECK-LABEL: func.func @loop_trip_count
// CHECK:         }) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>)
// CHECK-NEXT:    func.return %ys : tensor<3x2xf32>
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @loop_trip_count(%x: tensor<2xf32>) -> tensor<?x2xf32> {
  %m = "onnx.Constant"() <{value = dense<3> : tensor<i64>}> : () -> tensor<i64>
  %t = "onnx.Constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
  %y, %ys = "onnx.Loop"(%m, %t, %x) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %acc: tensor<2xf32>):
    %n = "onnx.Relu"(%acc) : (tensor<2xf32>) -> tensor<2xf32>
    %c2 = "onnx.Identity"(%c) : (tensor<i1>) -> tensor<i1>
    "onnx.Yield"(%c2, %n, %n) : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> ()
  }) : (tensor<i64>, tensor<i1>, tensor<2xf32>) -> (tensor<2xf32>, tensor<?x2xf32>)
  func.return %ys : tensor<?x2xf32>
}
}

// -----

// A counted loop (TorchScript's `while i < 4: ...; i += 1`: M is INT64_MAX, the body yields
// i + 1 < 4): its trip count is known, so its scan outputs get their static length.
// CHECK-LABEL: func.func @counted_loop
// CHECK:         }) : (tensor<i64>, tensor<i1>, tensor<2xf32>, tensor<i64>) -> (tensor<2xf32>, tensor<i64>, tensor<4x2xf32>)
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @counted_loop(%x: tensor<2xf32>) -> tensor<?x2xf32> {
  %m = "onnx.Constant"() <{value = dense<9223372036854775807> : tensor<i64>}> : () -> tensor<i64>
  %t = "onnx.Constant"() <{value = dense<true> : tensor<i1>}> : () -> tensor<i1>
  %zero = "onnx.Constant"() <{value = dense<0> : tensor<i64>}> : () -> tensor<i64>
  %y, %k, %ys = "onnx.Loop"(%m, %t, %x, %zero) ({
  ^bb0(%it: tensor<i64>, %c: tensor<i1>, %acc: tensor<2xf32>, %i: tensor<i64>):
    %n = "onnx.Relu"(%acc) : (tensor<2xf32>) -> tensor<2xf32>
    %one = "onnx.Constant"() <{value = dense<1> : tensor<i64>}> : () -> tensor<i64>
    %next = "onnx.Add"(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    %four = "onnx.Constant"() <{value = dense<4> : tensor<i64>}> : () -> tensor<i64>
    %go = "onnx.Less"(%next, %four) : (tensor<i64>, tensor<i64>) -> tensor<i1>
    "onnx.Yield"(%go, %n, %next, %n) : (tensor<i1>, tensor<2xf32>, tensor<i64>, tensor<2xf32>) -> ()
  }) : (tensor<i64>, tensor<i1>, tensor<2xf32>, tensor<i64>) -> (tensor<2xf32>, tensor<i64>, tensor<?x2xf32>)
  func.return %ys : tensor<?x2xf32>
}
}
