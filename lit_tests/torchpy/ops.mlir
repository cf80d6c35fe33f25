// Round trip of the torchpy dialect: parse, verify, print; the printed text parses back to itself.
// The first case is written in the generic form (which still parses), the others in the ops'
// custom assembly format.
// RUN: ramiel-opt %s --split-input-file | filecheck %s
// RUN: ramiel-opt %s --split-input-file | ramiel-opt --split-input-file | filecheck %s

// The parallel form: one cluster function per cluster (no arguments; inputs arrive by get), weights,
// calls with operand indices and literal arguments, method calls, keyword arguments, puts, the
// program table.
// CHECK-LABEL: torchpy.func cluster @cluster_c0() attributes {ramiel.cost_us = 2.000000e+01 : f64, ramiel.num_ops = 2 : i64} {
// CHECK-NEXT:    %w = torchpy.weight "conv_w" = dense<5.000000e-01> : tensor<3x2x3x3xf32>
// CHECK-NEXT:    %x = torchpy.get from "x__c0" : tensor<1x2x4x4xf32>
// CHECK-NEXT:    %c = torchpy.call F.conv2d(%x, %w) kwargs {stride = "(2, 2)", padding = "(1, 1)"} {onnx_node_name = "conv1 (Conv)"} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xf32>
// CHECK-NEXT:    torchpy.put %c to "c__c0_c1" : tensor<1x3x2x2xf32>
// CHECK-NEXT:    %r = torchpy.method reshape(%c) ["1", "12"] : (tensor<1x3x2x2xf32>) -> tensor<1x12xf32>
// CHECK-NEXT:    torchpy.put %r to "y__out" : tensor<1x12xf32>
// CHECK-NEXT:    torchpy.return
// CHECK-NEXT:  }
// CHECK-NEXT:  torchpy.func cluster @cluster_c1() {
// CHECK-NEXT:    %c = torchpy.get from "c__c0_c1" : tensor<1x3x2x2xf32>
// CHECK-NEXT:    %t = torchpy.call torch.split(%c) [0, "[1, 2]"] kwargs {dim = "1"} : (tensor<1x3x2x2xf32>) -> !torchpy.object
// CHECK-NEXT:    %a = torchpy.call operator.getitem(%t) [0, "0"] : (!torchpy.object) -> tensor<1x1x2x2xf32>
// CHECK-NEXT:    %s = torchpy.call operator.getitem(%c) [0, "..., ::-1"] : (tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
// CHECK-NEXT:    %m = torchpy.call torch.maximum(%a, %s) ["$0 * 2.0", 1] : (tensor<1x1x2x2xf32>, tensor<1x3x2x2xf32>) -> tensor<1x3x2x2xf32>
// CHECK-NEXT:    torchpy.put %m to "z__out" : tensor<1x3x2x2xf32>
// CHECK-NEXT:    torchpy.return
// CHECK-NEXT:  }
// CHECK-NEXT:  torchpy.program @main inputs [["x__c0"]] outputs ["y__out", "z__out"] input_order ["x"] output_order ["y", "z"]
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
// CHECK-LABEL: torchpy.func sequential @forward(%x: tensor<2xf32>, %y: tensor<2xf32>) {
// CHECK-NEXT:    %s = torchpy.call operator.add(%x, %y) {onnx_node_name = "add"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %r = torchpy.call torch.relu(%s) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    torchpy.return %s, %r : tensor<2xf32>, tensor<2xf32>
// CHECK-NEXT:  }
builtin.module {
  torchpy.func sequential @forward(%x: tensor<2xf32>, %y: tensor<2xf32>) {
    %s = torchpy.call operator.add(%x, %y) {onnx_node_name = "add"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %r = torchpy.call torch.relu(%s) : (tensor<2xf32>) -> tensor<2xf32>
    torchpy.return %s, %r : tensor<2xf32>, tensor<2xf32>
  }
  torchpy.program @main inputs [[], []] outputs ["", ""] input_order ["x", "y"] output_order ["s", "r"]
}

// -----

// The custom form of every op not above: a segment function and its call, a thread count with
// its reason, channels-last weights and channels, a call without operands, an operand index as a
// keyword argument, a counted for loop and a bounded while loop.
// CHECK-LABEL: torchpy.func segment @c0_seg0(%x: tensor<1x2x4x4xf32>, %k: tensor<2x2x1x1xf32>) {
// CHECK-NEXT:    %y = torchpy.call F.conv2d(%x, %k) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %z = torchpy.method clamp(%y) kwargs {min = "0.0"} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    torchpy.return %z : tensor<1x2x4x4xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  torchpy.func cluster @cluster_c0() attributes {ramiel.cost_us = 5.000000e+00 : f64} {
// CHECK-NEXT:    torchpy.set_threads 2 reason "conv-heavy cluster"
// CHECK-NEXT:    %k = torchpy.weight "k" = dense<1.000000e+00> : tensor<2x2x1x1xf32> memory_format "channels_last"
// CHECK-NEXT:    %x = torchpy.get from "x__c0" memory_format "channels_last" : tensor<1x2x4x4xf32>
// CHECK-NEXT:    %z = torchpy.call_segment @c0_seg0(%x, %k) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %l = torchpy.call list() : () -> !torchpy.object
// CHECK-NEXT:    %t = torchpy.call torch.sum(%z) kwargs {dim = "1"} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4xf32>
// CHECK-NEXT:    %s = torchpy.call torch.add(%t, %t) [0] kwargs {other = 1, alpha = "2"} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
// CHECK-NEXT:    %c = torchpy.call operator.gt(%s) [0, "0.5"] : (tensor<1x4x4xf32>) -> tensor<1x4x4xi1>
// CHECK-NEXT:    %a = torchpy.call torch.any(%c) : (tensor<1x4x4xi1>) -> tensor<i1>
// CHECK-NEXT:    %f = torchpy.for count 3 %s : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32> {
// CHECK-NEXT:    ^bb0(%i: !torchpy.object, %acc: tensor<1x4x4xf32>):
// CHECK-NEXT:      %n = torchpy.call torch.neg(%acc) : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
// CHECK-NEXT:      torchpy.yield %n : tensor<1x4x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %w = torchpy.while bounded %a, %a, %f : (tensor<i1>, tensor<i1>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32> {
// CHECK-NEXT:    ^bb0(%j: !torchpy.object, %v: tensor<1x4x4xf32>):
// CHECK-NEXT:      torchpy.yield %a, %v : tensor<i1>, tensor<1x4x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    torchpy.put %z to "z__out" memory_format "channels_last" : tensor<1x2x4x4xf32>
// CHECK-NEXT:    torchpy.put %w to "w__out" : tensor<1x4x4xf32>
// CHECK-NEXT:    torchpy.return
// CHECK-NEXT:  }
// CHECK-NEXT:  torchpy.program @main inputs [["x__c0"]] outputs ["z__out", "w__out"] input_order ["x"] output_order ["z", "w"]
builtin.module {
  torchpy.func segment @c0_seg0(%x: tensor<1x2x4x4xf32>, %k: tensor<2x2x1x1xf32>) {
    %y = torchpy.call F.conv2d(%x, %k) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
    %z = torchpy.method clamp(%y) kwargs {min = "0.0"} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    torchpy.return %z : tensor<1x2x4x4xf32>
  }
  torchpy.func cluster @cluster_c0() attributes {ramiel.cost_us = 5.0 : f64} {
    torchpy.set_threads 2 reason "conv-heavy cluster"
    %k = torchpy.weight "k" = dense<1.0> : tensor<2x2x1x1xf32> memory_format "channels_last"
    %x = torchpy.get from "x__c0" memory_format "channels_last" : tensor<1x2x4x4xf32>
    %z = torchpy.call_segment @c0_seg0(%x, %k) : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
    %l = torchpy.call list() [] : () -> !torchpy.object
    %t = torchpy.call torch.sum(%z) kwargs {dim = "1"} : (tensor<1x2x4x4xf32>) -> tensor<1x4x4xf32>
    %s = torchpy.call torch.add(%t, %t) [0] kwargs {other = 1, alpha = "2"} : (tensor<1x4x4xf32>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
    %c = torchpy.call operator.gt(%s) [0, "0.5"] : (tensor<1x4x4xf32>) -> tensor<1x4x4xi1>
    %a = torchpy.call torch.any(%c) : (tensor<1x4x4xi1>) -> tensor<i1>
    %f = torchpy.for count 3 %s : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32> {
    ^bb0(%i: !torchpy.object, %acc: tensor<1x4x4xf32>):
      %n = torchpy.call torch.neg(%acc) : (tensor<1x4x4xf32>) -> tensor<1x4x4xf32>
      torchpy.yield %n : tensor<1x4x4xf32>
    }
    %w = torchpy.while bounded %a, %a, %f : (tensor<i1>, tensor<i1>, tensor<1x4x4xf32>) -> tensor<1x4x4xf32> {
    ^bb0(%j: !torchpy.object, %v: tensor<1x4x4xf32>):
      torchpy.yield %a, %v : tensor<i1>, tensor<1x4x4xf32>
    }
    torchpy.put %z to "z__out" memory_format "channels_last" : tensor<1x2x4x4xf32>
    torchpy.put %w to "w__out" : tensor<1x4x4xf32>
    torchpy.return
  }
  torchpy.program @main inputs [["x__c0"]] outputs ["z__out", "w__out"] input_order ["x"] output_order ["z", "w"]
}
