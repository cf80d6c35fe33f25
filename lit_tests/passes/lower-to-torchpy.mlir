// --lower-to-torchpy: onnx + cluster IR -> torchpy, one PyTorch call (or a few) per ONNX op with
// the ONNX semantics decided from static shapes and attributes.
// RUN: ramiel-opt %S/Inputs/small-cnn.mlir --lower-to-torchpy | filecheck %s --check-prefix=SEQ
// RUN: ramiel-opt %s --split-input-file --lower-to-torchpy | filecheck %s
// RUN: ramiel-opt %s --split-input-file '--lower-to-torchpy{mode=sequential}' | filecheck %s --check-prefix=FLAT
// RUN: %not ramiel-opt %S/Inputs/unsupported.mlir --lower-to-torchpy 2>&1 | filecheck %s --check-prefix=NOSUPPORT
// RUN: %not ramiel-opt %s --split-input-file '--lower-to-torchpy{mode=parallel}' 2>&1 | filecheck %s --check-prefix=MODE
// RUN: %not ramiel-opt %S/Inputs/data-dependent.mlir --lower-to-torchpy 2>&1 | filecheck %s --check-prefix=DYNSHAPE

// A flat function becomes `forward`, whose arguments are the graph inputs. Constants become
// weights (w.<key>), an anonymous PyTorch initializer (onnx::Conv_7) named after its user; each
// op's last statement carries the ONNX node name (for the comment in the Python code).
// SEQ:      torchpy.func sequential @forward(%x: tensor<1x2x4x4xf32>)
// SEQ-NEXT:   %conv1_W = torchpy.weight "conv1_W" = dense<5.000000e-01> : tensor<3x2x3x3xf32>
// Conv: explicit symmetric pads become F.conv2d's padding; the missing bias is None.
// SEQ-NEXT:   %c = torchpy.call F.conv2d(%x, %conv1_W) [0, 1, "None"] kwargs {stride = "(2, 2)", padding = "(1, 1)"} {onnx_node_name = "conv1 (Conv)"}
// MaxPool SAME_UPPER on an even size: the extra padding goes at the end, with -inf.
// SEQ-NEXT:   %0 = torchpy.call F.pad(%c) [0, "[0, 1, 0, 1]"] kwargs {value = "-math.inf"} : (tensor<1x3x2x2xf32>) -> !torchpy.object
// SEQ-NEXT:   %p = torchpy.call F.max_pool2d(%0) [0, "(2, 2)"] kwargs {stride = "(1, 1)"} {onnx_node_name = "pool (MaxPool)"}
// Slice with a huge end on axis 1: a plain subscript.
// SEQ-NEXT:   %s = torchpy.call operator.getitem(%p) [0, ":, 1:"] {onnx_node_name = "slice (Slice)"}
// Reshape with a constant shape (-1 kept).
// SEQ-NEXT:   %r = torchpy.method reshape(%s) ["1", "-1"] {onnx_node_name = "flat (Reshape)"}
// Gemm with transB and alpha: three statements, the node name on the last.
// SEQ-NEXT:   %1 = torchpy.method t(%r)
// SEQ-NEXT:   %2 = torchpy.call torch.matmul(%r, %1)
// SEQ-NEXT:   %g = torchpy.call operator.mul(%2) [0, "0.5"] {onnx_node_name = "gemm (Gemm)"}
// SEQ-NEXT:   %o = torchpy.call operator.add(%r, %g) {onnx_node_name = "add (Add)"}
// SEQ-NEXT:   torchpy.return %o : tensor<1x8xf32>
// SEQ-NEXT: }
// SEQ-NEXT: torchpy.program @main inputs [[]] outputs [""] input_order ["input"] output_order ["output"]

