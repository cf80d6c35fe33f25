// --intra-op-threads{cores=N}: each compute op gets ramiel.threads (its intra-op threads) and
// ramiel.threaded_cost_us (its estimated cost with them); the module gets ramiel.cores. An op may
// take up to N // (clusters busy while it runs) threads, and takes more than one only where that
// is faster. Costs with t > 1 threads come from the analytic model (element-wise: 5 µs overhead
// + (cost - 5) / (1 + 0.6 (t - 1)) + 3 µs thread start-up; Reshape and friends never gain) unless
// a profile database has them (key@t<t>).
// RUN: ramiel-opt %s --split-input-file '--intra-op-threads{cores=2}' | filecheck %s
// RUN: ramiel-opt %s --split-input-file '--intra-op-threads{cores=4}' | filecheck %s --check-prefix=FOUR
// RUN: ramiel-opt %s --split-input-file '--intra-op-threads{cores=1}' | filecheck %s --check-prefix=ONE
// RUN: echo '{"meta": {}, "times_us": {"Sigmoid(tensor<4xf32>){}@t2": 2500.0, "Relu(tensor<1x4xf32>){}@t2": 400.0}}' > %t.json
// RUN: ramiel-opt %s --split-input-file '--intra-op-threads{cores=2 profile="%t.json"}' | filecheck %s --check-prefix=PROF
// RUN: ramiel-opt %s --split-input-file '--intra-op-threads{cores=2}' '--merge{clusters=2}' | filecheck %s --check-prefix=RECLUSTER
// RUN: ramiel-opt %s --split-input-file '--intra-op-threads{cores=2}' --schedule-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// RUN: %not ramiel-opt %s --split-input-file '--intra-op-threads{cores=0}' 2>&1 | filecheck %s --check-prefix=ZERO
// A count past the limit every count option keeps (it had run for minutes, growing in memory):
// RUN: %not ramiel-opt %s --split-input-file '--intra-op-threads{cores=9223372036854775807}' 2>&1 | filecheck %s --check-prefix=HUGE
// RUN: %not ramiel-opt %s --split-input-file '--intra-op-threads{cores=2 profile="%t.missing.json"}' 2>&1 | filecheck %s --check-prefix=MISSING

// ZERO: error: intra-op-threads: cores must be from 1 to 1024, got 0
// HUGE: error: intra-op-threads: cores must be from 1 to 1024, got 9223372036854775807
// MISSING: error: profile database {{.*}}.missing.json not found (create it with 'ramiel profile')

