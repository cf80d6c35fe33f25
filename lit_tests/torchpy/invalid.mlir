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