// A clustered function: one cluster function per cluster; recv/send become get/put on the same
// channels; each graph input a cluster reads arrives on <input>__<cluster>, each graph output
// leaves on <output>__out; the program op lists them. A weight used by two clusters keeps one key.
// CHECK:      torchpy.func cluster @cluster_c0() attributes {ramiel.cost_us = 1.200000e+02 : f64, ramiel.num_ops = 3 : i64} {
// CHECK-NEXT:   %w = torchpy.weight "w" = dense<2.000000e+00> : tensor<1x4xf32>
// CHECK-NEXT:   %x = torchpy.get from "x__c0" : tensor<1x4xf32>
// CHECK-NEXT:   %a = torchpy.call operator.mul(%x, %w) {onnx_node_name = "mul (Mul)"}
// CHECK-NEXT:   torchpy.put %a to "a__c0_c1"
// CHECK-NEXT:   %b = torchpy.call torch.sigmoid(%a) {onnx_node_name = "sig (Sigmoid)"}
// CHECK-NEXT:   %c = torchpy.get from "c__c1_c0"
// CHECK-NEXT:   %d = torchpy.call operator.add(%b, %c) {onnx_node_name = "add (Add)"}
// CHECK-NEXT:   torchpy.put %d to "y__out"
// CHECK-NEXT:   torchpy.return
// CHECK-NEXT: }
// CHECK-NEXT: torchpy.func cluster @cluster_c1() attributes {ramiel.cost_us = 5.000000e+01 : f64, ramiel.num_ops = 1 : i64} {
// CHECK-NEXT:   %w = torchpy.weight "w" = dense<2.000000e+00> : tensor<1x4xf32>
// CHECK-NEXT:   %a = torchpy.get from "a__c0_c1"
// CHECK-NEXT:   %c = torchpy.call operator.add(%a, %w) {onnx_node_name = "add2 (Add)"}
// CHECK-NEXT:   torchpy.put %c to "c__c1_c0"
// CHECK-NEXT:   torchpy.return
// CHECK-NEXT: }
// CHECK-NEXT: torchpy.program @main inputs [["x__c0"]] outputs ["y__out"] input_order ["x"] output_order ["y"]
// mode=sequential flattens the clusters first: the sequential program of the same model, with the
// same weight keys.
// FLAT:      torchpy.func sequential @forward(%x: tensor<1x4xf32>)
// FLAT-NEXT:   %w = torchpy.weight "w"
// FLAT-NEXT:   %a = torchpy.call operator.mul(%x, %w)
// FLAT-NEXT:   %b = torchpy.call torch.sigmoid(%a)
// FLAT-NEXT:   %c = torchpy.call operator.add(%a, %w)
// FLAT-NEXT:   %d = torchpy.call operator.add(%b, %c)
// FLAT-NEXT:   torchpy.return %d
// FLAT-NOT:  torchpy.get
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<1x4xf32> {onnx.name = "x"}) -> (tensor<1x4xf32> {onnx.name = "y"}) {
  %w = "onnx.Constant"() <{value = dense<2.0> : tensor<1x4xf32>}> : () -> tensor<1x4xf32>
  %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
    %a = "onnx.Mul"(%x, %w) {onnx_node_name = "mul", ramiel.cost_us = 10.0 : f64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    "cluster.send"(%a) <{channel = "a__c0_c1"}> : (tensor<1x4xf32>) -> ()
    %b = "onnx.Sigmoid"(%a) {onnx_node_name = "sig", ramiel.cost_us = 100.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
    %c = "cluster.recv"() <{channel = "c__c1_c0"}> : () -> tensor<1x4xf32>
    %d = "onnx.Add"(%b, %c) {onnx_node_name = "add", ramiel.cost_us = 10.0 : f64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    "cluster.yield"(%d) : (tensor<1x4xf32>) -> ()
  }) : () -> tensor<1x4xf32>
  "cluster.cluster"() <{sym_name = "c1"}> ({
    %a_1 = "cluster.recv"() <{channel = "a__c0_c1"}> : () -> tensor<1x4xf32>
    %c_1 = "onnx.Add"(%a_1, %w) {onnx_node_name = "add2", ramiel.cost_us = 50.0 : f64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    "cluster.send"(%c_1) <{channel = "c__c1_c0"}> : (tensor<1x4xf32>) -> ()
    "cluster.yield"() : () -> ()
  }) : () -> ()
  func.return %0 : tensor<1x4xf32>
}
}

// -----

// Graph inputs/outputs whose names clash after sanitising get distinct channels; a graph input
// returned as a graph output is put on its output channel by the first cluster.
// CHECK:      torchpy.func cluster @cluster_c0()
// CHECK-NEXT:   %a = torchpy.get from "a_b__c0"
// CHECK-NEXT:   %b = torchpy.get from "a_b__c0_1"
// CHECK-NEXT:   %s = torchpy.call operator.sub(%a, %b)
// CHECK-DAG:    torchpy.put %s to "y_z__out"
// CHECK-DAG:    torchpy.put %s to "y_z__out_1"
// CHECK:        torchpy.put %a to "same__out"
// CHECK-NEXT:   torchpy.return
// CHECK:      torchpy.program @main inputs [["a_b__c0"], ["a_b__c0_1"]] outputs ["y_z__out", "y_z__out_1", "same__out"] input_order ["a-b", "a_b"] output_order ["y-z", "y.z", "same"]
// The sequential function returns the value twice and an input: copies where memory is shared.
// FLAT:       %s_copy = torchpy.method clone(%s)
// FLAT-NEXT:  %a_copy = torchpy.method clone(%a)
// FLAT-NEXT:  torchpy.return %s, %s_copy, %a_copy
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%a: tensor<2xf32> {onnx.name = "a-b"}, %b: tensor<2xf32> {onnx.name = "a_b"}) -> (tensor<2xf32> {onnx.name = "y-z"}, tensor<2xf32> {onnx.name = "y.z"}, tensor<2xf32> {onnx.name = "same"}) {
  %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
    %s = "onnx.Sub"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    "cluster.yield"(%s) : (tensor<2xf32>) -> ()
  }) : () -> tensor<2xf32>
  func.return %0, %0, %a : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
}

