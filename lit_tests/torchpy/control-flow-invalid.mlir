// The verifier of torchpy's compound statements: what it accepts prints to valid Python.
// RUN: ramiel-opt --verify-diagnostics --split-input-file %s

// A branch must yield one value per result.
// expected-error @+4 {{torchpy.if: the else block yields 0 value(s), expected 1}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%c: tensor<i1>, %x: tensor<4xf32>):
    %r = "torchpy.if"(%c) ({
      "torchpy.yield"(%x) : (tensor<4xf32>) -> ()
    }, {
      "torchpy.yield"() : () -> ()
    }) : (tensor<i1>) -> tensor<4xf32>
    "torchpy.return"(%r) : (tensor<4xf32>) -> ()
  }) : () -> ()
}

// -----

// A for loop's body takes the index and one argument per carried value.
// expected-error @+4 {{torchpy.for: the body takes 1 argument(s), expected 1 + 1}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<4xf32>):
    %y = "torchpy.for"(%x) <{count = 2 : i64}> ({
    ^bb0(%i: !torchpy.object):
      "torchpy.yield"(%x) : (tensor<4xf32>) -> ()
    }) : (tensor<4xf32>) -> tensor<4xf32>
    "torchpy.return"(%y) : (tensor<4xf32>) -> ()
  }) : () -> ()
}

// -----

// A while loop's body yields its next condition, then the carried values.
// expected-error @+4 {{torchpy.while: the body yields 1 value(s), expected 2}}
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%c: tensor<i1>, %x: tensor<4xf32>):
    %y = "torchpy.while"(%c, %x) ({
    ^bb0(%i: !torchpy.object, %v: tensor<4xf32>):
      "torchpy.yield"(%v) : (tensor<4xf32>) -> ()
    }) : (tensor<i1>, tensor<4xf32>) -> tensor<4xf32>
    "torchpy.return"(%y) : (tensor<4xf32>) -> ()
  }) : () -> ()
}

// -----

// torchpy.yield only ends the blocks of if/for/while.
// expected-error @+3 {{'torchpy.yield' expects parent op to be one of 'torchpy.if', 'torchpy.for', 'torchpy.while'}}
builtin.module {
  %x = "torchpy.call"() <{callee = "list", args = []}> : () -> !torchpy.object
  "torchpy.yield"(%x) : (!torchpy.object) -> ()
}
