// --assign-layout{format=auto|channels-last|nchw}: the ops that compute their 4-D activations in
// channels-last get ramiel.layout = "channels_last": convolutions and pooling (anchors), and the
// element-wise and concat ops a channels-last value flows into. The lowering then
// places the conversions (LOWER): before a conv reading a graph input, before an op that needs
// contiguous strides (Flatten, Reshape, ...), before a channels-last op reading a contiguous
// value, and at the graph outputs; conv kernels are converted once at load (memory_format on the
// torchpy.weight); channels carry the producer's format.
// RUN: ramiel-opt %s --split-input-file '--assign-layout{format=channels-last}' | filecheck %s
// RUN: ramiel-opt %s --split-input-file '--assign-layout{format=channels-last}' --lower-to-torchpy | filecheck %s --check-prefix=LOWER
// RUN: ramiel-opt %s --split-input-file --assign-layout | filecheck %s --check-prefix=AUTO
// RUN: ramiel-opt %s --split-input-file '--assign-layout{format=nchw}' | filecheck %s --check-prefix=NCHW
// RUN: %not ramiel-opt %s --split-input-file '--assign-layout{format=nhwc}' 2>&1 | filecheck %s --check-prefix=BAD

// BAD: error: assign-layout: option 'format' must be one of auto, channels-last, nchw, not 'nhwc'{{$}}
// NCHW-NOT: ramiel.layout

