// torchpy.set_threads prints as ops.set_threads(N) (torch.set_num_threads, capped at run time to
// the cores the worker's cluster may use) with its reason as a comment; a program
// that raises a worker's count above 1 says so in PROGRAM (max_threads), so that the processes
// backend starts such workers from a clean forkserver, and names the widest clusters (threads),
// so that the threads backend runs the widest one in the caller's thread.
// RUN: ramiel-translate --to-python %s | filecheck %s
// RUN: ramiel-translate --to-python %s -o %t.py && %python -c "import ast, sys; ast.parse(open(sys.argv[1]).read())" %t.py
// RUN: ramiel-opt %s | ramiel-opt | filecheck %s --check-prefix=IR
// RUN: ramiel-opt %S/Inputs/fork-join-costs.mlir '--merge{clusters=2}' '--intra-op-threads{cores=3}' --lower-to-torchpy | ramiel-translate --to-python - | filecheck %s --check-prefix=LOWERED
// RUN: ramiel-opt %S/Inputs/fork-join-costs.mlir '--merge{clusters=2}' --lower-to-torchpy | ramiel-translate --to-python - | filecheck %s --check-prefix=NONE
// RUN: ramiel-opt %S/Inputs/fork-join-costs.mlir '--merge{clusters=4}' --lower-to-torchpy | ramiel-translate --to-python - | filecheck %s --check-prefix=CORES
// RUN: %not ramiel-translate --to-python %S/Inputs/bad-cores.mlir 2>&1 | filecheck %s --check-prefix=BADCORES

// IR:      torchpy.set_threads 2 reason "more threads"
// IR:      torchpy.set_threads 1

// CHECK:      def cluster_c0(ch, w):
// CHECK-NEXT:     """{{.*}}"""
// CHECK-NEXT:     x = ch.get('x__c0')
// CHECK-NEXT:     ops.set_threads(2)  # more threads
// CHECK-NEXT:     y = torch.relu(x)
// CHECK-NEXT:     ops.set_threads(1){{$}}
// CHECK-NEXT:     z = torch.sigmoid(y)
// CHECK-NEXT:     ch.put('y__out', z)
// CHECK:      PROGRAM = Program(
// CHECK:          max_threads=2,
// CHECK-NEXT:     threads={'c0': 2},
// CHECK-NEXT: )
builtin.module {
  "torchpy.func"() <{sym_name = "cluster_c0", kind = "cluster"}> ({
    %x = "torchpy.get"() <{channel = "x__c0"}> : () -> tensor<2xf32>
    "torchpy.set_threads"() <{count = 2 : index, reason = "more threads"}> : () -> ()
    %y = "torchpy.call"(%x) <{callee = "torch.relu", args = [0 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.set_threads"() <{count = 1 : index}> : () -> ()
    %z = "torchpy.call"(%y) <{callee = "torch.sigmoid", args = [0 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.put"(%z) <{channel = "y__out"}> : (tensor<2xf32>) -> ()
    "torchpy.return"() : () -> ()
  }) : () -> ()
  "torchpy.program"() <{sym_name = "main", inputs = [["x__c0"]], outputs = ["y__out"], input_order = ["x"], output_order = ["y"]}> : () -> ()
}

// A fork-join (stem and head 1000 µs, branches 2000 µs) through the whole text pipeline, planned
// for 3 cores: the stem and the head run with 2 threads, the branches side by side with 1 (c0's
// pool of 2 and c1's thread fit in 3 cores; on 2 cores every op would keep one thread).
// LOWERED:      def cluster_c0(ch, w):
// LOWERED-NEXT:     """{{.*}}"""
// LOWERED-NEXT:     x = ch.get('x__c0')
// LOWERED-NEXT:     ops.set_threads(2)  # this cluster's intra-op threads (--intra-op-threads)
// LOWERED-NEXT:     s = torch.relu(x)  # stem (Relu)
// LOWERED-NEXT:     ch.put('s__c0_c1', s)
// LOWERED-NEXT:     ops.set_threads(1)  # other clusters busy again
// LOWERED-NEXT:     b1 = torch.sigmoid(s)  # b1 (Sigmoid)
// LOWERED-NEXT:     b2 = ch.get('b2__c1_c0')
// LOWERED-NEXT:     ops.set_threads(2)  # other clusters idle: more intra-op threads
// LOWERED-NEXT:     j = b1 + b2  # head (Add)
// LOWERED:      def cluster_c1(ch, w):
// LOWERED-NEXT:     """{{.*}}"""
// LOWERED-NEXT:     s = ch.get('s__c0_c1')
// LOWERED-NEXT:     ops.set_threads(1)  # this cluster's intra-op threads (--intra-op-threads)
// LOWERED-NEXT:     b2 = torch.tanh(s)  # b2 (Tanh)
// LOWERED-NOT:      set_num_threads
// LOWERED:          max_threads=2,
// LOWERED-NEXT:     threads={'c0': 2},
// Without --intra-op-threads: neither.
// NONE:         def cluster_c0(ch, w):
// NONE-NOT:         set_num_threads
// NONE-NOT:         max_threads
// NONE-NOT:         threads=

// The cores merge planned for (module attribute ramiel.cores) become Program(cores=N): 4 cores,
// 2 clusters made, so the generated module gives each worker 2 intra-op threads by default.
// CORES:      PROGRAM = Program(
// CORES-NOT:      max_threads
// CORES:          # planned for 4 core(s): by default each of the 2 worker(s) runs max(1, 4 // 2) = 2
// CORES-NEXT:     # intra-op thread(s) (Program.planned_threads; fewer where fewer cores are usable)
// CORES-NEXT:     cores=4,
// CORES-NEXT: )
// BADCORES: error: module attribute ramiel.cores must be a positive i64 (the cores the schedule was planned for, e.g. ramiel.cores = 4 : i64), got 0 : i64
