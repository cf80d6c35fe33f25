// The torchpy verifier: every op must print as valid Python, so names are identifiers (not
// keywords), argument indices and $N placeholders name operands, and literal arguments are
// Python expressions (no statement can be smuggled in through IR text).
// RUN: ramiel-opt --verify-diagnostics --split-input-file %s

// expected-error @+2 {{torchpy.func @f: unknown kind "parallel"}}
builtin.module {
  "torchpy.func"() <{sym_name = "f", kind = "parallel"}> ({
    "torchpy.return"() : () -> ()
  }) : () -> ()
}

// -----

// expected-error @+2 {{torchpy.func @cluster_c0: a cluster function takes no arguments (its inputs arrive through torchpy.get)}}
builtin.module {
  "torchpy.func"() <{sym_name = "cluster_c0", kind = "cluster"}> ({
  ^bb0(%x: tensor<2xf32>):
    "torchpy.return"() : () -> ()
  }) : () -> ()
}

// -----

// expected-error @+2 {{torchpy.func name 'my func' is not a Python identifier}}
builtin.module {
  "torchpy.func"() <{sym_name = "my func", kind = "sequential"}> ({
    "torchpy.return"() : () -> ()
  }) : () -> ()
}

// -----

// expected-error @+2 {{torchpy.func name 'lambda' is not a Python identifier}}
builtin.module {
  "torchpy.func"() <{sym_name = "lambda", kind = "sequential"}> ({
    "torchpy.return"() : () -> ()
  }) : () -> ()
}

// -----

// expected-error @+4 {{torchpy.weight key 'a.b' is not an identifier}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %w = "torchpy.weight"() <{key = "a.b", value = dense<1.0> : tensor<2xf32>}> : () -> tensor<2xf32>
    "torchpy.return"(%w) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// A keyword would print as `w.class`, a syntax error.
// expected-error @+4 {{torchpy.weight key 'class' is not an identifier}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %w = "torchpy.weight"() <{key = "class", value = dense<1.0> : tensor<2xf32>}> : () -> tensor<2xf32>
    "torchpy.return"(%w) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// expected-error @+4 {{torchpy.call: argument index 1 out of range}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "torch.relu", args = [1 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// expected-error @+4 {{torchpy.call: placeholder $3 out of range in '$3 + 1'}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "torch.relu", args = ["$3 + 1"]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// A literal that would end the call and start a new statement.
// expected-error @+4 {{torchpy.call: literal argument '1)\nimport os\nprint(2' is not a Python expression}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "torch.relu", args = [0 : index, "1)\nimport os\nprint(2"]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// expected-error @+4 {{torchpy.call: arguments must be operand indices or literals}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "torch.relu", args = [1.5 : f32]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// expected-error @+4 {{torchpy.call: keyword 'not' is not an identifier}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "torch.relu", args = [0 : index], kwargs = {not = "1"}}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// expected-error @+4 {{torchpy.call: callee 'os.system; torch.relu' is not a dotted name}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "os.system; torch.relu", args = [0 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// expected-error @+4 {{torchpy.method: 're shape' is not an identifier}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.method"(%x) <{method = "re shape", args = ["2"]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// expected-error @+3 {{torchpy.method needs its object as operand 0}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
    %y = "torchpy.method"() <{method = "reshape", args = ["2"]}> : () -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// expected-error @+2 {{torchpy.func @forward must end with return}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "torch.relu", args = [0 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
  }) : () -> ()
}

// -----

// torchpy.return only ends a torchpy.func.
// expected-error @+2 {{'torchpy.return' expects parent op 'torchpy.func'}}
builtin.module {
  "torchpy.return"() : () -> ()
}

// -----

// torchpy.set_threads sets at least one intra-op thread.
// expected-error @+3 {{torchpy.set_threads: count must be at least 1, got 0}}
builtin.module {
  "torchpy.func"() <{sym_name = "cluster_c0", kind = "cluster"}> ({
    "torchpy.set_threads"() <{count = 0 : index}> : () -> ()
    "torchpy.return"() : () -> ()
  }) : () -> ()
}

// -----

// expected-error @+3 {{torchpy.set_threads: count must be at least 1, got -2}}
builtin.module {
  "torchpy.func"() <{sym_name = "cluster_c0", kind = "cluster"}> ({
    "torchpy.set_threads"() <{count = -2 : index}> : () -> ()
    "torchpy.return"() : () -> ()
  }) : () -> ()
}

// -----

