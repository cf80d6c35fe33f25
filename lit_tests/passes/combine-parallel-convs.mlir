// RUN: ramiel-opt %s --split-input-file --combine-parallel-convs --dce | filecheck %s

// An inception block's 1x1 convolutions of one input, each read only by a Relu: one Conv with
// the kernels concatenated (a missing bias is zeros), one Relu, a Split along the channels
// into the Relus' results (which keep their names).
// CHECK-LABEL: func.func @inception_1x1s
// CHECK:         %x_combined_W = "onnx.Constant"() <{value = dense<{{.*}}> : tensor<7x3x1x1xf32>}>
// CHECK:         %x_combined_B = "onnx.Constant"() <{value = dense<[1.000000e+00, 1.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]> : tensor<7xf32>}>
// CHECK:         %x_split_sizes = "onnx.Constant"() <{value = dense<[2, 4, 1]> : tensor<3xi64>}>
// CHECK-NEXT:    %x_convs = "onnx.Conv"(%x, %x_combined_W, %x_combined_B) <{kernel_shape = [1 : si64, 1 : si64]}> {onnx_node_name = "a + b + c"} : (tensor<1x3x8x8xf32>, tensor<7x3x1x1xf32>, tensor<7xf32>) -> tensor<1x7x8x8xf32>
// CHECK-NEXT:    %x_convs_relu = "onnx.Relu"(%x_convs) : (tensor<1x7x8x8xf32>) -> tensor<1x7x8x8xf32>
// CHECK-NEXT:    %ra, %rb, %rc = "onnx.Split"(%x_convs_relu, %x_split_sizes) <{axis = 1 : si64}> {onnx_node_name = "a + b + c"} : (tensor<1x7x8x8xf32>, tensor<3xi64>) -> (tensor<1x2x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x1x8x8xf32>)
// CHECK-NEXT:    %t = "onnx.Conv"(%rb, %w3)
// CHECK-NEXT:    func.return %ra, %t, %rc
// CHECK-NOT:     onnx.Relu
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @inception_1x1s(%x: tensor<1x3x8x8xf32>) -> (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x1x8x8xf32>) {
  %wa = "onnx.Constant"() <{value = dense<1.0> : tensor<2x3x1x1xf32>}> : () -> tensor<2x3x1x1xf32>
  %ba = "onnx.Constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<2xf32>
  %wb = "onnx.Constant"() <{value = dense<2.0> : tensor<4x3x1x1xf32>}> : () -> tensor<4x3x1x1xf32>
  %wc = "onnx.Constant"() <{value = dense<3.0> : tensor<1x3x1x1xf32>}> : () -> tensor<1x3x1x1xf32>
  %w3 = "onnx.Constant"() <{value = dense<1.0> : tensor<2x4x3x3xf32>}> : () -> tensor<2x4x3x3xf32>
  %a = "onnx.Conv"(%x, %wa, %ba) <{kernel_shape = [1 : si64, 1 : si64]}> {onnx_node_name = "a"} : (tensor<1x3x8x8xf32>, tensor<2x3x1x1xf32>, tensor<2xf32>) -> tensor<1x2x8x8xf32>
  %ra = "onnx.Relu"(%a) : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %b = "onnx.Conv"(%x, %wb) <{kernel_shape = [1 : si64, 1 : si64]}> {onnx_node_name = "b"} : (tensor<1x3x8x8xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x8x8xf32>
  %rb = "onnx.Relu"(%b) : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %t = "onnx.Conv"(%rb, %w3) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> : (tensor<1x4x8x8xf32>, tensor<2x4x3x3xf32>) -> tensor<1x2x8x8xf32>
  %c = "onnx.Conv"(%x, %wc) {onnx_node_name = "c"} : (tensor<1x3x8x8xf32>, tensor<1x3x1x1xf32>) -> tensor<1x1x8x8xf32>
  %rc = "onnx.Relu"(%c) : (tensor<1x1x8x8xf32>) -> tensor<1x1x8x8xf32>
  func.return %ra, %t, %rc : tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x1x8x8xf32>
}
}

// -----