// A conv stack: every op computes in channels-last; the graph input is converted once, before
// the first conv, the output back to contiguous; the 3x3 kernel is read channels-last, the 1x1
// kernel needs no conversion (its strides are the same in both formats).
// CHECK-LABEL: func.func @conv_stack
// CHECK:         %c1 = "onnx.Conv"(%x, %w1, %b1) {{.*}} {onnx_node_name = "conv1", ramiel.layout = "channels_last"}
// CHECK-NEXT:    %r1 = "onnx.Relu"(%c1) {onnx_node_name = "relu1", ramiel.layout = "channels_last"}
// CHECK-NEXT:    %p1 = "onnx.MaxPool"(%r1) {{.*}} {onnx_node_name = "pool1", ramiel.layout = "channels_last"}
// CHECK-NEXT:    %c2 = "onnx.Conv"(%p1, %w2, %b1) {{.*}} {onnx_node_name = "conv2", ramiel.layout = "channels_last"}
// CHECK-NEXT:    %y = "onnx.Relu"(%c2) {onnx_node_name = "relu2", ramiel.layout = "channels_last"}
// LOWER:         %w2 = torchpy.weight "w2" = {{.*}} : tensor<8x8x1x1xf32>
// LOWER:         %w1 = torchpy.weight "w1" = {{.*}} memory_format "channels_last"
// LOWER:         %x_cl = torchpy.method contiguous(%x) kwargs {memory_format = "torch.channels_last"} {onnx_node_name = "to channels-last for conv1 (Conv)", ramiel.conversion = "channels_last"}
// LOWER-NEXT:    %c1 = torchpy.call F.conv2d(%x_cl, %w1, %b1)
// LOWER-NEXT:    %r1 = torchpy.call torch.relu(%c1)
// LOWER-NEXT:    %p1 = torchpy.call F.max_pool2d(%r1)
// LOWER-NEXT:    %c2 = torchpy.call F.conv2d(%p1, %w2, %b1)
// LOWER-NEXT:    %y = torchpy.call torch.relu(%c2)
// LOWER-NEXT:    %y_nchw = torchpy.method contiguous(%y) {onnx_node_name = "to contiguous for graph output 'y'", ramiel.conversion = "contiguous_format"}
// LOWER-NEXT:    torchpy.return %y_nchw
// format=auto keeps it: its max pooling saves the two conversions its contiguous lowering
// would make (5 + 8192 / 3000 and 5 + 2048 / 3000 µs), more than the two at the boundary.
// AUTO-LABEL:  func.func @conv_stack
// AUTO:          %c1 = "onnx.Conv"(%x, %w1, %b1) {{.*}} ramiel.layout = "channels_last"
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @conv_stack(%x: tensor<1x3x16x16xf32> {onnx.name = "x"}) -> (tensor<1x8x8x8xf32> {onnx.name = "y"}) {
  %w1 = "onnx.Constant"() <{value = dense<0.5> : tensor<8x3x3x3xf32>}> : () -> tensor<8x3x3x3xf32>
  %b1 = "onnx.Constant"() <{value = dense<0.1> : tensor<8xf32>}> : () -> tensor<8xf32>
  %w2 = "onnx.Constant"() <{value = dense<0.25> : tensor<8x8x1x1xf32>}> : () -> tensor<8x8x1x1xf32>
  %c1 = "onnx.Conv"(%x, %w1, %b1) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {onnx_node_name = "conv1"} : (tensor<1x3x16x16xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<1x8x16x16xf32>
  %r1 = "onnx.Relu"(%c1) {onnx_node_name = "relu1"} : (tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %p1 = "onnx.MaxPool"(%r1) <{kernel_shape = [2 : si64, 2 : si64], strides = [2 : si64, 2 : si64]}> {onnx_node_name = "pool1"} : (tensor<1x8x16x16xf32>) -> tensor<1x8x8x8xf32>
  %c2 = "onnx.Conv"(%p1, %w2, %b1) <{kernel_shape = [1 : si64, 1 : si64]}> {onnx_node_name = "conv2"} : (tensor<1x8x8x8xf32>, tensor<8x8x1x1xf32>, tensor<8xf32>) -> tensor<1x8x8x8xf32>
  %y = "onnx.Relu"(%c2) {onnx_node_name = "relu2"} : (tensor<1x8x8x8xf32>) -> tensor<1x8x8x8xf32>
  func.return %y : tensor<1x8x8x8xf32>
}
}

// -----

// A branch into Flatten/Gemm: Flatten needs contiguous strides, so the ReLU's result is
// converted before it; the other branch (a max pooling) stays channels-last up to the output.
// Gemm and Flatten get no attribute.
// CHECK-LABEL: func.func @branch_to_gemm
// CHECK:         %r = "onnx.Relu"(%c) {onnx_node_name = "relu", ramiel.layout = "channels_last"}
// CHECK-NEXT:    %f = "onnx.Flatten"(%r) {onnx_node_name = "flatten"}
// CHECK-NEXT:    %g = "onnx.Gemm"(%f, %fw) <{transB = 1 : si64}> {onnx_node_name = "fc"}
// CHECK-NEXT:    %p = "onnx.MaxPool"(%r) {{.*}} {onnx_node_name = "pool", ramiel.layout = "channels_last"}
// LOWER:         %r = torchpy.call torch.relu(%c)
// LOWER-NEXT:    %r_nchw = torchpy.method contiguous(%r) {onnx_node_name = "to contiguous for flatten (Flatten)"
// LOWER-NEXT:    %f = torchpy.call torch.flatten(%r_nchw)
// LOWER-NEXT:    %g = torchpy.call F.linear(%f, %fw)
// LOWER-NEXT:    %p = torchpy.call F.max_pool2d(%r)
// LOWER-NEXT:    %p_nchw = torchpy.method contiguous(%p) {onnx_node_name = "to contiguous for graph output 'pooled'"
// LOWER-NEXT:    torchpy.return %g, %p_nchw
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @branch_to_gemm(%x: tensor<1x8x16x16xf32> {onnx.name = "x"}) -> (tensor<1x10xf32> {onnx.name = "logits"}, tensor<1x8x8x8xf32> {onnx.name = "pooled"}) {
  %w = "onnx.Constant"() <{value = dense<0.5> : tensor<8x8x3x3xf32>}> : () -> tensor<8x8x3x3xf32>
  %fw = "onnx.Constant"() <{value = dense<0.01> : tensor<10x2048xf32>}> : () -> tensor<10x2048xf32>
  %none = "onnx.NoValue"() : () -> none
  %c = "onnx.Conv"(%x, %w, %none) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {onnx_node_name = "conv"} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x16x16xf32>
  %r = "onnx.Relu"(%c) {onnx_node_name = "relu"} : (tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
  %f = "onnx.Flatten"(%r) {onnx_node_name = "flatten"} : (tensor<1x8x16x16xf32>) -> tensor<1x2048xf32>
  %g = "onnx.Gemm"(%f, %fw) <{transB = 1 : si64}> {onnx_node_name = "fc"} : (tensor<1x2048xf32>, tensor<10x2048xf32>) -> tensor<1x10xf32>
  %p = "onnx.MaxPool"(%r) <{kernel_shape = [2 : si64, 2 : si64], strides = [2 : si64, 2 : si64]}> {onnx_node_name = "pool"} : (tensor<1x8x16x16xf32>) -> tensor<1x8x8x8xf32>
  func.return %g, %p : tensor<1x10xf32>, tensor<1x8x8x8xf32>
}
}

// -----

// A concat of two conv branches and a Reshape (contiguous): the Concat computes in
// channels-last, so the Reshape's result is converted and the conv results (one of them an
// operand twice) are not; the conv input is converted once for both convs.
// CHECK-LABEL: func.func @concat
// CHECK:         %r = "onnx.Reshape"(%z, %s) {onnx_node_name = "reshape"}
// CHECK-NEXT:    %y = "onnx.Concat"(%a, %b, %r, %a) <{axis = 1 : si64}> {onnx_node_name = "cat", ramiel.layout = "channels_last"}
// LOWER:         %x_cl = torchpy.method {{.*}}(%x) {{.*}}"to channels-last for a (Conv)"
// LOWER-NEXT:    %a = torchpy.call {{.*}}(%x_cl, %w)
// LOWER-NEXT:    %b = torchpy.call {{.*}}(%x_cl, %w)
// LOWER-NEXT:    %r = torchpy.method reshape(%z)
// LOWER-NEXT:    %r_cl = torchpy.method {{.*}}(%r) {{.*}}"to channels-last for cat (Concat)"
// LOWER-NEXT:    %y = torchpy.call torch.cat(%a, %b, %r_cl) ["[$0, $1, $2, $0]"]
// LOWER-NEXT:    %y_nchw = torchpy.method {{.*}}(%y)
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @concat(%x: tensor<1x8x16x16xf32> {onnx.name = "x"}, %z: tensor<1x4x256xf32> {onnx.name = "z"}) -> (tensor<1x16x16x16xf32> {onnx.name = "y"}) {
  %w = "onnx.Constant"() <{value = dense<0.5> : tensor<4x8x3x3xf32>}> : () -> tensor<4x8x3x3xf32>
  %s = "onnx.Constant"() <{value = dense<[1, 4, 16, 16]> : tensor<4xi64>}> : () -> tensor<4xi64>
  %none = "onnx.NoValue"() : () -> none
  %a = "onnx.Conv"(%x, %w, %none) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {onnx_node_name = "a"} : (tensor<1x8x16x16xf32>, tensor<4x8x3x3xf32>, none) -> tensor<1x4x16x16xf32>
  %b = "onnx.Conv"(%x, %w, %none) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {onnx_node_name = "b"} : (tensor<1x8x16x16xf32>, tensor<4x8x3x3xf32>, none) -> tensor<1x4x16x16xf32>
  %r = "onnx.Reshape"(%z, %s) {onnx_node_name = "reshape"} : (tensor<1x4x256xf32>, tensor<4xi64>) -> tensor<1x4x16x16xf32>
  %y = "onnx.Concat"(%a, %b, %r, %a) <{axis = 1 : si64}> {onnx_node_name = "cat"} : (tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>) -> tensor<1x16x16x16xf32>
  func.return %y : tensor<1x16x16x16xf32>
}
}

