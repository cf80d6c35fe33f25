// RUN: ramiel-opt %s --split-input-file --dce | filecheck %s

// An unused side-effect-free op is erased; used ops, the arguments and the return stay.
// CHECK-LABEL: func.func @unused_op
// CHECK-SAME:    (%x: tensor<2xf32>, %unused_arg: tensor<2xf32>)
// CHECK-NEXT:    %y = "onnx.Relu"(%x)
// CHECK-NEXT:    func.return %y
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @unused_op(%x: tensor<2xf32>, %unused_arg: tensor<2xf32>) -> tensor<2xf32> {
  %y = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %dead = "onnx.Sigmoid"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}

// -----

// A chain that only feeds dead ops disappears entirely (iteration to a fixed point).
// CHECK-LABEL: func.func @dead_chain
// CHECK-NEXT:    func.return %x
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @dead_chain(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = "onnx.Constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<2xf32>
  %a = "onnx.Add"(%x, %c) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %b = "onnx.Relu"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %d = "onnx.Mul"(%b, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %x : tensor<2xf32>
}
}

// -----

// onnx.NoValue is erased when no op reads it, kept when one does.
// CHECK-LABEL: func.func @novalue
// CHECK-NEXT:    %used = "onnx.NoValue"()
// CHECK-NEXT:    %y = "onnx.Clip"(%x, %used, %used)
// CHECK-NEXT:    func.return %y
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @novalue(%x: tensor<2xf32>) -> tensor<2xf32> {
  %unused = "onnx.NoValue"() : () -> none
  %used = "onnx.NoValue"() : () -> none
  %y = "onnx.Clip"(%x, %used, %used) : (tensor<2xf32>, none, none) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}

// -----

// An unused trailing optional output is dropped: Dropout without its mask.
// CHECK-LABEL: func.func @dropout_mask
// CHECK-NEXT:    %y = "onnx.Dropout"(%x) <{ratio = 5.000000e-01 : f32}> {onnx_node_name = "drop"} : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    func.return %y
builtin.module attributes {onnx.opset = 9 : i64} {
func.func @dropout_mask(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y, %mask = "onnx.Dropout"(%x) <{ratio = 0.5 : f32}> {onnx_node_name = "drop"} : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %y : tensor<2xf32>
}
}

// -----

// A used optional output keeps the op whole.
// CHECK-LABEL: func.func @used_indices
// CHECK-NEXT:    %y, %idx = "onnx.MaxPool"(%x)
// CHECK-SAME:      -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>)
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @used_indices(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xi64> {
  %y, %idx = "onnx.MaxPool"(%x) <{kernel_shape = [2 : si64, 2 : si64], strides = [2 : si64, 2 : si64]}> : (tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi64>)
  func.return %idx : tensor<1x1x2x2xi64>
}
}

// -----

// An unused optional output before a used one becomes `none` (ONNX's empty output name): GRU
// whose sequence output Y is unused but whose last hidden state Y_h is returned.
// CHECK-LABEL: func.func @middle_output
// CHECK:         %{{.*}}, %y_h = "onnx.GRU"(%x, %w, %r) <{hidden_size = 2 : si64}> : (tensor<2x1x3xf32>, tensor<1x6x3xf32>, tensor<1x6x2xf32>) -> (none, tensor<1x1x2xf32>)
// CHECK-NEXT:    func.return %y_h
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @middle_output(%x: tensor<2x1x3xf32>) -> tensor<1x1x2xf32> {
  %w = "onnx.Constant"() <{value = dense<0.1> : tensor<1x6x3xf32>}> : () -> tensor<1x6x3xf32>
  %r = "onnx.Constant"() <{value = dense<0.2> : tensor<1x6x2xf32>}> : () -> tensor<1x6x2xf32>
  %y, %y_h = "onnx.GRU"(%x, %w, %r) <{hidden_size = 2 : si64}> : (tensor<2x1x3xf32>, tensor<1x6x3xf32>, tensor<1x6x2xf32>) -> (tensor<2x1x1x2xf32>, tensor<1x1x2xf32>)
  func.return %y_h : tensor<1x1x2xf32>
}
}

// -----

// An op none of whose results is used is erased, optional outputs or not.
// CHECK-LABEL: func.func @all_unused
// CHECK-NOT:     onnx.Dropout
// CHECK:         func.return %x
builtin.module attributes {onnx.opset = 9 : i64} {
func.func @all_unused(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y, %mask = "onnx.Dropout"(%x) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %x : tensor<2xf32>
}
}

// -----

// Region ops are as pure as their regions: an unused If is erased whole; in a used Loop, ops of
// the body that nothing yields are erased, and the body's arguments stay.
// CHECK-LABEL: func.func @regions
// CHECK-NOT:     onnx.If
// CHECK:         "onnx.Loop"
// CHECK-NEXT:    ^bb0(%i: tensor<i64>, %c: tensor<i1>, %acc: tensor<2xf32>):
// CHECK-NEXT:      %n = "onnx.Relu"(%acc)
// CHECK-NEXT:      "onnx.Yield"(%c, %n)
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @regions(%b: tensor<i1>, %m: tensor<i64>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %unused = "onnx.If"(%b) ({
    %a = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    "onnx.Yield"(%a) : (tensor<2xf32>) -> ()
  }, {
    "onnx.Yield"(%x) : (tensor<2xf32>) -> ()
  }) : (tensor<i1>) -> tensor<2xf32>
  %none = "onnx.NoValue"() : () -> none
  %y = "onnx.Loop"(%m, %none, %x) ({
  ^bb0(%i: tensor<i64>, %c: tensor<i1>, %acc: tensor<2xf32>):
    %dead = "onnx.Neg"(%acc) : (tensor<2xf32>) -> tensor<2xf32>
    %n = "onnx.Relu"(%acc) : (tensor<2xf32>) -> tensor<2xf32>
    "onnx.Yield"(%c, %n) : (tensor<i1>, tensor<2xf32>) -> ()
  }) : (tensor<i64>, none, tensor<2xf32>) -> tensor<2xf32>
  func.return %y : tensor<2xf32>
}
}
