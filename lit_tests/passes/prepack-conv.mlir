// --prepack-conv: the channels-last 2-D float32 convolutions with a constant kernel get
// ramiel.prepack ("relu" when they absorb the Relu that alone reads them, "none" otherwise) and
// lower to ops.conv2d_prepacked (LOWER), which packs the kernel once per process.
// RUN: ramiel-opt %s --split-input-file --prepack-conv | filecheck %s
// RUN: ramiel-opt %s --split-input-file --prepack-conv --lower-to-torchpy | filecheck %s --check-prefix=LOWER

// A conv stack in channels-last: the first Conv (3x3) absorbs its Relu (the Relu's result name
// is the Conv's now, and the MaxPool reads it); the second (1x1) has its result also returned,
// so its Relu stays and it runs prepacked without one; the third (1x1, 4K kernel elements: any
// size runs prepacked) absorbs its Relu too.
// CHECK-LABEL: func.func @conv_stack
// CHECK:         %r1 = "onnx.Conv"(%x, %w1, %b1) {{.*}} {onnx_node_name = "conv1", ramiel.layout = "channels_last", ramiel.prepack = "relu"}
// CHECK-NOT:     "onnx.Relu"(%r1)
// CHECK-NEXT:    %p1 = "onnx.MaxPool"(%r1)
// CHECK-NEXT:    %c2 = "onnx.Conv"(%p1, %w2) {{.*}} ramiel.prepack = "none"}
// CHECK-NEXT:    %y = "onnx.Relu"(%c2)
// CHECK-NEXT:    %r3 = "onnx.Conv"(%y, %w3) {{.*}} {onnx_node_name = "conv3", ramiel.layout = "channels_last", ramiel.prepack = "relu"}
// CHECK-NEXT:    func.return %r3, %c2
// LOWER-LABEL: torchpy.func sequential @forward(
// LOWER:         %r1 = torchpy.call ops.conv2d_prepacked(%x_cl, %w1, %b1) kwargs {padding = "(1, 1)", activation = "'relu'"}
// LOWER-NEXT:    %p1 = torchpy.call F.max_pool2d(%r1)
// LOWER-NEXT:    %c2 = torchpy.call ops.conv2d_prepacked(%p1, %w2) [0, 1, "None"]
// LOWER-NEXT:    %y = torchpy.call torch.relu(%c2)
// LOWER-NEXT:    %r3 = torchpy.call ops.conv2d_prepacked(%y, %w3) [0, 1, "None"] kwargs {activation = "'relu'"}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @conv_stack(%x: tensor<1x64x64x64xf32> {onnx.name = "x"}) -> (tensor<1x8x32x32xf32> {onnx.name = "y"}, tensor<1x512x32x32xf32> {onnx.name = "c"}) {
  %w1 = "onnx.Constant"() <{value = dense<0.5> : tensor<256x64x3x3xf32>}> : () -> tensor<256x64x3x3xf32>
  %b1 = "onnx.Constant"() <{value = dense<0.1> : tensor<256xf32>}> : () -> tensor<256xf32>
  %w2 = "onnx.Constant"() <{value = dense<0.25> : tensor<512x256x1x1xf32>}> : () -> tensor<512x256x1x1xf32>
  %w3 = "onnx.Constant"() <{value = dense<0.25> : tensor<8x512x1x1xf32>}> : () -> tensor<8x512x1x1xf32>
  %c1 = "onnx.Conv"(%x, %w1, %b1) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {onnx_node_name = "conv1", ramiel.layout = "channels_last"} : (tensor<1x64x64x64xf32>, tensor<256x64x3x3xf32>, tensor<256xf32>) -> tensor<1x256x64x64xf32>
  %r1 = "onnx.Relu"(%c1) {onnx_node_name = "relu1", ramiel.layout = "channels_last"} : (tensor<1x256x64x64xf32>) -> tensor<1x256x64x64xf32>
  %p1 = "onnx.MaxPool"(%r1) <{kernel_shape = [2 : si64, 2 : si64], strides = [2 : si64, 2 : si64]}> {onnx_node_name = "pool1", ramiel.layout = "channels_last"} : (tensor<1x256x64x64xf32>) -> tensor<1x256x32x32xf32>
  %c2 = "onnx.Conv"(%p1, %w2) <{kernel_shape = [1 : si64, 1 : si64]}> {onnx_node_name = "conv2", ramiel.layout = "channels_last"} : (tensor<1x256x32x32xf32>, tensor<512x256x1x1xf32>) -> tensor<1x512x32x32xf32>
  %y = "onnx.Relu"(%c2) {onnx_node_name = "relu2", ramiel.layout = "channels_last"} : (tensor<1x512x32x32xf32>) -> tensor<1x512x32x32xf32>
  %c3 = "onnx.Conv"(%y, %w3) <{kernel_shape = [1 : si64, 1 : si64]}> {onnx_node_name = "conv3", ramiel.layout = "channels_last"} : (tensor<1x512x32x32xf32>, tensor<8x512x1x1xf32>) -> tensor<1x8x32x32xf32>
  %r3 = "onnx.Relu"(%c3) {onnx_node_name = "relu3", ramiel.layout = "channels_last"} : (tensor<1x8x32x32xf32>) -> tensor<1x8x32x32xf32>
  func.return %r3, %c2 : tensor<1x8x32x32xf32>, tensor<1x512x32x32xf32>
}
}