// -----

// Casts to float8 follow ONNX's tables, not torch's cast: saturate=1 (the default) clamps to the
// type's largest value first; saturate=0 makes float8_e4m3fn's out-of-range values NaN (torch's
// cast would saturate them); FLOAT8E8M0 rounds by round_mode in a runtime helper.
// CHECK:      torchpy.func sequential @forward(%x: tensor<4xf32>)
// CHECK-NEXT:   %0 = torchpy.call torch.clamp(%x) [0, "-448.0", "448.0"]
// CHECK-NEXT:   %a = torchpy.method to(%0) ["torch.float8_e4m3fn"] {onnx_node_name = "sat (Cast)"}
// CHECK-NEXT:   %1 = torchpy.call torch.abs(%x)
// CHECK-NEXT:   %2 = torchpy.call operator.gt(%1) [0, "464.0"]
// CHECK-NEXT:   %3 = torchpy.method masked_fill(%x, %2) [1, "math.nan"]
// CHECK-NEXT:   %b = torchpy.method to(%3) ["torch.float8_e4m3fn"] {onnx_node_name = "nosat (Cast)"}
// CHECK-NEXT:   %c = torchpy.method to(%x) ["torch.float8_e5m2"] {onnx_node_name = "e5m2 (Cast)"}
// CHECK-NEXT:   %d = torchpy.call ops.cast_e8m0(%x) kwargs {saturate = "True", round_mode = "'nearest'"} {onnx_node_name = "e8m0 (Cast)"}
// CHECK-NEXT:   %4 = torchpy.method to(%a) ["torch.float32"]
// CHECK-NEXT:   %e = torchpy.method to(%4) ["torch.float16"] {onnx_node_name = "back (Cast)"}
builtin.module attributes {onnx.opset = 25 : i64} {
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xf8E8M0FNU>, tensor<4xf16>) {
  %a = "onnx.Cast"(%x) <{to = 17 : si64}> {onnx_node_name = "sat"} : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
  %b = "onnx.Cast"(%x) <{to = 17 : si64, saturate = 0 : si64}> {onnx_node_name = "nosat"} : (tensor<4xf32>) -> tensor<4xf8E4M3FN>
  %c = "onnx.Cast"(%x) <{to = 19 : si64, saturate = 0 : si64}> {onnx_node_name = "e5m2"} : (tensor<4xf32>) -> tensor<4xf8E5M2>
  %d = "onnx.Cast"(%x) <{to = 24 : si64, round_mode = "nearest"}> {onnx_node_name = "e8m0"} : (tensor<4xf32>) -> tensor<4xf8E8M0FNU>
  %e = "onnx.Cast"(%a) <{to = 10 : si64}> {onnx_node_name = "back"} : (tensor<4xf8E4M3FN>) -> tensor<4xf16>
  func.return %a, %b, %c, %d, %e : tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>, tensor<4xf8E5M2>, tensor<4xf8E8M0FNU>, tensor<4xf16>
}
}