// A segment is one graph for torch.compile: no channel operation inside.
// expected-error @+2 {{torchpy.func @c0_seg0: a segment holds only calls, methods and weights (one graph for torch.compile), not torchpy.get}}
builtin.module {
  "torchpy.func"() <{sym_name = "c0_seg0", kind = "segment"}> ({
    %x = "torchpy.get"() <{channel = "x__c0"}> : () -> tensor<2xf32>
    "torchpy.return"(%x) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// torchpy.call_segment names a segment function of the module...
// expected-error @+4 {{torchpy.call_segment: no segment function @c0_seg9}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call_segment"(%x) <{callee = @c0_seg9}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// ... with the arguments and results it has.
// expected-error @+8 {{torchpy.call_segment: operands or results do not match @forward_seg0's arguments and returned values}}
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
// expected-error @+6 {{torchpy.func @s1: a segment holds only calls, methods and weights (one graph for torch.compile), not torchpy.call_segment}}
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

// -----

// A literal must be exactly one expression where the printer puts it: `0][0` would print as
// `f(x, 0][0)`.
// expected-error @+4 {{torchpy.call: literal argument '0][0' is not a Python expression}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "torch.relu", args = [0 : index, "0][0"]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// `1), (2` parses inside brackets but prints `y = torch.relu(x, 1), (2)`: a tuple, not a call.
// expected-error @+4 {{torchpy.call: literal argument '1), (2' is not exactly one expression}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "torch.relu", args = [0 : index, "1), (2"]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// The index of a subscript (operator.getitem prints `x[...]`) is one subscript.
// expected-error @+4 {{torchpy.call: literal index '0][0' is not one subscript}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2x2xf32>):
    %y = "torchpy.call"(%x) <{callee = "operator.getitem", args = [0 : index, "0][0"]}> : (tensor<2x2xf32>) -> tensor<f32>
    "torchpy.return"(%y) : (tensor<f32>) -> ()
  }) : () -> ()
}

// -----

// Names in literals are the generated module's (torch, F, ops, operator, math, builtins).
// expected-error @+4 {{torchpy.call: literal argument 'os.getpid()' uses 'os', which the generated module does not define}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "torch.add", args = [0 : index, "os.getpid()"]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// `yield` would turn the function into a generator.
// expected-error @+4 {{torchpy.call: literal argument '(yield)' may not use Yield}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "torch.add", args = [0 : index, "(yield)"]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// Callees, torch attributes in literals and tensor methods must exist.
// expected-error @+4 {{torchpy.call: 'torch.relux' does not exist (torch has no attribute 'relux')}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "torch.relux", args = [0 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// expected-error @+4 {{torchpy.method: literal argument 'torch.float33': 'torch.float33' does not exist (torch has no attribute 'float33')}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.method"(%x) <{method = "to", args = ["torch.float33"]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// expected-error @+4 {{torchpy.method: torch.Tensor has no method 'reshapes'}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.method"(%x) <{method = "reshapes", args = ["2"]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%y) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// A function named like a dunder would become the module's __getattr__ hook.
// expected-error @+2 {{torchpy.func @__getattr__: a dunder name is not a function name}}
builtin.module {
  "torchpy.func"() <{sym_name = "__getattr__", kind = "sequential"}> ({
    "torchpy.return"() : () -> ()
  }) : () -> ()
}

// -----

// A function named len would shadow the builtin the generated code calls.
// expected-error @+2 {{torchpy.func @len: the name clashes with a name the generated module uses}}
builtin.module {
  "torchpy.func"() <{sym_name = "len", kind = "sequential"}> ({
    "torchpy.return"() : () -> ()
  }) : () -> ()
}

// -----

// Use before definition (two ops swapped in the text) prints Python that reads an unassigned name.
// expected-error @+4 {{torchpy.call uses %a before the op that defines it}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %b = "torchpy.call"(%a) <{callee = "torch.relu", args = [0 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
    %a = "torchpy.call"(%x) <{callee = "torch.relu", args = [0 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%b) : (tensor<2xf32>) -> ()
  }) : () -> ()
}

// -----

// Tensor types are static, non-negative, of a torch dtype, and fit in memory.
// expected-error @+4 {{torchpy.call in @forward: the tensor type tensor<1000000x1000000000xf32> takes 4000000000000000 bytes, more than any machine can hold (140737488355328)}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "torch.zeros", args = ["1000000", "1000000000"]}> : (tensor<2xf32>) -> tensor<1000000x1000000000xf32>
    "torchpy.return"(%y) : (tensor<1000000x1000000000xf32>) -> ()
  }) : () -> ()
}

// -----

// expected-error @+4 {{torchpy.method in @forward: the element type i3 of tensor<2xi3> has no torch dtype}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.method"(%x) <{method = "int", args = []}> : (tensor<2xf32>) -> tensor<2xi3>
    "torchpy.return"(%y) : (tensor<2xi3>) -> ()
  }) : () -> ()
}

