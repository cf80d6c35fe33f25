// Round trip of torchpy's compound statements (torchpy.if/for/while, torchpy.yield): parse,
// verify, print; the printed text parses back to itself and prints as indented Python. A loop's
// carried value is one variable: the result's name, also inside the body (`acc` prints as `y`);
// an unbounded while loop whose body does not read its index has no iteration counter.
// The input is in the generic form, which parses as well as the custom one it prints in.
// RUN: ramiel-opt %s | filecheck %s
// RUN: ramiel-opt %s | ramiel-opt | filecheck %s
// RUN: ramiel-translate --to-python %s | filecheck %s --check-prefix=PY

// CHECK:      torchpy.func sequential @forward(%c: tensor<i1>, %x: tensor<4xf32>, %n: tensor<i64>) {
// CHECK-NEXT:   %r = torchpy.if %c : tensor<i1> -> tensor<4xf32> attributes {onnx_node_name = "choose (If)"} {
// CHECK-NEXT:     %a = torchpy.call torch.relu(%x) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:     torchpy.yield %a : tensor<4xf32>
// CHECK-NEXT:   } else {
// CHECK-NEXT:     torchpy.yield %x : tensor<4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   %y = torchpy.for %n, %r : (tensor<i64>, tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:   ^bb0(%i: !torchpy.object, %acc: tensor<4xf32>):
// CHECK-NEXT:     %b = torchpy.call operator.mul(%acc) [0, "2.0"] : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:     torchpy.yield %b : tensor<4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   %z = torchpy.while %c, %r : (tensor<i1>, tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT:   ^bb0(%j: !torchpy.object, %v: tensor<4xf32>):
// CHECK-NEXT:     %d = torchpy.call torch.neg(%v) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:     torchpy.yield %c, %d : tensor<i1>, tensor<4xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   torchpy.return %y, %z : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: }
// PY:      def forward(self, c, x, n):
// PY-NEXT:     """The graph outputs: {{.*}}"""
// PY-NEXT:     if bool(c):  # choose (If)
// PY-NEXT:         a = torch.relu(x)
// PY-NEXT:         r = a
// PY-NEXT:     else:
// PY-NEXT:         r = x
// PY-NEXT:     y = r
// PY-NEXT:     for i in range(int(n)):
// PY-NEXT:         b = y * 2.0
// PY-NEXT:         y = b
// PY-NEXT:     z = r
// PY-NEXT:     keep_going = bool(c)
// PY-NEXT:     while keep_going:
// PY-NEXT:         d = torch.neg(z)
// PY-NEXT:         keep_going, z = bool(c), d
// PY-NEXT:     return (y, z)
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%c: tensor<i1>, %x: tensor<4xf32>, %n: tensor<i64>):
    %r = "torchpy.if"(%c) ({
      %a = "torchpy.call"(%x) <{callee = "torch.relu", args = [0 : index]}> : (tensor<4xf32>) -> tensor<4xf32>
      "torchpy.yield"(%a) : (tensor<4xf32>) -> ()
    }, {
      "torchpy.yield"(%x) : (tensor<4xf32>) -> ()
    }) {onnx_node_name = "choose (If)"} : (tensor<i1>) -> tensor<4xf32>
    %y = "torchpy.for"(%n, %r) ({
    ^bb0(%i: !torchpy.object, %acc: tensor<4xf32>):
      %b = "torchpy.call"(%acc) <{callee = "operator.mul", args = [0 : index, "2.0"]}> : (tensor<4xf32>) -> tensor<4xf32>
      "torchpy.yield"(%b) : (tensor<4xf32>) -> ()
    }) : (tensor<i64>, tensor<4xf32>) -> tensor<4xf32>
    %z = "torchpy.while"(%c, %r) ({
    ^bb0(%j: !torchpy.object, %v: tensor<4xf32>):
      %d = "torchpy.call"(%v) <{callee = "torch.neg", args = [0 : index]}> : (tensor<4xf32>) -> tensor<4xf32>
      "torchpy.yield"(%c, %d) : (tensor<i1>, tensor<4xf32>) -> ()
    }) : (tensor<i1>, tensor<4xf32>) -> tensor<4xf32>
    "torchpy.return"(%y, %z) : (tensor<4xf32>, tensor<4xf32>) -> ()
  }) : () -> ()
}