// Before opset 13 the split sizes are an attribute. Convolutions without a Relu after them
// combine with each other, not with those with one; explicit default strides and dilations
// equal the absent ones. A pair of 3x3 convolutions stays apart (two branches' heavy first
// convolutions: the clustering's work to put on two cores).
// CHECK-LABEL: func.func @opset11_groups
// CHECK:         %x_convs = "onnx.Conv"(%x, %x_combined_W) <{kernel_shape = [1 : si64, 1 : si64]}> {onnx_node_name = "p + q"} : (tensor<1x3x8x8xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT:    %p, %q = "onnx.Split"(%x_convs) <{axis = 1 : si64, split = [2 : si64, 2 : si64]}> {onnx_node_name = "p + q"}
// CHECK-NEXT:    %r = "onnx.Conv"(%x, %w1)
// CHECK-NEXT:    %rr = "onnx.Relu"(%r)
// CHECK-NEXT:    %s = "onnx.Conv"(%x, %w3)
// CHECK-NEXT:    %t = "onnx.Conv"(%x, %w4)
// CHECK-NOT:     onnx.Split
builtin.module attributes {onnx.opset = 11 : i64} {
func.func @opset11_groups(%x: tensor<1x3x8x8xf32>) -> (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) {
  %w1 = "onnx.Constant"() <{value = dense<1.0> : tensor<2x3x1x1xf32>}> : () -> tensor<2x3x1x1xf32>
  %w2 = "onnx.Constant"() <{value = dense<2.0> : tensor<2x3x1x1xf32>}> : () -> tensor<2x3x1x1xf32>
  %w3 = "onnx.Constant"() <{value = dense<3.0> : tensor<2x3x3x3xf32>}> : () -> tensor<2x3x3x3xf32>
  %w4 = "onnx.Constant"() <{value = dense<4.0> : tensor<2x3x3x3xf32>}> : () -> tensor<2x3x3x3xf32>
  %p = "onnx.Conv"(%x, %w1) <{kernel_shape = [1 : si64, 1 : si64]}> {onnx_node_name = "p"} : (tensor<1x3x8x8xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x8x8xf32>
  %q = "onnx.Conv"(%x, %w2) <{strides = [1 : si64, 1 : si64], dilations = [1 : si64, 1 : si64]}> {onnx_node_name = "q"} : (tensor<1x3x8x8xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x8x8xf32>
  %r = "onnx.Conv"(%x, %w1) <{kernel_shape = [1 : si64, 1 : si64]}> {onnx_node_name = "r"} : (tensor<1x3x8x8xf32>, tensor<2x3x1x1xf32>) -> tensor<1x2x8x8xf32>
  %rr = "onnx.Relu"(%r) : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %s = "onnx.Conv"(%x, %w3) <{pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {onnx_node_name = "s"} : (tensor<1x3x8x8xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x8x8xf32>
  %t = "onnx.Conv"(%x, %w4) <{pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {onnx_node_name = "t"} : (tensor<1x3x8x8xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x8x8xf32>
  func.return %p, %q, %rr, %s, %t : tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>
}
}

// -----

// Near-misses: nothing combines. Against %c1: other strides, other pads, two groups, a
// computed kernel, another input; two convolutions with auto_pad SAME_UPPER; a convolution
// of the other input with a Relu after it (against %c6, without).
// CHECK-LABEL: func.func @near_misses
// CHECK-NOT:     onnx.Split
// CHECK-COUNT-9: "onnx.Conv"
// CHECK-NOT:     onnx.Split
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @near_misses(%x: tensor<1x4x8x8xf32>, %y: tensor<1x4x8x8xf32>, %k: tensor<2x4x1x1xf32>) -> (tensor<1x2x8x8xf32>, tensor<1x2x4x4xf32>, tensor<1x2x10x10xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) {
  %w = "onnx.Constant"() <{value = dense<1.0> : tensor<2x4x1x1xf32>}> : () -> tensor<2x4x1x1xf32>
  %wg = "onnx.Constant"() <{value = dense<1.0> : tensor<2x2x1x1xf32>}> : () -> tensor<2x2x1x1xf32>
  %c1 = "onnx.Conv"(%x, %w) : (tensor<1x4x8x8xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x8x8xf32>
  %c2 = "onnx.Conv"(%x, %w) <{strides = [2 : si64, 2 : si64]}> : (tensor<1x4x8x8xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x4x4xf32>
  %c3 = "onnx.Conv"(%x, %w) <{pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> : (tensor<1x4x8x8xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x10x10xf32>
  %c4 = "onnx.Conv"(%x, %wg) <{group = 2 : si64}> : (tensor<1x4x8x8xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x8x8xf32>
  %c5 = "onnx.Conv"(%x, %k) : (tensor<1x4x8x8xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x8x8xf32>
  %c6 = "onnx.Conv"(%y, %w) : (tensor<1x4x8x8xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x8x8xf32>
  %c7 = "onnx.Conv"(%x, %w) <{auto_pad = "SAME_UPPER"}> : (tensor<1x4x8x8xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x8x8xf32>
  %c8 = "onnx.Conv"(%x, %w) <{auto_pad = "SAME_UPPER"}> : (tensor<1x4x8x8xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x8x8xf32>
  %c9 = "onnx.Conv"(%y, %w) : (tensor<1x4x8x8xf32>, tensor<2x4x1x1xf32>) -> tensor<1x2x8x8xf32>
  %r9 = "onnx.Relu"(%c9) : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  func.return %c1, %c2, %c3, %c4, %c5, %c6, %c7, %c8, %r9 : tensor<1x2x8x8xf32>, tensor<1x2x4x4xf32>, tensor<1x2x10x10xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>
}
}