// -----

// A channel shuffle (the Gather --fuse-channel-shuffle makes: F.channel_shuffle) keeps its
// input's format, so the conv stack around it needs no conversion; another Gather of the
// channels (not a shuffle: x[:, p]) reads a contiguous tensor.
// CHECK-LABEL: func.func @channel_shuffle
// CHECK:         %s = "onnx.Gather"(%a, %p) <{axis = 1 : si64}> {onnx_node_name = "shuffle", ramiel.layout = "channels_last"}
// CHECK:         %g = "onnx.Gather"(%b, %q) <{axis = 1 : si64}> {onnx_node_name = "gather"}
// LOWER:         %a = torchpy.call F.conv2d(%x_cl, %w)
// LOWER-NEXT:    %s = torchpy.call F.channel_shuffle(%a) [0, "2"]
// LOWER-NEXT:    %b = torchpy.call F.conv2d(%s, %w)
// LOWER-NEXT:    %b_nchw = torchpy.method contiguous(%b) {onnx_node_name = "to contiguous for gather (Gather)"
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @channel_shuffle(%x: tensor<1x8x16x16xf32> {onnx.name = "x"}) -> (tensor<1x8x16x16xf32> {onnx.name = "y"}) {
  %w = "onnx.Constant"() <{value = dense<0.5> : tensor<8x8x1x1xf32>}> : () -> tensor<8x8x1x1xf32>
  %p = "onnx.Constant"() <{value = dense<[0, 4, 1, 5, 2, 6, 3, 7]> : tensor<8xi64>}> : () -> tensor<8xi64>
  %q = "onnx.Constant"() <{value = dense<[1, 0, 2, 3, 4, 5, 6, 7]> : tensor<8xi64>}> : () -> tensor<8xi64>
  %none = "onnx.NoValue"() : () -> none
  %a = "onnx.Conv"(%x, %w, %none) <{kernel_shape = [1 : si64, 1 : si64]}> {onnx_node_name = "a"} : (tensor<1x8x16x16xf32>, tensor<8x8x1x1xf32>, none) -> tensor<1x8x16x16xf32>
  %s = "onnx.Gather"(%a, %p) <{axis = 1 : si64}> {onnx_node_name = "shuffle"} : (tensor<1x8x16x16xf32>, tensor<8xi64>) -> tensor<1x8x16x16xf32>
  %b = "onnx.Conv"(%s, %w, %none) <{kernel_shape = [1 : si64, 1 : si64]}> {onnx_node_name = "b"} : (tensor<1x8x16x16xf32>, tensor<8x8x1x1xf32>, none) -> tensor<1x8x16x16xf32>
  %g = "onnx.Gather"(%b, %q) <{axis = 1 : si64}> {onnx_node_name = "gather"} : (tensor<1x8x16x16xf32>, tensor<8xi64>) -> tensor<1x8x16x16xf32>
  func.return %g : tensor<1x8x16x16xf32>
}
}