// Fork-join on two clusters. The stem s and the head j run while the other cluster idles, so by
// dependences they could take 2 threads, the branches b1 and b2 one each; but c0's OpenMP pool
// of 2 threads and c1's thread would share 2 cores, and a pool's helpers spin after every
// parallel region (light_shufflenet so planned: 600 ms against 7.7 ms for one thread). Every
// cluster's pool needs cores of its own, so on 2 cores each op keeps one thread. The module
// records the cores.
// CHECK:       builtin.module attributes {onnx.opset = 17 : i64, ramiel.cores = 2 : i64}
// CHECK-LABEL: func.func @main
// CHECK:         %s = "onnx.Relu"(%x) {ramiel.cost_us = 1.000000e+03 : f64, ramiel.threads = 1 : i64, ramiel.threaded_cost_us = 1.000000e+03 : f64}
// CHECK:         %b1 = "onnx.Sigmoid"(%s) {ramiel.cost_us = 2.000000e+03 : f64, ramiel.threads = 1 : i64, ramiel.threaded_cost_us = 2.000000e+03 : f64}
// CHECK:         %j = "onnx.Add"(%b1, %b2) {ramiel.cost_us = 1.000000e+03 : f64, ramiel.threads = 1 : i64, ramiel.threaded_cost_us = 1.000000e+03 : f64}
// CHECK:         %b2_1 = "onnx.Tanh"(%s_1) {ramiel.cost_us = 2.000000e+03 : f64, ramiel.threads = 1 : i64, ramiel.threaded_cost_us = 2.000000e+03 : f64}
// On 4 cores the branches take 4 // 2 = 2 threads each; the stem and the head could take 4, but
// c0's pool of 4 and c1's of 2 would need 6 cores: c0 is lowered to 3 (still 5), then to 2 (2 +
// 2 = 4), which costs less than lowering c1 (1000 µs -> 5 + 995 / 1.6 + 3 = 629.875 µs).
// FOUR:        builtin.module attributes {onnx.opset = 17 : i64, ramiel.cores = 4 : i64}
// FOUR:          %s = "onnx.Relu"(%x) {{{.*}}ramiel.threads = 2 : i64, ramiel.threaded_cost_us = 6.298750e+02 : f64}
// FOUR:          %b1 = "onnx.Sigmoid"(%s) {{{.*}}ramiel.threads = 2 : i64, ramiel.threaded_cost_us = 1254.875 : f64}
// FOUR:          %j = "onnx.Add"(%b1, %b2) {{{.*}}ramiel.threads = 2 : i64
// FOUR:          %b2_1 = "onnx.Tanh"(%s_1) {{{.*}}ramiel.threads = 2 : i64
// On one core every op keeps one thread at its own cost.
// ONE:         builtin.module attributes {onnx.opset = 17 : i64, ramiel.cores = 1 : i64}
// ONE:           %s = "onnx.Relu"(%x) {ramiel.cost_us = 1.000000e+03 : f64, ramiel.threads = 1 : i64, ramiel.threaded_cost_us = 1.000000e+03 : f64}
// ONE-NOT:       ramiel.threads = 2
// A profile database's measured times (Relu on 2 threads 400 µs) do not make room for a pool.
// PROF:          %s = "onnx.Relu"(%x) {{{.*}}ramiel.threads = 1 : i64, ramiel.threaded_cost_us = 1.000000e+03 : f64}
// A clustering pass afterwards drops the counts: they belonged to the old schedule.
// RECLUSTER-NOT: ramiel.threads
// REPORT-NOT:    intra-op threads
// REPORT:        est. makespan     4028.4 us
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
    %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
      %s = "onnx.Relu"(%x) {ramiel.cost_us = 1000.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
      "cluster.send"(%s) <{channel = "s__c0_c1"}> : (tensor<1x4xf32>) -> ()
      %b1 = "onnx.Sigmoid"(%s) {ramiel.cost_us = 2000.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
      %b2 = "cluster.recv"() <{channel = "b2__c1_c0"}> : () -> tensor<1x4xf32>
      %j = "onnx.Add"(%b1, %b2) {ramiel.cost_us = 1000.0 : f64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
      "cluster.yield"(%j) : (tensor<1x4xf32>) -> ()
    }) : () -> tensor<1x4xf32>
    "cluster.cluster"() <{sym_name = "c1"}> ({
      %s_1 = "cluster.recv"() <{channel = "s__c0_c1"}> : () -> tensor<1x4xf32>
      %b2_1 = "onnx.Tanh"(%s_1) {ramiel.cost_us = 2000.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
      "cluster.send"(%b2_1) <{channel = "b2__c1_c0"}> : (tensor<1x4xf32>) -> ()
      "cluster.yield"() : () -> ()
    }) : () -> ()
    func.return %0 : tensor<1x4xf32>
  }
}

// -----

