// RUN: ramiel-opt %s --split-input-file --fuse-pad-into-conv --dce | filecheck %s

// transformers' MobileNetV2 (tf_padding): a symmetric zero Pad before a depthwise 3x3 Conv
// becomes the Conv's pads, printed F.conv2d(..., padding=(1, 1)).
// CHECK-LABEL: func.func @symmetric
// CHECK-NEXT:    %w = "onnx.Constant"
// CHECK-NEXT:    %y = "onnx.Conv"(%x, %w) <{group = 4 : si64, kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {onnx_node_name = "conv0"} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:    func.return %y
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @symmetric(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = "onnx.Constant"() <{value = dense<1.0> : tensor<4x1x3x3xf32>}> : () -> tensor<4x1x3x3xf32>
  %pads = "onnx.Constant"() <{value = dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>}> : () -> tensor<8xi64>
  %p = "onnx.Pad"(%x, %pads) <{mode = "constant"}> : (tensor<1x4x8x8xf32>, tensor<8xi64>) -> tensor<1x4x10x10xf32>
  %y = "onnx.Conv"(%p, %w) <{group = 4 : si64, kernel_shape = [3 : si64, 3 : si64]}> {onnx_node_name = "conv0"} : (tensor<1x4x10x10xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}
}

// -----

// The stride-2 form: the pad at the end only, added to the Conv's own pads; an explicit zero
// constant_value is zero too.
// CHECK-LABEL: func.func @asymmetric_added
// CHECK:         %y = "onnx.Conv"(%x, %w) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 2 : si64, 2 : si64, 3 : si64], strides = [2 : si64, 2 : si64]}>
// CHECK-SAME:      (tensor<1x3x8x8xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x5x6xf32>
// CHECK-NOT:     onnx.Pad
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @asymmetric_added(%x: tensor<1x3x8x8xf32>) -> tensor<1x2x5x6xf32> {
  %w = "onnx.Constant"() <{value = dense<1.0> : tensor<2x3x3x3xf32>}> : () -> tensor<2x3x3x3xf32>
  %pads = "onnx.Constant"() <{value = dense<[0, 0, 0, 1, 0, 0, 1, 2]> : tensor<8xi64>}> : () -> tensor<8xi64>
  %zero = "onnx.Constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
  %p = "onnx.Pad"(%x, %pads, %zero) : (tensor<1x3x8x8xf32>, tensor<8xi64>, tensor<f32>) -> tensor<1x3x9x11xf32>
  %y = "onnx.Conv"(%p, %w) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64], strides = [2 : si64, 2 : si64]}> : (tensor<1x3x9x11xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x5x6xf32>
  func.return %y : tensor<1x2x5x6xf32>
}
}

// -----

