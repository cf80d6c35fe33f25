// Segment functions (--compile-segments) print as @segment-decorated functions taking the
// weights and their inputs, before the function that calls them; torchpy.call_segment prints as
// a call that assigns the segment's results. Local names never shadow a function of the module.
// RUN: ramiel-translate --to-python %s | filecheck %s
// RUN: ramiel-translate --to-python %s -o %t.py && %python -c "import ast, sys; ast.parse(open(sys.argv[1]).read())" %t.py
// RUN: ramiel-opt %S/Inputs/fork-join-costs.mlir '--merge{clusters=2}' --lower-to-torchpy --compile-segments | ramiel-translate --to-python - | filecheck %s --check-prefix=PIPE
// RUN: ramiel-opt %S/Inputs/fork-join-costs.mlir --lower-to-torchpy=mode=sequential --compile-segments | ramiel-translate --to-python - | filecheck %s --check-prefix=SEQ
// RUN: ramiel-opt %S/Inputs/fork-join-costs.mlir --lower-to-torchpy=mode=sequential '--compile-segments{backend=onednn-graph}' | ramiel-translate --to-python - | filecheck %s --check-prefix=ONEDNN

// ONEDNN:      @segment(backend='onednn-graph')
// ONEDNN-NEXT: def forward_seg0(w, {{.*}}):
// ONEDNN-NEXT:     """Compiled segment of forward ({{[0-9]+}} statements): one TorchScript graph with oneDNN Graph fusion, traced on its first call."""

// CHECK:      from ramiel.runtime.compiled import segment
// CHECK:      @segment
// CHECK-NEXT: def c0_seg0(w, x):
// CHECK-NEXT:     """Compiled segment of cluster c0 (2 statements, 2 intra-op threads): one torch.compile graph, compiled at load time."""
// CHECK-NEXT:     c0_seg0_1 = x * w.k
// CHECK-NEXT:     b = torch.relu(c0_seg0_1)
// CHECK-NEXT:     return (c0_seg0_1, b)
// CHECK:      def cluster_c0(ch, w):
// CHECK-NEXT:     """{{.*}}"""
// CHECK-NEXT:     x = ch.get('x__c0')
// CHECK-NEXT:     ops.set_threads(2)
// CHECK-NEXT:     c0_seg0_1, b = c0_seg0(w, x)
// CHECK-NEXT:     ch.put('a__out', c0_seg0_1)
// CHECK-NEXT:     ch.put('b__out', b)
// CHECK-NEXT:     return
// CHECK:      PROGRAM = Program(
// CHECK-NEXT:     name="main",
// CHECK-NEXT:     clusters={
// CHECK-NEXT:         'c0': cluster_c0,
// CHECK-NEXT:     },
builtin.module {
  "torchpy.func"() <{sym_name = "c0_seg0", kind = "segment"}> ({
  ^bb0(%x: tensor<2xf32>):
    %k = "torchpy.weight"() <{key = "k", value = dense<2.0> : tensor<2xf32>}> : () -> tensor<2xf32>
    %c0_seg0 = "torchpy.call"(%x, %k) <{callee = "operator.mul", args = [0 : index, 1 : index]}> : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %b = "torchpy.call"(%c0_seg0) <{callee = "torch.relu", args = [0 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.return"(%c0_seg0, %b) : (tensor<2xf32>, tensor<2xf32>) -> ()
  }) {ramiel.segment_of = "cluster_c0", ramiel.statements = 2 : i64, ramiel.threads = 2 : i64} : () -> ()
  "torchpy.func"() <{sym_name = "cluster_c0", kind = "cluster"}> ({
    %x = "torchpy.get"() <{channel = "x__c0"}> : () -> tensor<2xf32>
    "torchpy.set_threads"() <{count = 2 : index}> : () -> ()
    %c0_seg0, %b = "torchpy.call_segment"(%x) <{callee = @c0_seg0}> : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
    "torchpy.put"(%c0_seg0) <{channel = "a__out"}> : (tensor<2xf32>) -> ()
    "torchpy.put"(%b) <{channel = "b__out"}> : (tensor<2xf32>) -> ()
    "torchpy.return"() : () -> ()
  }) : () -> ()
  "torchpy.program"() <{sym_name = "main", inputs = [["x__c0"]], outputs = ["a__out", "b__out"], input_order = ["x"], output_order = ["a", "b"]}> : () -> ()
}

// The fork-join of two clusters: the stem, the branch and the head of c0 are three segments
// between its channel operations; c1's branch is one.
// PIPE:      @segment
// PIPE-NEXT: def c0_seg0(w, x):
// PIPE-NEXT:     """Compiled segment of cluster c0 (1 statement): one torch.compile graph, compiled at load time."""
// PIPE-NEXT:     s = torch.relu(x)  # stem (Relu)
// PIPE-NEXT:     return s
// PIPE:      def cluster_c0(ch, w):
// PIPE-NEXT:     """{{.*}}"""
// PIPE-NEXT:     x = ch.get('x__c0')
// PIPE-NEXT:     s = c0_seg0(w, x)
// PIPE-NEXT:     ch.put('s__c0_c1', s)
// PIPE-NEXT:     b1 = c0_seg1(w, s)
// PIPE-NEXT:     b2 = ch.get('b2__c1_c0')
// PIPE-NEXT:     j = c0_seg2(w, b1, b2)
// PIPE-NEXT:     ch.put('y__out', j)
// PIPE:      def c1_seg0(w, s):
// PIPE:      def cluster_c1(ch, w):
// PIPE-NEXT:     """{{.*}}"""
// PIPE-NEXT:     s = ch.get('s__c0_c1')
// PIPE-NEXT:     b2 = c1_seg0(w, s)
// PIPE-NEXT:     ch.put('b2__c1_c0', b2)
// PIPE-NOT:  segments=
// The sequential module: its segments are module-level functions before the class; forward calls
// its one segment with the module as the weights.
// SEQ:      @segment
// SEQ-NEXT: def forward_seg0(w, x):
// SEQ-NEXT:     """Compiled segment of forward (4 statements): one torch.compile graph, compiled at load time."""
// SEQ:      class Model(torch.nn.Module):
// SEQ-NEXT:     """The whole model, sequentially, in compiled segments.
// SEQ:          def forward(self, x):
// SEQ-NEXT:         """The graph outputs: y."""
// SEQ-NEXT:         j = forward_seg0(self, x)
// SEQ-NEXT:         return j