// -----

// Left alone: a contiguous (NCHW) Conv, a Conv whose kernel is computed (not a weight), a Conv
// of a 1x1 map (a matrix-vector product, slower packed), a 1-D Conv and a float64 one, all in
// channels-last where they can be.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT:     ramiel.prepack
// CHECK:         func.return
// LOWER-LABEL: torchpy.func sequential @forward(
// LOWER-NOT:     ops.conv2d_prepacked
// LOWER:         torchpy.return
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @left_alone(%x: tensor<1x128x64x64xf32>, %x1: tensor<1x128x4096xf32>, %x64: tensor<1x128x64x64xf64>, %xp: tensor<1x128x1x1xf32>) -> (tensor<1x128x64x64xf32>, tensor<1x128x64x64xf32>, tensor<1x128x1x1xf32>, tensor<1x128x4096xf32>, tensor<1x128x64x64xf64>) {
  %w = "onnx.Constant"() <{value = dense<0.5> : tensor<128x128x3x3xf32>}> : () -> tensor<128x128x3x3xf32>
  %wp = "onnx.Constant"() <{value = dense<0.5> : tensor<128x128x1x1xf32>}> : () -> tensor<128x128x1x1xf32>
  %w1 = "onnx.Constant"() <{value = dense<0.5> : tensor<128x128x3xf32>}> : () -> tensor<128x128x3xf32>
  %w64 = "onnx.Constant"() <{value = dense<0.5> : tensor<128x128x3x3xf64>}> : () -> tensor<128x128x3x3xf64>
  %c = "onnx.Conv"(%x, %w) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> : (tensor<1x128x64x64xf32>, tensor<128x128x3x3xf32>) -> tensor<1x128x64x64xf32>
  %r = "onnx.Relu"(%c) : (tensor<1x128x64x64xf32>) -> tensor<1x128x64x64xf32>
  %wr = "onnx.Relu"(%w) : (tensor<128x128x3x3xf32>) -> tensor<128x128x3x3xf32>
  %c2 = "onnx.Conv"(%x, %wr) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {ramiel.layout = "channels_last"} : (tensor<1x128x64x64xf32>, tensor<128x128x3x3xf32>) -> tensor<1x128x64x64xf32>
  %cp = "onnx.Conv"(%xp, %wp) <{kernel_shape = [1 : si64, 1 : si64]}> {ramiel.layout = "channels_last"} : (tensor<1x128x1x1xf32>, tensor<128x128x1x1xf32>) -> tensor<1x128x1x1xf32>
  %c1 = "onnx.Conv"(%x1, %w1) <{kernel_shape = [3 : si64], pads = [1 : si64, 1 : si64]}> {ramiel.layout = "channels_last"} : (tensor<1x128x4096xf32>, tensor<128x128x3xf32>) -> tensor<1x128x4096xf32>
  %c64 = "onnx.Conv"(%x64, %w64) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {ramiel.layout = "channels_last"} : (tensor<1x128x64x64xf64>, tensor<128x128x3x3xf64>) -> tensor<1x128x64x64xf64>
  func.return %r, %c2, %cp, %c1, %c64 : tensor<1x128x64x64xf32>, tensor<1x128x64x64xf32>, tensor<1x128x1x1xf32>, tensor<1x128x4096xf32>, tensor<1x128x64x64xf64>
}
}

// -----