// Every unsupported op is listed at once, with its node names.
// NOSUPPORT: error: unsupported ONNX operator(s): Bernoulli (2 nodes 'coin1', 'coin2'; opset 17): no lowering rule for this operator; RandomNormalLike (node 'noise'; opset 17): no lowering rule for this operator
// MODE: error: lower-to-torchpy: option 'mode' must be one of auto, sequential, not 'parallel'{{$}}
// Shapes the input data decide (NonZero; Reshape to a shape given at run time): named where they
// stop being static (not the Cast computed from NonZero's result), at compile time.
// DYNSHAPE: error: shape not static: it depends on the input data, and Ramiel sizes every tensor and channel buffer at compile time: NonZero node 'where nonzero' (opset 17): result 'nz' has shape 2x?; Reshape node 'reshape' (opset 17): result 'z' has shape ?x?{{$}}

// -----

// A shape operand given at run time (a graph input), the result declared static: the runtime
// helper follows the operand's value and checks the result against the declared shape
// (`expect`), never the declared shape alone (that gave a wrong shape, silently, for another
// value).
// CHECK:      torchpy.func sequential @forward(%x: tensor<2x1xf32>, %r: tensor<6xf32>, %s: tensor<2xi64>)
// CHECK-NEXT:   %e = torchpy.call ops.expand(%x, %s) kwargs {expect = "(2, 3)"} {onnx_node_name = "expand (Expand)"}
// CHECK-NEXT:   %c = torchpy.call ops.constant_of_shape(%s) [0, "1.5"] kwargs {dtype = "torch.float32", expect = "(2, 3)"} {onnx_node_name = "fill (ConstantOfShape)"}
// CHECK-NEXT:   %z = torchpy.call ops.reshape(%r, %s) [0, 1, "0"] kwargs {expect = "(2, 3)"} {onnx_node_name = "reshape (Reshape)"}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<2x1xf32> {onnx.name = "x"}, %r: tensor<6xf32> {onnx.name = "r"}, %s: tensor<2xi64> {onnx.name = "s"}) -> (tensor<2x3xf32> {onnx.name = "e"}, tensor<2x3xf32> {onnx.name = "c"}, tensor<2x3xf32> {onnx.name = "z"}) {
  %e = "onnx.Expand"(%x, %s) {onnx_node_name = "expand"} : (tensor<2x1xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  %c = "onnx.ConstantOfShape"(%s) <{value = dense<1.500000e+00> : tensor<1xf32>}> {onnx_node_name = "fill"} : (tensor<2xi64>) -> tensor<2x3xf32>
  %z = "onnx.Reshape"(%r, %s) {onnx_node_name = "reshape"} : (tensor<6xf32>, tensor<2xi64>) -> tensor<2x3xf32>
  func.return %e, %c, %z : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
}