// -----

// A Split along the channels (--combine-parallel-convs makes them) keeps its input's format: its
// parts are views of the channels-last conv result, read by the next conv (which copies a part
// into a dense tensor itself: ops.conv2d_prepacked) without a conversion. A Split along another
// axis reads a contiguous tensor.
// CHECK-LABEL: func.func @split_channels
// CHECK:         %p, %q = "onnx.Split"(%a, %sizes) <{axis = 1 : si64}> {onnx_node_name = "split", ramiel.layout = "channels_last"}
// CHECK:         %h0, %h1 = "onnx.Split"(%b, %sizes) <{axis = 2 : si64}> {onnx_node_name = "rows"}
// LOWER:         %a = torchpy.call F.conv2d(%x_cl, %w)
// LOWER-NEXT:    %[[PARTS:.*]] = torchpy.call torch.split(%a) [0, "4"] kwargs {dim = "1"}
// LOWER-NEXT:    %p = torchpy.call operator.getitem(%[[PARTS]]) [0, "0"]
// LOWER-NEXT:    %q = torchpy.call operator.getitem(%[[PARTS]]) [0, "1"]
// LOWER-NEXT:    %b = torchpy.call F.conv2d(%q, %w4)
// LOWER-NEXT:    %b_nchw = torchpy.method contiguous(%b) {onnx_node_name = "to contiguous for rows (Split)"
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @split_channels(%x: tensor<1x8x16x16xf32> {onnx.name = "x"}) -> (tensor<1x4x16x16xf32> {onnx.name = "p"}, tensor<1x4x8x16xf32> {onnx.name = "h0"}, tensor<1x4x8x16xf32> {onnx.name = "h1"}) {
  %w = "onnx.Constant"() <{value = dense<0.5> : tensor<8x8x1x1xf32>}> : () -> tensor<8x8x1x1xf32>
  %w4 = "onnx.Constant"() <{value = dense<0.5> : tensor<4x4x1x1xf32>}> : () -> tensor<4x4x1x1xf32>
  %sizes = "onnx.Constant"() <{value = dense<[4, 4]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %none = "onnx.NoValue"() : () -> none
  %a = "onnx.Conv"(%x, %w, %none) <{kernel_shape = [1 : si64, 1 : si64]}> {onnx_node_name = "a"} : (tensor<1x8x16x16xf32>, tensor<8x8x1x1xf32>, none) -> tensor<1x8x16x16xf32>
  %p, %q = "onnx.Split"(%a, %sizes) <{axis = 1 : si64}> {onnx_node_name = "split"} : (tensor<1x8x16x16xf32>, tensor<2xi64>) -> (tensor<1x4x16x16xf32>, tensor<1x4x16x16xf32>)
  %b = "onnx.Conv"(%q, %w4, %none) <{kernel_shape = [1 : si64, 1 : si64]}> {onnx_node_name = "b"} : (tensor<1x4x16x16xf32>, tensor<4x4x1x1xf32>, none) -> tensor<1x4x16x16xf32>
  %h0, %h1 = "onnx.Split"(%b, %sizes) <{axis = 2 : si64}> {onnx_node_name = "rows"} : (tensor<1x4x16x16xf32>, tensor<2xi64>) -> (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>)
  func.return %p, %h0, %h1 : tensor<1x4x16x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
}
}

