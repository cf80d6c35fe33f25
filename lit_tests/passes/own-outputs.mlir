// RUN: ramiel-opt %s --split-input-file --own-outputs | filecheck %s

// Outputs computed by the function are returned as computed: no copy.
// CHECK-LABEL: torchpy.func sequential @forward(%x: tensor<2x3xf32>)
// CHECK-NEXT:    %r = torchpy.call torch.relu(%x)
// CHECK-NEXT:    %v = torchpy.method reshape(%r) ["3", "2"]
// CHECK-NEXT:    torchpy.return %v : tensor<3x2xf32>
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2x3xf32>):
    %r = "torchpy.call"(%x) <{callee = "torch.relu", args = [0 : index]}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %v = "torchpy.method"(%r) <{method = "reshape", args = ["3", "2"]}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
    "torchpy.return"(%v) : (tensor<3x2xf32>) -> ()
  }) : () -> ()
}

// -----

// A weight, an input and a view of the input (reshape may return one) are returned as copies.
// CHECK-LABEL: torchpy.func sequential @forward(%x: tensor<2x3xf32>)
// CHECK-NEXT:    %w = torchpy.weight "w"
// CHECK-NEXT:    %v = torchpy.method reshape(%x) ["3", "2"]
// CHECK-NEXT:    %w_copy = torchpy.method clone(%w) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %x_copy = torchpy.method clone(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %v_copy = torchpy.method clone(%v) : (tensor<3x2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    torchpy.return %w_copy, %x_copy, %v_copy
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2x3xf32>):
    %w = "torchpy.weight"() <{key = "w", value = dense<1.5> : tensor<2x3xf32>}> : () -> tensor<2x3xf32>
    %v = "torchpy.method"(%x) <{method = "reshape", args = ["3", "2"]}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
    "torchpy.return"(%w, %x, %v) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3x2xf32>) -> ()
  }) : () -> ()
}

// -----

// One value returned twice, and a view of an earlier output: the later ones are copies. An op
// this pass does not know (ops.reshape) may return its operand; a call known to allocate
// (operator.add) is a new tensor whatever its operands.
// CHECK-LABEL: torchpy.func sequential @forward(%x: tensor<2x3xf32>)
// CHECK:         %s_copy = torchpy.method clone(%s)
// CHECK-NEXT:    %v_copy = torchpy.method clone(%v)
// CHECK-NEXT:    %h_copy = torchpy.method clone(%h)
// CHECK-NEXT:    torchpy.return %s, %s_copy, %v_copy, %h_copy, %a
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2x3xf32>):
    %s = "torchpy.call"(%x) <{callee = "torch.sigmoid", args = [0 : index]}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %v = "torchpy.call"(%s) <{callee = "operator.getitem", args = [0 : index, "0"]}> : (tensor<2x3xf32>) -> tensor<3xf32>
    %h = "torchpy.call"(%x) <{callee = "ops.reshape", args = [0 : index, 0 : index]}> : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %a = "torchpy.call"(%x, %x) <{callee = "operator.add", args = [0 : index, 1 : index]}> : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    "torchpy.return"(%s, %s, %v, %h, %a) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> ()
  }) : () -> ()
}

// -----

// Cluster functions are left alone (the runner checks their outputs' memory).
// CHECK-LABEL: torchpy.func cluster @cluster_c0()
// CHECK-NEXT:    %x = torchpy.get from "x__c0"
// CHECK-NEXT:    torchpy.put %x to "y__out"
builtin.module {
  "torchpy.func"() <{sym_name = "cluster_c0", kind = "cluster"}> ({
    %x = "torchpy.get"() <{channel = "x__c0"}> : () -> tensor<2x3xf32>
    "torchpy.put"(%x) <{channel = "y__out"}> : (tensor<2x3xf32>) -> ()
    "torchpy.return"() : () -> ()
  }) : () -> ()
  "torchpy.program"() <{sym_name = "main", inputs = [["x__c0"]], outputs = ["y__out"], input_order = ["x"], output_order = ["y"]}> : () -> ()
}

// -----

// `.to` another element type allocates; `.to` the operand's own type returns the operand.
// CHECK-LABEL: torchpy.func sequential @forward(%x: tensor<2xf32>)
// CHECK:         %same_copy = torchpy.method clone(%same)
// CHECK-NEXT:    torchpy.return %half, %same_copy
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %half = "torchpy.method"(%x) <{method = "to", args = ["torch.float16"]}> : (tensor<2xf32>) -> tensor<2xf16>
    %same = "torchpy.method"(%x) <{method = "to", args = ["torch.float32"]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%half, %same) : (tensor<2xf16>, tensor<2xf32>) -> ()
  }) : () -> ()
}
