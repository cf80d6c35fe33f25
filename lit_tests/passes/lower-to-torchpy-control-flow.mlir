// --lower-to-torchpy turns onnx.If/Loop/Scan into torchpy.if/for/while whose blocks hold the
// lowered ops of the regions (reading outer values directly), and ramiel-translate --to-python
// prints them as indented Python blocks: `if bool(c):`, `for i in range(3):` with the carried
// values and the scan outputs stacked after the loop, and `while keep_going and i < M:` for a
// loop whose body computes its condition.
// RUN: ramiel-opt %s '--lower-to-torchpy{mode=sequential}' | filecheck %s
// RUN: ramiel-opt %s '--lower-to-torchpy{mode=sequential}' | ramiel-translate --to-python - | filecheck %s --check-prefix=PY
// RUN: ramiel-opt %s '--lower-to-torchpy{mode=sequential}' | ramiel-translate --to-python - -o %t.py && %python -c "import ast, sys; ast.parse(open(sys.argv[1]).read())" %t.py

// CHECK:      %r = torchpy.if %c : tensor<i1> -> tensor<4xf32> attributes {onnx_node_name = "choose (If)"} {
// CHECK-NEXT:   %a = torchpy.call torch.relu(%x) {onnx_node_name = "relu (Relu)"}
// CHECK-NEXT:   torchpy.yield %a : tensor<4xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT:   torchpy.yield %x : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %ys_steps = torchpy.call list()
// CHECK-NEXT: %y = torchpy.for count 3 %r attributes {onnx_node_name = "steps (Loop)"} : (tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: ^bb0(%i: !torchpy.object, %acc: tensor<4xf32>):
// CHECK-NEXT:   %n = torchpy.call operator.add(%acc, %x) {onnx_node_name = "add (Add)"}
// CHECK-NEXT:   torchpy.method append(%ys_steps, %n) : (!torchpy.object, tensor<4xf32>) -> ()
// CHECK-NEXT:   torchpy.yield %n : tensor<4xf32>
// CHECK-NEXT: }
// CHECK-NEXT: %ys = torchpy.call torch.stack(%ys_steps) : (!torchpy.object) -> tensor<3x4xf32>
// CHECK-NEXT: %z = torchpy.while bounded %c, %m, %y attributes {onnx_node_name = "until (Loop)"} : (tensor<i1>, tensor<i64>, tensor<4xf32>) -> tensor<4xf32> {
// CHECK:        torchpy.yield %go, %h : tensor<i1>, tensor<4xf32>
// CHECK-NEXT: }

// PY:      def forward(self, c, x, m):
// PY:          if bool(c):  # choose (If)
// PY-NEXT:         a = torch.relu(x)  # relu (Relu)
// PY-NEXT:         r = a
// PY-NEXT:     else:
// PY-NEXT:         r = x
// PY-NEXT:     ys_steps = []
// PY-NEXT:     y = r
// PY-NEXT:     for i in range(3):  # steps (Loop)
// PY-NEXT:         n = y + x  # add (Add)
// PY-NEXT:         ys_steps.append(n)
// PY-NEXT:         y = n
// PY-NEXT:     ys = torch.stack(ys_steps)
// PY-NEXT:     z = y
// PY-NEXT:     keep_going = bool(c)
// PY-NEXT:     i_1 = 0
// PY-NEXT:     while keep_going and i_1 < int(m):  # until (Loop)
// PY-NEXT:         h = torch.neg(z)  # neg (Neg)
// PY-NEXT:         s = torch.sum(h, dim=0, keepdim=False)  # ReduceSum
// PY-NEXT:         go = s > self.zero  # Greater
// PY-NEXT:         keep_going, z = bool(go), h
// PY-NEXT:         i_1 += 1
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main(%c: tensor<i1> {onnx.name = "c"}, %x: tensor<4xf32> {onnx.name = "x"}, %m: tensor<i64> {onnx.name = "m"}) -> (tensor<4xf32> {onnx.name = "r"}, tensor<4xf32> {onnx.name = "y"}, tensor<3x4xf32> {onnx.name = "ys"}, tensor<4xf32> {onnx.name = "z"}) {
    %three = "onnx.Constant"() <{value = dense<3> : tensor<i64>}> : () -> tensor<i64>
    %none = "onnx.NoValue"() : () -> none
    %r = "onnx.If"(%c) ({
      %a = "onnx.Relu"(%x) {onnx_node_name = "relu"} : (tensor<4xf32>) -> tensor<4xf32>
      "onnx.Yield"(%a) : (tensor<4xf32>) -> ()
    }, {
      "onnx.Yield"(%x) : (tensor<4xf32>) -> ()
    }) {onnx_node_name = "choose"} : (tensor<i1>) -> tensor<4xf32>
    %y, %ys = "onnx.Loop"(%three, %none, %r) ({
    ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %acc: tensor<4xf32>):
      %n = "onnx.Add"(%acc, %x) {onnx_node_name = "add"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      "onnx.Yield"(%cond, %n, %n) : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> ()
    }) {onnx_node_name = "steps"} : (tensor<i64>, none, tensor<4xf32>) -> (tensor<4xf32>, tensor<3x4xf32>)
    %z = "onnx.Loop"(%m, %c, %y) ({
    ^bb0(%j: tensor<i64>, %keep: tensor<i1>, %v: tensor<4xf32>):
      %h = "onnx.Neg"(%v) {onnx_node_name = "neg"} : (tensor<4xf32>) -> tensor<4xf32>
      %s = "onnx.ReduceSum"(%h) <{keepdims = 0 : si64}> : (tensor<4xf32>) -> tensor<f32>
      %zero = "onnx.Constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>
      %go = "onnx.Greater"(%s, %zero) : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "onnx.Yield"(%go, %h) : (tensor<i1>, tensor<4xf32>) -> ()
    }) {onnx_node_name = "until"} : (tensor<i64>, tensor<i1>, tensor<4xf32>) -> tensor<4xf32>
    func.return %r, %y, %ys, %z : tensor<4xf32>, tensor<4xf32>, tensor<3x4xf32>, tensor<4xf32>
  }
}