// -----

// A channel between clusters carries the tensor in its producer's format: the conv's result
// crosses channels-last (both ends say so), the ReLU in c1 reads it as it is and sends its
// result back channels-last; only the graph input and output are converted.
// CHECK-LABEL: func.func @channel
// CHECK:         %y = "onnx.Add"(%c, %t) {onnx_node_name = "add", ramiel.layout = "channels_last"}
// CHECK:         %t_1 = "onnx.Relu"(%c_1) {onnx_node_name = "relu", ramiel.layout = "channels_last"}
// LOWER:         torchpy.func cluster @cluster_c0
// LOWER:         %x_cl = torchpy.method {{.*}}(%x)
// LOWER-NEXT:    %c = torchpy.call F.conv2d(%x_cl, %w)
// LOWER-NEXT:    torchpy.put %c to "c__c0_c1" memory_format "channels_last"
// LOWER-NEXT:    %t = torchpy.get from "t__c1_c0" memory_format "channels_last"
// LOWER-NEXT:    %y = torchpy.call operator.add(%c, %t)
// LOWER-NEXT:    %y_nchw = torchpy.method {{.*}}(%y) {{.*}}"to contiguous for graph output 'y'"
// LOWER-NEXT:    torchpy.put %y_nchw to "y__out"
// LOWER:         torchpy.func cluster @cluster_c1
// LOWER-NEXT:    %c = torchpy.get from "c__c0_c1" memory_format "channels_last"
// LOWER-NEXT:    %t = torchpy.call torch.relu(%c)
// LOWER-NEXT:    torchpy.put %t to "t__c1_c0" memory_format "channels_last"
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @channel(%x: tensor<1x8x16x16xf32> {onnx.name = "x"}) -> (tensor<1x8x16x16xf32> {onnx.name = "y"}) {
  %w = "onnx.Constant"() <{value = dense<0.5> : tensor<8x8x3x3xf32>}> : () -> tensor<8x8x3x3xf32>
  %none = "onnx.NoValue"() : () -> none
  %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
    %c = "onnx.Conv"(%x, %w, %none) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {onnx_node_name = "conv"} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x16x16xf32>
    "cluster.send"(%c) <{channel = "c__c0_c1"}> : (tensor<1x8x16x16xf32>) -> ()
    %t = "cluster.recv"() <{channel = "t__c1_c0"}> : () -> tensor<1x8x16x16xf32>
    %y = "onnx.Add"(%c, %t) {onnx_node_name = "add"} : (tensor<1x8x16x16xf32>, tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
    "cluster.yield"(%y) : (tensor<1x8x16x16xf32>) -> ()
  }) : () -> tensor<1x8x16x16xf32>
  "cluster.cluster"() <{sym_name = "c1"}> ({
    %c_1 = "cluster.recv"() <{channel = "c__c0_c1"}> : () -> tensor<1x8x16x16xf32>
    %t_1 = "onnx.Relu"(%c_1) {onnx_node_name = "relu"} : (tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
    "cluster.send"(%t_1) <{channel = "t__c1_c0"}> : (tensor<1x8x16x16xf32>) -> ()
    "cluster.yield"() : () -> ()
  }) : () -> ()
  func.return %0 : tensor<1x8x16x16xf32>
}
}

// -----