// -----

// expected-error @+3 {{channel 'x__c0': the tensor type tensor<?x2xf32> has a dynamic or negative dimension (?x2): shapes are static}}
builtin.module {
  "torchpy.func"() <{sym_name = "cluster_c0", kind = "cluster"}> ({
    %x = "torchpy.get"() <{channel = "x__c0"}> : () -> tensor<?x2xf32>
    "torchpy.return"() : () -> ()
  }) : () -> ()
  "torchpy.program"() <{sym_name = "main", inputs = [["x__c0"]], outputs = [], input_order = ["x"], output_order = []}> : () -> ()
}

// -----

// Channels: the two ends agree on the type (the ChannelSpec has one).
// expected-error @+8 {{channel 'a__c0_c1': got as tensor<2xi64> in @cluster_c1 but put as tensor<2xf32> in @cluster_c0}}
builtin.module {
  "torchpy.func"() <{sym_name = "cluster_c0", kind = "cluster"}> ({
    %x = "torchpy.get"() <{channel = "x__c0"}> : () -> tensor<2xf32>
    "torchpy.put"(%x) <{channel = "a__c0_c1"}> : (tensor<2xf32>) -> ()
    "torchpy.return"() : () -> ()
  }) : () -> ()
  "torchpy.func"() <{sym_name = "cluster_c1", kind = "cluster"}> ({
    %a = "torchpy.get"() <{channel = "a__c0_c1"}> : () -> tensor<2xi64>
    "torchpy.return"() : () -> ()
  }) : () -> ()
  "torchpy.program"() <{sym_name = "main", inputs = [["x__c0"]], outputs = [], input_order = ["x"], output_order = []}> : () -> ()
}

// -----

// A channel no cluster puts must be a graph input the program lists.
// expected-error @+3 {{channel 'a__c0' is got but no cluster puts it, nor is it an input}}
builtin.module {
  "torchpy.func"() <{sym_name = "cluster_c0", kind = "cluster"}> ({
    %a = "torchpy.get"() <{channel = "a__c0"}> : () -> tensor<2xf32>
    "torchpy.return"() : () -> ()
  }) : () -> ()
  "torchpy.program"() <{sym_name = "main", inputs = [], outputs = [], input_order = [], output_order = []}> : () -> ()
}

// -----

// The program lists only channels that exist, with the right end.
// expected-error @+5 {{torchpy.program: output channel 'y__out' is not one a cluster only puts}}
builtin.module {
  "torchpy.func"() <{sym_name = "cluster_c0", kind = "cluster"}> ({
    "torchpy.return"() : () -> ()
  }) : () -> ()
  "torchpy.program"() <{sym_name = "main", inputs = [], outputs = ["y__out"], input_order = [], output_order = ["y"]}> : () -> ()
}

// -----

// Two functions that name one cluster would share one key of PROGRAM.clusters.
// expected-error @+5 {{torchpy.func @c0 and @cluster_c0 are both cluster 'c0'}}
builtin.module {
  "torchpy.func"() <{sym_name = "cluster_c0", kind = "cluster"}> ({
    "torchpy.return"() : () -> ()
  }) : () -> ()
  "torchpy.func"() <{sym_name = "c0", kind = "cluster"}> ({
    "torchpy.return"() : () -> ()
  }) : () -> ()
  "torchpy.program"() <{sym_name = "main", inputs = [], outputs = [], input_order = [], output_order = []}> : () -> ()
}

// -----

// Cluster functions need the program table.
// expected-error @+2 {{a module with cluster functions needs a torchpy.program (its graph inputs and outputs)}}
builtin.module {
  "torchpy.func"() <{sym_name = "cluster_c0", kind = "cluster"}> ({
    "torchpy.return"() : () -> ()
  }) : () -> ()
}

// -----

// Graph outputs are keyed by name: two of one name (the module's OUTPUTS lost one).
// expected-error @+8 {{torchpy.program: graph output name 'y' is listed twice (the module's outputs are keyed by name)}}
builtin.module {
  "torchpy.func"() <{sym_name = "cluster_c0", kind = "cluster"}> ({
    %x = "torchpy.get"() <{channel = "x__c0"}> : () -> tensor<2xf32>
    "torchpy.put"(%x) <{channel = "y__out"}> : (tensor<2xf32>) -> ()
    "torchpy.put"(%x) <{channel = "z__out"}> : (tensor<2xf32>) -> ()
    "torchpy.return"() : () -> ()
  }) : () -> ()
  "torchpy.program"() <{sym_name = "main", inputs = [["x__c0"]], outputs = ["y__out", "z__out"], input_order = ["x"], output_order = ["y", "y"]}> : () -> ()
}
