// --compile-segments: every run of compute statements between channel operations (and thread
// counts) of a cluster function, and the whole sequential forward, becomes a segment function
// (kind "segment", named <cluster>_seg<k>) called by torchpy.call_segment; its arguments are the
// values it reads that are defined before it, its results the values later ops read, in order;
// the weights it reads are cloned into it (and removed from the caller when no longer used).
// RUN: ramiel-opt %s --split-input-file --compile-segments | filecheck %s
// RUN: ramiel-opt %s --split-input-file '--compile-segments{min-statements=2}' | filecheck %s --check-prefix=MIN2
// RUN: ramiel-opt %s --split-input-file --compile-segments | ramiel-opt --split-input-file | filecheck %s
// RUN: %not ramiel-opt %s --split-input-file '--compile-segments{min-statements=0}' 2>&1 | filecheck %s --check-prefix=ZERO
// RUN: %not ramiel-opt %s --split-input-file --compile-segments --compile-segments 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: ramiel-opt %s --split-input-file '--compile-segments{backend=onednn-graph}' | filecheck %s --check-prefix=ONEDNN
// RUN: %not ramiel-opt %s --split-input-file '--compile-segments{backend=tvm}' 2>&1 | filecheck %s --check-prefix=BACKEND

// ZERO: error: compile-segments: min-statements must be at least 1, got 0
// TWICE: error: compile-segments: the module already has segment functions
// BACKEND: error: compile-segments: backend must be one of inductor, onednn-graph, got 'tvm'
// backend=onednn-graph marks every segment (the printer writes @segment(backend='onednn-graph')).
// ONEDNN: torchpy.func segment @c0_seg0(%x: tensor<2xf32>) attributes {{{.*}}ramiel.segment_backend = "onednn-graph"{{.*}}}
// ONEDNN: torchpy.func segment @c0_seg1({{.*}}ramiel.segment_backend = "onednn-graph"

