// The torchpy verifier: every op must print as valid Python, so names are identifiers (not
// keywords), argument indices and $N placeholders name operands, and literal arguments are
// Python expressions (no statement can be smuggled in through IR text).
// RUN: ramiel-opt --verify-diagnostics --split-input-file %s | filecheck %s

// CHECK: invalid.mlir:[[# @LINE + 2]]:3: error: torchpy.func @f: unknown kind "parallel"
builtin.module {
  "torchpy.func"() <{sym_name = "f", kind = "parallel"}> ({
    "torchpy.return"() : () -> ()
  }) : () -> ()
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 2]]:3: error: torchpy.func @cluster_c0: a cluster function takes no arguments (its inputs arrive through torchpy.get)
builtin.module {
  "torchpy.func"() <{sym_name = "cluster_c0", kind = "cluster"}> ({
  ^bb0(%x: tensor<2xf32>):
    "torchpy.return"() : () -> ()
  }) : () -> ()
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 2]]:3: error: torchpy.func name 'my func' is not a Python identifier
builtin.module {
  "torchpy.func"() <{sym_name = "my func", kind = "sequential"}> ({
    "torchpy.return"() : () -> ()
  }) : () -> ()
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 2]]:3: error: torchpy.func name 'lambda' is not a Python identifier
builtin.module {
  "torchpy.func"() <{sym_name = "lambda", kind = "sequential"}> ({
    "torchpy.return"() : () -> ()
  }) : () -> ()
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 4]]:5: error: torchpy.weight key 'a.b' is not an identifier
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %w = "torchpy.weight"() <{key = "a.b", value = dense<1.0> : tensor<2xf32>}> : () -> tensor<2xf32>
    "torchpy.return"(%w) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// A keyword would print as `w.class`, a syntax error.
// CHECK: invalid.mlir:[[# @LINE + 4]]:5: error: torchpy.weight key 'class' is not an identifier
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %w = "torchpy.weight"() <{key = "class", value = dense<1.0> : tensor<2xf32>}> : () -> tensor<2xf32>
    "torchpy.return"(%w) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 4]]:5: error: torchpy.call: argument index 1 out of range
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "torch.relu", args = [1 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 4]]:5: error: torchpy.call: placeholder $3 out of range in '$3 + 1'
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "torch.relu", args = ["$3 + 1"]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// A literal that would end the call and start a new statement.
// CHECK: invalid.mlir:[[# @LINE + 4]]:5: error: torchpy.call: literal argument '1)\nimport os\nprint(2' is not a Python expression
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "torch.relu", args = [0 : index, "1)\nimport os\nprint(2"]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 4]]:5: error: torchpy.call: arguments must be operand indices or literals
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "torch.relu", args = [1.5 : f32]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 4]]:5: error: torchpy.call: keyword 'not' is not an identifier
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "torch.relu", args = [0 : index], kwargs = {not = "1"}}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 4]]:5: error: torchpy.call: callee 'os.system; torch.relu' is not a dotted name
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "os.system; torch.relu", args = [0 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 4]]:5: error: torchpy.method: 're shape' is not an identifier
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.method"(%x) <{method = "re shape", args = ["2"]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 3]]:5: error: torchpy.method needs its object as operand 0
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
    %y = "torchpy.method"() <{method = "reshape", args = ["2"]}> : () -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 2]]:3: error: torchpy.func @forward must end with return
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "torch.relu", args = [0 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
  }) : () -> ()
}

// -----

// torchpy.return only ends a torchpy.func.
// CHECK: invalid.mlir:[[# @LINE + 2]]:3: error: 'torchpy.return' expects parent op 'torchpy.func'
builtin.module {
  "torchpy.return"() : () -> ()
}

// -----

// torchpy.set_threads sets at least one intra-op thread.
// CHECK: invalid.mlir:[[# @LINE + 3]]:5: error: torchpy.set_threads: count must be at least 1, got 0
builtin.module {
  "torchpy.func"() <{sym_name = "cluster_c0", kind = "cluster"}> ({
    "torchpy.set_threads"() <{count = 0 : index}> : () -> ()
    "torchpy.return"() : () -> ()
  }) : () -> ()
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 3]]:5: error: torchpy.set_threads: count must be at least 1, got -2
builtin.module {
  "torchpy.func"() <{sym_name = "cluster_c0", kind = "cluster"}> ({
    "torchpy.set_threads"() <{count = -2 : index}> : () -> ()
    "torchpy.return"() : () -> ()
  }) : () -> ()
}

// -----

// A segment is one graph for torch.compile: no channel operation inside.
// CHECK: invalid.mlir:[[# @LINE + 2]]:3: error: torchpy.func @c0_seg0: a segment holds only calls, methods and weights (one graph for torch.compile), not torchpy.get
builtin.module {
  "torchpy.func"() <{sym_name = "c0_seg0", kind = "segment"}> ({
    %x = "torchpy.get"() <{channel = "x__c0"}> : () -> tensor<2xf32>
    "torchpy.return"(%x) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// torchpy.call_segment names a segment function of the module...
// CHECK: invalid.mlir:[[# @LINE + 4]]:5: error: torchpy.call_segment: no segment function @c0_seg9
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call_segment"(%x) <{callee = @c0_seg9}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// ... with the arguments and results it has.
// CHECK: invalid.mlir:[[# @LINE + 8]]:5: error: torchpy.call_segment: operands or results do not match @forward_seg0's arguments and returned values
builtin.module {
  "torchpy.func"() <{sym_name = "forward_seg0", kind = "segment"}> ({
  ^bb0(%x: tensor<2xf32>):
    "torchpy.return"(%x) : (tensor<2xf32>) -> ()
  }) : () -> ()
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<3xf32>):
    %y = "torchpy.call_segment"(%x) <{callee = @forward_seg0}> : (tensor<3xf32>) -> tensor<3xf32>
    "torchpy.return"(%y) : (tensor<3xf32>) -> ()
  }) : () -> ()
}

// -----

// Segments do not call segments (each is one graph of its own).
// CHECK: invalid.mlir:[[# @LINE + 6]]:3: error: torchpy.func @s1: a segment holds only calls, methods and weights (one graph for torch.compile), not torchpy.call_segment
builtin.module {
  "torchpy.func"() <{sym_name = "s0", kind = "segment"}> ({
  ^bb0(%x: tensor<2xf32>):
    "torchpy.return"(%x) : (tensor<2xf32>) -> ()
  }) : () -> ()
  "torchpy.func"() <{sym_name = "s1", kind = "segment"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call_segment"(%x) <{callee = @s0}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}
