// Round trip of the torchpy dialect: parse, verify, print; the printed text parses back to itself.
// RUN: ramiel-opt %s --split-input-file | filecheck %s
// RUN: ramiel-opt %s --split-input-file | ramiel-opt --split-input-file | filecheck %s

// The parallel form: one cluster function per cluster (no arguments; inputs arrive by get), weights,
// calls with operand indices and literal arguments, method calls, keyword arguments, puts, the
// program table.
// CHECK-LABEL: "torchpy.func"() <{sym_name = "cluster_c0", kind = "cluster"}> ({
// CHECK-NEXT:    %w = "torchpy.weight"() <{key = "conv_w", value = dense<5.000000e-01> : tensor<3x2x3x3xf32>}> : () -> tensor<3x2x3x3xf32>
// CHECK-NEXT:    %x = "torchpy.get"() <{channel = "x__c0"}> : () -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %c = "torchpy.call"(%x, %w) <{callee = "F.conv2d", args = [0 : index, 1 : index], kwargs = {stride = "(2, 2)", padding = "(1, 1)"}}> {onnx_node_name = "conv1 (Conv)"} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xf32>
// CHECK-NEXT:    "torchpy.put"(%c) <{channel = "c__c0_c1"}> : (tensor<1x3x2x2xf32>) -> ()
// CHECK-NEXT:    %r = "torchpy.method"(%c) <{method = "reshape", args = ["1", "12"]}> : (tensor<1x3x2x2xf32>) -> tensor<1x12xf32>
// CHECK-NEXT:    "torchpy.put"(%r) <{channel = "y__out"}> : (tensor<1x12xf32>) -> ()
// CHECK-NEXT:    "torchpy.return"() : () -> ()
// CHECK-NEXT:  }) {ramiel.cost_us = 2.000000e+01 : f64, ramiel.num_ops = 2 : i64} : () -> ()
// CHECK-NEXT:  "torchpy.func"() <{sym_name = "cluster_c1", kind = "cluster"}> ({
// CHECK-NEXT:    %c = "torchpy.get"() <{channel = "c__c0_c1"}> : () -> tensor<1x3x2x2xf32>
// CHECK-NEXT:    %t = "torchpy.call"(%c) <{callee = "torch.split", args = [0 : index, "[1, 2]"], kwargs = {dim = "1"}}> : (tensor<1x3x2x2xf32>) -> !torchpy.object
// CHECK-NEXT:    %a = "torchpy.call"(%t) <{callee = "operator.getitem", args = [0 : index, "0"]}> : (!torchpy.object) -> tensor<1x1x2x2xf32>
// CHECK-NEXT:    %s = "torchpy.call"(%c) <{callee = "operator.getitem", args = [0 : index, "..., ::-1"]}> : (tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
// CHECK-NEXT:    %m = "torchpy.call"(%a, %s) <{callee = "torch.maximum", args = ["$0 * 2.0", 1 : index]}> : (tensor<1x1x2x2xf32>, tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
// CHECK-NEXT:    "torchpy.put"(%m) <{channel = "z__out"}> : (tensor<1x3x2x2xf32>) -> ()
// CHECK-NEXT:    "torchpy.return"() : () -> ()
// CHECK-NEXT:  }) : () -> ()
// CHECK-NEXT:  "torchpy.program"() <{sym_name = "main", inputs = [["x__c0"]], outputs = ["y__out", "z__out"], input_order = ["x"], output_order = ["y", "z"]}> : () -> ()
builtin.module {
  "torchpy.func"() <{sym_name = "cluster_c0", kind = "cluster"}> ({
    %w = "torchpy.weight"() <{key = "conv_w", value = dense<0.5> : tensor<3x2x3x3xf32>}> : () -> tensor<3x2x3x3xf32>
    %x = "torchpy.get"() <{channel = "x__c0"}> : () -> tensor<1x2x4x4xf32>
    %c = "torchpy.call"(%x, %w) <{callee = "F.conv2d", args = [0 : index, 1 : index], kwargs = {stride = "(2, 2)", padding = "(1, 1)"}}> {onnx_node_name = "conv1 (Conv)"} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xf32>
    "torchpy.put"(%c) <{channel = "c__c0_c1"}> : (tensor<1x3x2x2xf32>) -> ()
    %r = "torchpy.method"(%c) <{method = "reshape", args = ["1", "12"]}> : (tensor<1x3x2x2xf32>) -> tensor<1x12xf32>
    "torchpy.put"(%r) <{channel = "y__out"}> : (tensor<1x12xf32>) -> ()
    "torchpy.return"() : () -> ()
  }) {ramiel.cost_us = 20.0 : f64, ramiel.num_ops = 2 : i64} : () -> ()
  "torchpy.func"() <{sym_name = "cluster_c1", kind = "cluster"}> ({
    %c = "torchpy.get"() <{channel = "c__c0_c1"}> : () -> tensor<1x3x2x2xf32>
    %t = "torchpy.call"(%c) <{callee = "torch.split", args = [0 : index, "[1, 2]"], kwargs = {dim = "1"}}> : (tensor<1x3x2x2xf32>) -> !torchpy.object
    %a = "torchpy.call"(%t) <{callee = "operator.getitem", args = [0 : index, "0"]}> : (!torchpy.object) -> tensor<1x1x2x2xf32>
    %s = "torchpy.call"(%c) <{callee = "operator.getitem", args = [0 : index, "..., ::-1"]}> : (tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
    %m = "torchpy.call"(%a, %s) <{callee = "torch.maximum", args = ["$0 * 2.0", 1 : index]}> : (tensor<1x1x2x2xf32>, tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
    "torchpy.put"(%m) <{channel = "z__out"}> : (tensor<1x3x2x2xf32>) -> ()
    "torchpy.return"() : () -> ()
  }) : () -> ()
  "torchpy.program"() <{sym_name = "main", inputs = [["x__c0"]], outputs = ["y__out", "z__out"], input_order = ["x"], output_order = ["y", "z"]}> : () -> ()
}

// -----

// The sequential form: one function whose block arguments are the graph inputs; return with
// several values.
// CHECK-LABEL: "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
// CHECK-NEXT:  ^bb0(%x: tensor<2xf32>, %y: tensor<2xf32>):
// CHECK-NEXT:    %s = "torchpy.call"(%x, %y) <{callee = "operator.add", args = [0 : index, 1 : index]}> {onnx_node_name = "add"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %r = "torchpy.call"(%s) <{callee = "torch.relu", args = [0 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    "torchpy.return"(%s, %r) : (tensor<2xf32>, tensor<2xf32>) -> ()
// CHECK-NEXT:  }) : () -> ()
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>, %y: tensor<2xf32>):
    %s = "torchpy.call"(%x, %y) <{callee = "operator.add", args = [0 : index, 1 : index]}> {onnx_node_name = "add"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %r = "torchpy.call"(%s) <{callee = "torch.relu", args = [0 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%s, %r) : (tensor<2xf32>, tensor<2xf32>) -> ()
  }) : () -> ()
  "torchpy.program"() <{sym_name = "main", inputs = [[], []], outputs = ["", ""], input_order = ["x", "y"], output_order = ["s", "r"]}> : () -> ()
}