// A cluster: the stem before the put, the branch between the put and the get, the head after the
// get; each is a segment, the channel ops stay where they were. A weight read by the stem moves
// into its segment.
// CHECK-LABEL: torchpy.func segment @c0_seg0(%x: tensor<2xf32>) attributes {ramiel.segment_of = "cluster_c0", ramiel.statements = 2 : i64} {
// CHECK-NEXT:      %k = torchpy.weight "k" = dense<2.000000e+00> : tensor<2xf32>
// CHECK-NEXT:      %a = torchpy.call operator.mul(%x, %k) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:      %s = torchpy.call torch.relu(%a) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:      torchpy.return %s : tensor<2xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  torchpy.func segment @c0_seg1(%s{{.*}}: tensor<2xf32>)
// CHECK-NEXT:      %b1 = torchpy.call torch.sigmoid(%s{{.*}})
// CHECK-NEXT:      torchpy.return %b1 : tensor<2xf32>
// CHECK:       torchpy.func segment @c0_seg2(%b1{{.*}}: tensor<2xf32>, %b2: tensor<2xf32>)
// CHECK-NEXT:      %j = torchpy.call operator.add(%b1{{.*}}, %b2)
// CHECK-NEXT:      torchpy.return %j : tensor<2xf32>
// CHECK:       torchpy.func cluster @cluster_c0()
// CHECK-NEXT:    %x = torchpy.get from "x__c0" : tensor<2xf32>
// CHECK-NEXT:    %s = torchpy.call_segment @c0_seg0(%x) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    torchpy.put %s to "s__c0_c1" : tensor<2xf32>
// CHECK-NEXT:    %b1 = torchpy.call_segment @c0_seg1(%s) : (tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    %b2 = torchpy.get from "b2__c1_c0" : tensor<2xf32>
// CHECK-NEXT:    %j = torchpy.call_segment @c0_seg2(%b1, %b2) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT:    torchpy.put %j to "y__out" : tensor<2xf32>
// CHECK-NEXT:    torchpy.return
// CHECK-NEXT:  }
// With min-statements=2 only the two-statement stem is a segment; the rest stays inline.
// MIN2-LABEL: torchpy.func segment @c0_seg0
// MIN2-NOT:   c0_seg1
// MIN2:       torchpy.func cluster @cluster_c0() {
// MIN2:         %s = torchpy.call_segment @c0_seg0(%x)
// MIN2:         %b1 = torchpy.call torch.sigmoid(%s)
builtin.module {
  "torchpy.func"() <{sym_name = "cluster_c0", kind = "cluster"}> ({
    %k = "torchpy.weight"() <{key = "k", value = dense<2.0> : tensor<2xf32>}> : () -> tensor<2xf32>
    %x = "torchpy.get"() <{channel = "x__c0"}> : () -> tensor<2xf32>
    %a = "torchpy.call"(%x, %k) <{callee = "operator.mul", args = [0 : index, 1 : index]}> : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %s = "torchpy.call"(%a) <{callee = "torch.relu", args = [0 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.put"(%s) <{channel = "s__c0_c1"}> : (tensor<2xf32>) -> ()
    %b1 = "torchpy.call"(%s) <{callee = "torch.sigmoid", args = [0 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
    %b2 = "torchpy.get"() <{channel = "b2__c1_c0"}> : () -> tensor<2xf32>
    %j = "torchpy.call"(%b1, %b2) <{callee = "operator.add", args = [0 : index, 1 : index]}> : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    "torchpy.put"(%j) <{channel = "y__out"}> : (tensor<2xf32>) -> ()
    "torchpy.return"() : () -> ()
  }) : () -> ()
  "torchpy.func"() <{sym_name = "cluster_c1", kind = "cluster"}> ({
    %s = "torchpy.get"() <{channel = "s__c0_c1"}> : () -> tensor<2xf32>
    %b2 = "torchpy.call"(%s) <{callee = "torch.tanh", args = [0 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.put"(%b2) <{channel = "b2__c1_c0"}> : (tensor<2xf32>) -> ()
    "torchpy.return"() : () -> ()
  }) : () -> ()
  "torchpy.program"() <{sym_name = "main", inputs = [["x__c0"]], outputs = ["y__out"], input_order = ["x"], output_order = ["y"]}> : () -> ()
}

// -----

// torch.set_num_threads ends a segment too (it would break the graph); the segment after it
// records the count it runs with. Values used after the segment are its results, in definition
// order; a value used only inside stays inside.
// CHECK-LABEL: torchpy.func segment @c0_seg0(%x: tensor<2xf32>) attributes {ramiel.segment_of = "cluster_c0", ramiel.statements = 3 : i64} {
// CHECK-NEXT:      %a = torchpy.call torch.relu(%x)
// CHECK-NEXT:      %b = torchpy.call torch.sigmoid(%a)
// CHECK-NEXT:      %c = torchpy.call torch.tanh(%b)
// CHECK-NEXT:      torchpy.return %a, %c : tensor<2xf32>, tensor<2xf32>
// CHECK-NEXT:  }
// CHECK-NEXT:  torchpy.func segment @c0_seg1(%a: tensor<2xf32>, %c: tensor<2xf32>) attributes {ramiel.segment_of = "cluster_c0", ramiel.statements = 1 : i64, ramiel.threads = 2 : i64} {
// CHECK:       }
// CHECK:       torchpy.func cluster @cluster_c0()
// CHECK-NEXT:    %x = torchpy.get from "x__c0"
// CHECK-NEXT:    %a, %c = torchpy.call_segment @c0_seg0(%x) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
// CHECK-NEXT:    torchpy.set_threads 2
// CHECK-NEXT:    %d = torchpy.call_segment @c0_seg1(%a, %c)
// CHECK-NEXT:    torchpy.put %d to "y__out"
builtin.module {
  "torchpy.func"() <{sym_name = "cluster_c0", kind = "cluster"}> ({
    %x = "torchpy.get"() <{channel = "x__c0"}> : () -> tensor<2xf32>
    %a = "torchpy.call"(%x) <{callee = "torch.relu", args = [0 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
    %b = "torchpy.call"(%a) <{callee = "torch.sigmoid", args = [0 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
    %c = "torchpy.call"(%b) <{callee = "torch.tanh", args = [0 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.set_threads"() <{count = 2 : index}> : () -> ()
    %d = "torchpy.call"(%a, %c) <{callee = "operator.add", args = [0 : index, 1 : index]}> : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    "torchpy.put"(%d) <{channel = "y__out"}> : (tensor<2xf32>) -> ()
    "torchpy.return"() : () -> ()
  }) : () -> ()
  "torchpy.program"() <{sym_name = "main", inputs = [["x__c0"]], outputs = ["y__out"], input_order = ["x"], output_order = ["y"]}> : () -> ()
}

// -----

// The sequential module: its whole body is one segment, forward_seg0, and forward calls it. A
// name already taken gets a suffix.
// CHECK-LABEL: torchpy.func segment @forward_seg0_1(%x: tensor<2xf32>)
// CHECK-NEXT:      %y = torchpy.call torch.relu(%x)
// CHECK-NEXT:      %z = torchpy.method reshape(%y) ["1", "2"]
// CHECK-NEXT:      torchpy.return %z : tensor<1x2xf32>
// CHECK:       torchpy.func sequential @forward(%x{{.*}}: tensor<2xf32>)
// CHECK-NEXT:      %z = torchpy.call_segment @forward_seg0_1(%x{{.*}}) : (tensor<2xf32>) -> tensor<1x2xf32>
// CHECK-NEXT:      torchpy.return %z : tensor<1x2xf32>
builtin.module {
  "torchpy.func"() <{sym_name = "forward", kind = "sequential"}> ({
  ^bb0(%x: tensor<2xf32>):
    %y = "torchpy.call"(%x) <{callee = "torch.relu", args = [0 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
    %z = "torchpy.method"(%y) <{method = "reshape", args = ["1", "2"]}> : (tensor<2xf32>) -> tensor<1x2xf32>
    "torchpy.return"(%z) : (tensor<1x2xf32>) -> ()
  }) : () -> ()
  "torchpy.func"() <{sym_name = "forward_seg0", kind = "cluster"}> ({
    "torchpy.return"() : () -> ()
  }) : () -> ()
  "torchpy.program"() <{sym_name = "main", inputs = [], outputs = [], input_order = [], output_order = []}> : () -> ()
}