// Opset 18's axes input (negative axes count from the end), and auto_pad VALID, which becomes
// NOTSET with the pads.
// CHECK-LABEL: func.func @axes_and_valid
// CHECK:         %y = "onnx.Conv"(%x, %w) <{auto_pad = "NOTSET", kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 2 : si64, 1 : si64, 2 : si64]}>
// CHECK-NOT:     onnx.Pad
builtin.module attributes {onnx.opset = 18 : i64} {
func.func @axes_and_valid(%x: tensor<1x3x8x8xf32>) -> tensor<1x2x8x10xf32> {
  %w = "onnx.Constant"() <{value = dense<1.0> : tensor<2x3x3x3xf32>}> : () -> tensor<2x3x3x3xf32>
  %pads = "onnx.Constant"() <{value = dense<[1, 2, 1, 2]> : tensor<4xi64>}> : () -> tensor<4xi64>
  %axes = "onnx.Constant"() <{value = dense<[-2, 3]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %none = "onnx.NoValue"() : () -> none
  %p = "onnx.Pad"(%x, %pads, %none, %axes) : (tensor<1x3x8x8xf32>, tensor<4xi64>, none, tensor<2xi64>) -> tensor<1x3x10x12xf32>
  %y = "onnx.Conv"(%p, %w) <{auto_pad = "VALID", kernel_shape = [3 : si64, 3 : si64]}> : (tensor<1x3x10x12xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x8x10xf32>
  func.return %y : tensor<1x2x8x10xf32>
}
}

// -----

// Before opset 11 the pads and the value are attributes; one Pad read by two Convs fuses into
// both (a 1-D convolution here).
// CHECK-LABEL: func.func @attributes_two_convs
// CHECK-NEXT:    %w = "onnx.Constant"
// CHECK-NEXT:    %a = "onnx.Conv"(%x, %w) <{kernel_shape = [3 : si64], pads = [2 : si64, 0 : si64]}>
// CHECK-NEXT:    %b = "onnx.Conv"(%x, %w) <{kernel_shape = [3 : si64], strides = [2 : si64], pads = [2 : si64, 0 : si64]}>
// CHECK-NEXT:    func.return %a, %b
builtin.module attributes {onnx.opset = 10 : i64} {
func.func @attributes_two_convs(%x: tensor<1x3x8xf32>) -> (tensor<1x2x8xf32>, tensor<1x2x4xf32>) {
  %w = "onnx.Constant"() <{value = dense<1.0> : tensor<2x3x3xf32>}> : () -> tensor<2x3x3xf32>
  %p = "onnx.Pad"(%x) <{pads = [0 : si64, 0 : si64, 2 : si64, 0 : si64, 0 : si64, 0 : si64], value = 0.0 : f32}> : (tensor<1x3x8xf32>) -> tensor<1x3x10xf32>
  %a = "onnx.Conv"(%p, %w) <{kernel_shape = [3 : si64]}> : (tensor<1x3x10xf32>, tensor<2x3x3xf32>) -> tensor<1x2x8xf32>
  %b = "onnx.Conv"(%p, %w) <{kernel_shape = [3 : si64], strides = [2 : si64]}> : (tensor<1x3x10xf32>, tensor<2x3x3xf32>) -> tensor<1x2x4xf32>
  func.return %a, %b : tensor<1x2x8xf32>, tensor<1x2x4xf32>
}
}

// -----

// Near-misses: each Pad stays. A non-zero value, reflect mode, a pad of the channel dim, a
// Pad that a Relu also reads, a Pad that is returned, a Conv with auto_pad SAME_UPPER, a
// negative (cropping) pad, pads that are not constant.
// CHECK-LABEL: func.func @near_misses
// CHECK-COUNT-8: "onnx.Pad"
// CHECK-NOT:     "onnx.Pad"
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @near_misses(%x: tensor<1x3x8x8xf32>, %dyn: tensor<8xi64>) -> (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x3x10x10xf32>, tensor<1x2x8x8xf32>, tensor<1x3x10x10xf32>, tensor<1x2x8x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x10x10xf32>) {
  %w = "onnx.Constant"() <{value = dense<1.0> : tensor<2x3x3x3xf32>}> : () -> tensor<2x3x3x3xf32>
  %w4 = "onnx.Constant"() <{value = dense<1.0> : tensor<2x4x3x3xf32>}> : () -> tensor<2x4x3x3xf32>
  %pads = "onnx.Constant"() <{value = dense<[0, 0, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>}> : () -> tensor<8xi64>
  %cpads = "onnx.Constant"() <{value = dense<[0, 1, 1, 1, 0, 0, 1, 1]> : tensor<8xi64>}> : () -> tensor<8xi64>
  %npads = "onnx.Constant"() <{value = dense<[0, 0, -1, 1, 0, 0, -1, 1]> : tensor<8xi64>}> : () -> tensor<8xi64>
  %one = "onnx.Constant"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>
  %p1 = "onnx.Pad"(%x, %pads, %one) : (tensor<1x3x8x8xf32>, tensor<8xi64>, tensor<f32>) -> tensor<1x3x10x10xf32>
  %c1 = "onnx.Conv"(%p1, %w) <{kernel_shape = [3 : si64, 3 : si64]}> : (tensor<1x3x10x10xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x8x8xf32>
  %p2 = "onnx.Pad"(%x, %pads) <{mode = "reflect"}> : (tensor<1x3x8x8xf32>, tensor<8xi64>) -> tensor<1x3x10x10xf32>
  %c2 = "onnx.Conv"(%p2, %w) <{kernel_shape = [3 : si64, 3 : si64]}> : (tensor<1x3x10x10xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x8x8xf32>
  %p3 = "onnx.Pad"(%x, %cpads) : (tensor<1x3x8x8xf32>, tensor<8xi64>) -> tensor<1x4x10x10xf32>
  %c3 = "onnx.Conv"(%p3, %w4) <{kernel_shape = [3 : si64, 3 : si64]}> : (tensor<1x4x10x10xf32>, tensor<2x4x3x3xf32>) -> tensor<1x2x8x8xf32>
  %p4 = "onnx.Pad"(%x, %pads) : (tensor<1x3x8x8xf32>, tensor<8xi64>) -> tensor<1x3x10x10xf32>
  %c4 = "onnx.Conv"(%p4, %w) <{kernel_shape = [3 : si64, 3 : si64]}> : (tensor<1x3x10x10xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x8x8xf32>
  %r4 = "onnx.Relu"(%p4) : (tensor<1x3x10x10xf32>) -> tensor<1x3x10x10xf32>
  %p5 = "onnx.Pad"(%x, %pads) : (tensor<1x3x8x8xf32>, tensor<8xi64>) -> tensor<1x3x10x10xf32>
  %c5 = "onnx.Conv"(%p5, %w) <{kernel_shape = [3 : si64, 3 : si64]}> : (tensor<1x3x10x10xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x8x8xf32>
  %p6 = "onnx.Pad"(%x, %pads) : (tensor<1x3x8x8xf32>, tensor<8xi64>) -> tensor<1x3x10x10xf32>
  %c6 = "onnx.Conv"(%p6, %w) <{auto_pad = "SAME_UPPER", kernel_shape = [3 : si64, 3 : si64]}> : (tensor<1x3x10x10xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x10x10xf32>
  %p7 = "onnx.Pad"(%x, %npads) : (tensor<1x3x8x8xf32>, tensor<8xi64>) -> tensor<1x3x6x10xf32>
  %c7 = "onnx.Conv"(%p7, %w) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 0 : si64, 1 : si64, 0 : si64]}> : (tensor<1x3x6x10xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x6x8xf32>
  %p8 = "onnx.Pad"(%x, %dyn) : (tensor<1x3x8x8xf32>, tensor<8xi64>) -> tensor<1x3x10x10xf32>
  %c8 = "onnx.Conv"(%p8, %w) <{kernel_shape = [3 : si64, 3 : si64]}> : (tensor<1x3x10x10xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x8x8xf32>
  func.return %c1, %c2, %c3, %r4, %c5, %p5, %c8, %c7, %c4, %c6 : tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x3x10x10xf32>, tensor<1x2x8x8xf32>, tensor<1x3x10x10xf32>, tensor<1x2x8x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x10x10xf32>
}
}