// Grouped and depthwise convolutions run prepacked too (the group count is the helper's
// argument): a 3x3 convolution of 4 groups, then a depthwise one with stride 2.
// CHECK-LABEL: func.func @grouped
// CHECK:         %cg = "onnx.Conv"(%x, %wg) {{.*}} ramiel.prepack = "none"}
// CHECK-NEXT:    %cd = "onnx.Conv"(%cg, %wd) {{.*}} ramiel.prepack = "none"}
// LOWER-LABEL: torchpy.func sequential @forward(
// LOWER:         %cg = torchpy.call ops.conv2d_prepacked(%x_cl, %wg) [0, 1, "None"] kwargs {padding = "(1, 1)", groups = "4"}
// LOWER-NEXT:    %cd = torchpy.call ops.conv2d_prepacked(%cg, %wd) [0, 1, "None"] kwargs {stride = "(2, 2)", padding = "(1, 1)", groups = "128"}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @grouped(%x: tensor<1x128x16x16xf32>) -> tensor<1x128x8x8xf32> {
  %wg = "onnx.Constant"() <{value = dense<0.5> : tensor<128x32x3x3xf32>}> : () -> tensor<128x32x3x3xf32>
  %wd = "onnx.Constant"() <{value = dense<0.5> : tensor<128x1x3x3xf32>}> : () -> tensor<128x1x3x3xf32>
  %cg = "onnx.Conv"(%x, %wg) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64], group = 4 : si64}> {ramiel.layout = "channels_last"} : (tensor<1x128x16x16xf32>, tensor<128x32x3x3xf32>) -> tensor<1x128x16x16xf32>
  %cd = "onnx.Conv"(%cg, %wd) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64], strides = [2 : si64, 2 : si64], group = 128 : si64}> {ramiel.layout = "channels_last"} : (tensor<1x128x16x16xf32>, tensor<128x1x3x3xf32>) -> tensor<1x128x8x8xf32>
  func.return %cd : tensor<1x128x8x8xf32>
}
}

// -----

// In a clustered program a Conv whose result crosses a channel keeps its Relu (the send is a
// second reader); the Conv that only its Relu reads, in the same cluster, absorbs it.
// CHECK-LABEL: func.func @clustered
// CHECK:         %c = "onnx.Conv"{{.*}}ramiel.prepack = "none"
// CHECK:         %r = "onnx.Relu"(%c)
// CHECK:         %r3 = "onnx.Conv"{{.*}}ramiel.prepack = "relu"
// CHECK-NEXT:    cluster.yield %r3
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @clustered(%x: tensor<1x128x64x64xf32>) -> (tensor<1x128x64x64xf32>, tensor<1x128x64x64xf32>) {
  %w = "onnx.Constant"() <{value = dense<0.5> : tensor<128x128x3x3xf32>}> : () -> tensor<128x128x3x3xf32>
  %a = "cluster.cluster"() <{sym_name = "c0"}> ({
    %c = "onnx.Conv"(%x, %w) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {ramiel.layout = "channels_last"} : (tensor<1x128x64x64xf32>, tensor<128x128x3x3xf32>) -> tensor<1x128x64x64xf32>
    "cluster.send"(%c) <{channel = "c__c0_c1"}> : (tensor<1x128x64x64xf32>) -> ()
    %r = "onnx.Relu"(%c) {ramiel.layout = "channels_last"} : (tensor<1x128x64x64xf32>) -> tensor<1x128x64x64xf32>
    "cluster.yield"(%r) : (tensor<1x128x64x64xf32>) -> ()
  }) : () -> tensor<1x128x64x64xf32>
  %b = "cluster.cluster"() <{sym_name = "c1"}> ({
    %c_recv = "cluster.recv"() <{channel = "c__c0_c1"}> : () -> tensor<1x128x64x64xf32>
    %r2 = "onnx.Relu"(%c_recv) {ramiel.layout = "channels_last"} : (tensor<1x128x64x64xf32>) -> tensor<1x128x64x64xf32>
    %c3 = "onnx.Conv"(%r2, %w) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {ramiel.layout = "channels_last"} : (tensor<1x128x64x64xf32>, tensor<128x128x3x3xf32>) -> tensor<1x128x64x64xf32>
    %r3 = "onnx.Relu"(%c3) {ramiel.layout = "channels_last"} : (tensor<1x128x64x64xf32>) -> tensor<1x128x64x64xf32>
    "cluster.yield"(%r3) : (tensor<1x128x64x64xf32>) -> ()
  }) : () -> tensor<1x128x64x64xf32>
  func.return %a, %b : tensor<1x128x64x64xf32>, tensor<1x128x64x64xf32>
}
}