// One cluster: nothing else is ever busy, so each op takes 2 threads exactly where they are
// faster. The 4 µs Relu would be slower (its overhead stays and thread start-up is added: 7 µs);
// Reshape never gains, and on a tie an op keeps the count of the op before it (no switch back
// and forth in the generated code).
// CHECK-LABEL: func.func @main
// CHECK:         %a = "onnx.Relu"(%x) {ramiel.cost_us = 1.000000e+03 : f64, ramiel.threads = 2 : i64, ramiel.threaded_cost_us = 6.298750e+02 : f64}
// CHECK-NEXT:    %r = "onnx.Reshape"(%a, %shape) {ramiel.cost_us = 1.000000e+03 : f64, ramiel.threads = 2 : i64, ramiel.threaded_cost_us = 1.000000e+03 : f64}
// CHECK-NEXT:    %b = "onnx.Relu"(%r) {ramiel.cost_us = 4.000000e+00 : f64, ramiel.threads = 1 : i64, ramiel.threaded_cost_us = 4.000000e+00 : f64}
// CHECK-NEXT:    %c = "onnx.Sigmoid"(%b) {ramiel.cost_us = 2.000000e+03 : f64, ramiel.threads = 2 : i64, ramiel.threaded_cost_us = 1254.875 : f64}
// FOUR:          %c = "onnx.Sigmoid"(%b) {{{.*}}ramiel.threads = 4 : i64, ramiel.threaded_cost_us = 7.205000e+02 : f64}
// ONE-NOT:       ramiel.threads = 2
// PROF:          %a = "onnx.Relu"(%x) {{{.*}}ramiel.threads = 2 : i64, ramiel.threaded_cost_us = 4.000000e+02 : f64}
// REPORT:        intra-op threads  3 op(s) with up to 2 threads
// REPORT-NEXT:   est. makespan     2888.8 us
// The profile has Sigmoid slower on 2 threads (2500 µs): one thread although it runs alone.
// PROF:          %c = "onnx.Sigmoid"(%b) {{{.*}}ramiel.threads = 1 : i64, ramiel.threaded_cost_us = 2.000000e+03 : f64}
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main(%x: tensor<1x4xf32>) -> tensor<4xf32> {
    %shape = "onnx.Constant"() <{value = dense<4> : tensor<1xi64>}> : () -> tensor<1xi64>
    %0 = "cluster.cluster"() <{sym_name = "c0"}> ({
      %a = "onnx.Relu"(%x) {ramiel.cost_us = 1000.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
      %r = "onnx.Reshape"(%a, %shape) {ramiel.cost_us = 1000.0 : f64} : (tensor<1x4xf32>, tensor<1xi64>) -> tensor<4xf32>
      %b = "onnx.Relu"(%r) {ramiel.cost_us = 4.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
      %c = "onnx.Sigmoid"(%b) {ramiel.cost_us = 2000.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
      "cluster.yield"(%c) : (tensor<4xf32>) -> ()
    }) : () -> tensor<4xf32>
    func.return %0 : tensor<4xf32>
  }
}

// -----

// A flat @main is one cluster; constants get no counts.
// CHECK-LABEL: func.func @flat
// CHECK:         %w = "onnx.Constant"() <{value = dense<1.000000e+00> : tensor<1x4xf32>}> : () -> tensor<1x4xf32>
// CHECK-NEXT:    %y = "onnx.Add"(%x, %w) {ramiel.cost_us = 5.000000e+02 : f64, ramiel.threads = 2 : i64
// REPORT:        intra-op threads  1 op(s) with up to 2 threads
// REPORT-NEXT:   est. makespan     317.4 us
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @flat(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
    %w = "onnx.Constant"() <{value = dense<1.0> : tensor<1x4xf32>}> : () -> tensor<1x4xf32>
    %y = "onnx.Add"(%x, %w) {ramiel.cost_us = 500.0 : f64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    func.return %y : tensor<1x4xf32>
  }
}

// -----

// A cluster without compute ops (here the first) is skipped: the counts go to the right ops.
// CHECK-LABEL: func.func @main
// CHECK:         cluster.cluster @c0
// CHECK-NEXT:      cluster.yield
// CHECK:         cluster.cluster @c1
// CHECK-NEXT:      %s = "onnx.Relu"(%x) {ramiel.cost_us = 1.000000e+03 : f64, ramiel.threads = 2 : i64, ramiel.threaded_cost_us = 6.298750e+02 : f64}
// REPORT:        intra-op threads  1 op(s) with up to 2 threads
// REPORT-NEXT:   est. makespan     629.9 us
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {
    "cluster.cluster"() <{sym_name = "c0"}> ({
      "cluster.yield"() : () -> ()
    }) : () -> ()
    %0 = "cluster.cluster"() <{sym_name = "c1"}> ({
      %s = "onnx.Relu"(%x) {ramiel.cost_us = 1000.0 : f64} : (tensor<1x4xf32>) -> tensor<1x4xf32>
      "cluster.yield"(%s) : (tensor<1x4xf32>) -> ()
    }) : () -> tensor<1x4xf32>
    func.return %0 : tensor<1x4xf32>
  }
}