// A global pooling, and a pooling to a 1x1 map, read their input in the format it comes in: the
// conv's result is not converted before them (the conversion had cost more than the pooling),
// and their (1, C, 1, 1) results are the same in both formats, so none is converted after them.
// The channels-last mean is F.avg_pool2d over the whole map (torch.mean reduces channels-last
// tensors with the tail channels apart, see ramiel.layout); a maximum does not round.
// CHECK-LABEL: func.func @global_pool
// CHECK:         %c = "onnx.Conv"(%x, %w, %none) {{.*}} ramiel.layout = "channels_last"
// CHECK-NEXT:    %g = "onnx.GlobalAveragePool"(%c) {onnx_node_name = "gap", ramiel.layout = "channels_last"}
// CHECK-NEXT:    %m = "onnx.GlobalMaxPool"(%c) {onnx_node_name = "gmp", ramiel.layout = "channels_last"}
// CHECK-NEXT:    %a = "onnx.AveragePool"(%c) {{.*}} {onnx_node_name = "pool", ramiel.layout = "channels_last"}
// CHECK-NEXT:    %s = "onnx.Sum"(%g, %m, %a) {onnx_node_name = "sum"} :
// CHECK-NEXT:    %y = "onnx.Flatten"(%s) {onnx_node_name = "flatten"} :
// LOWER:         %c = torchpy.call F.conv2d(%x_cl, %w)
// LOWER-NEXT:    %g = torchpy.call F.avg_pool2d(%c) [0, "(16, 16)"]
// LOWER-NEXT:    %m = torchpy.call torch.amax(%c)
// LOWER-NEXT:    %a = torchpy.call F.avg_pool2d(%c) [0, "(16, 16)"]
// LOWER-NOT:     contiguous
// LOWER:         torchpy.return %y
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @global_pool(%x: tensor<1x8x16x16xf32> {onnx.name = "x"}) -> (tensor<1x8xf32> {onnx.name = "y"}) {
  %w = "onnx.Constant"() <{value = dense<0.5> : tensor<8x8x3x3xf32>}> : () -> tensor<8x8x3x3xf32>
  %none = "onnx.NoValue"() : () -> none
  %c = "onnx.Conv"(%x, %w, %none) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {onnx_node_name = "conv"} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x16x16xf32>
  %g = "onnx.GlobalAveragePool"(%c) {onnx_node_name = "gap"} : (tensor<1x8x16x16xf32>) -> tensor<1x8x1x1xf32>
  %m = "onnx.GlobalMaxPool"(%c) {onnx_node_name = "gmp"} : (tensor<1x8x16x16xf32>) -> tensor<1x8x1x1xf32>
  %a = "onnx.AveragePool"(%c) <{kernel_shape = [16 : si64, 16 : si64]}> {onnx_node_name = "pool"} : (tensor<1x8x16x16xf32>) -> tensor<1x8x1x1xf32>
  %s = "onnx.Sum"(%g, %m, %a) {onnx_node_name = "sum"} : (tensor<1x8x1x1xf32>, tensor<1x8x1x1xf32>, tensor<1x8x1x1xf32>) -> tensor<1x8x1x1xf32>
  %y = "onnx.Flatten"(%s) {onnx_node_name = "flatten"} : (tensor<1x8x1x1xf32>) -> tensor<1x8xf32>
  func.return %y : tensor<1x8xf32>
}
}

// -----

// format=auto keeps a region whose gain exceeds its boundary conversions: the max pooling of
// (1, 32, 56, 56) saves the two conversions its contiguous lowering makes (72 + 22 µs) and the
// conv, prepacked in channels-last, 29 % of its 390 µs, against 38 + 22 µs of conversions at
// the input and output.
// AUTO-LABEL:  func.func @auto_keeps
// AUTO:          %c = "onnx.Conv"(%x, %w, %none) {{.*}} ramiel.layout = "channels_last"
// AUTO-NEXT:     %p = "onnx.MaxPool"(%c) {{.*}} ramiel.layout = "channels_last"
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @auto_keeps(%x: tensor<1x16x56x56xf32> {onnx.name = "x"}) -> (tensor<1x32x28x28xf32> {onnx.name = "y"}) {
  %w = "onnx.Constant"() <{value = dense<0.5> : tensor<32x16x3x3xf32>}> : () -> tensor<32x16x3x3xf32>
  %none = "onnx.NoValue"() : () -> none
  %c = "onnx.Conv"(%x, %w, %none) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {onnx_node_name = "conv"} : (tensor<1x16x56x56xf32>, tensor<32x16x3x3xf32>, none) -> tensor<1x32x56x56xf32>
  %p = "onnx.MaxPool"(%c) <{kernel_shape = [2 : si64, 2 : si64], strides = [2 : si64, 2 : si64]}> {onnx_node_name = "pool"} : (tensor<1x32x56x56xf32>) -> tensor<1x32x28x28xf32>
  func.return %p : tensor<1x32x28x28xf32>
}
}

// -----

// format=auto drops a region whose gain does not exceed its boundary conversions: a lone 3x3
// conv of (1, 4, 8, 8) would gain 29 % of its 5.3 µs and cost two conversions of 5.2 µs.
// AUTO-LABEL:  func.func @auto_drops
// AUTO-NOT:      ramiel.layout
// AUTO:          func.return
// CHECK-LABEL: func.func @auto_drops
// CHECK:         ramiel.layout = "channels_last"
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @auto_drops(%x: tensor<1x4x8x8xf32> {onnx.name = "x"}) -> (tensor<1x4x8x8xf32> {onnx.name = "y"}) {
  %w = "onnx.Constant"() <{value = dense<0.5> : tensor<4x4x3x3xf32>}> : () -> tensor<4x4x3x3xf32>
  %none = "onnx.NoValue"() : () -> none
  %y = "onnx.Conv"(%x, %w, %none) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {onnx_node_name = "conv"} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, none) -> tensor<1x4x8x8xf32>
  func.return %y : tensor<1x4x8x8xf32>
}
}

// -----

// A control-flow op is a layout boundary: the ops of its bodies stay contiguous (the Relu here
// would join a channels-last region outside one), and the channels-last value the If reads from
// outside (%c, captured by both branches) is converted once, before the compound statement.
// CHECK-LABEL: func.func @region_boundary
// CHECK:         %c = "onnx.Conv"(%x, %w, %none) {{.*}} ramiel.layout = "channels_last"
// CHECK:         %r = "onnx.Relu"(%c) {onnx_node_name = "relu"} :
// CHECK:         }) {onnx_node_name = "choose"} :
// LOWER:         %c_nchw = torchpy.method contiguous(%c) {onnx_node_name = "to contiguous for choose (If)", ramiel.conversion = "contiguous_format"}
// LOWER-NEXT:    %y = torchpy.if %k : tensor<i1> -> tensor<1x8x16x16xf32> attributes {onnx_node_name = "choose (If)"} {
// LOWER-NEXT:      %r = torchpy.call torch.relu(%c_nchw)
// LOWER-NEXT:      torchpy.yield %r
// LOWER-NEXT:    } else {
// LOWER-NEXT:      torchpy.yield %c_nchw
// LOWER-NEXT:    }
// LOWER-NOT:     ramiel.conversion
// LOWER:         torchpy.return
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @region_boundary(%x: tensor<1x8x16x16xf32> {onnx.name = "x"}, %k: tensor<i1> {onnx.name = "k"}) -> (tensor<1x8x16x16xf32> {onnx.name = "y"}) {
  %w = "onnx.Constant"() <{value = dense<0.5> : tensor<8x8x3x3xf32>}> : () -> tensor<8x8x3x3xf32>
  %none = "onnx.NoValue"() : () -> none
  %c = "onnx.Conv"(%x, %w, %none) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> {onnx_node_name = "conv"} : (tensor<1x8x16x16xf32>, tensor<8x8x3x3xf32>, none) -> tensor<1x8x16x16xf32>
  %y = "onnx.If"(%k) ({
    %r = "onnx.Relu"(%c) {onnx_node_name = "relu"} : (tensor<1x8x16x16xf32>) -> tensor<1x8x16x16xf32>
    "onnx.Yield"(%r) : (tensor<1x8x16x16xf32>) -> ()
  }, {
    "onnx.Yield"(%c) : (tensor<1x8x16x16xf32>) -> ()
  }) {onnx_node_name = "choose"} : (tensor<i1>) -> tensor<1x8x16x16xf32>
  func.return %y : tensor<1x8x16x16xf32>
}
}
