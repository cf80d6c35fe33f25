// --estimate-cost: the analytic model sets ramiel.cost_us = 5 + max(flops / rate, bytes / 20 GB/s)
// (µs; dense rate 75 GFLOP/s, element-wise 20 GFLOP/s, 2-D pooling 3500 window elements/µs on
// channels-last, plus the conversions a contiguous pooling makes) and ramiel.result_bytes on
// every compute op; constants and onnx.NoValue stay unannotated.
// RUN: ramiel-opt %s --split-input-file --estimate-cost | filecheck %s
// RUN: ramiel-opt %s --split-input-file '--estimate-cost{backend=processes}' | filecheck %s --check-prefix=PROC
// RUN: echo '{"meta": {}, "times_us": {"Relu(tensor<1x64x56x56xf32>){}": 42.5}}' > %t.json
// RUN: ramiel-opt %s --split-input-file '--estimate-cost{profile="%t.json"}' 2>%t.err | filecheck %s --check-prefix=PROF
// RUN: filecheck %s --check-prefix=PROF-WARN < %t.err
// RUN: %not ramiel-opt %s --split-input-file '--estimate-cost{profile="%t.missing.json"}' 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: %not ramiel-opt %s --split-input-file '--estimate-cost{backend=gpu}' 2>&1 | filecheck %s --check-prefix=BACKEND
// RUN: ramiel-opt %s --split-input-file '--estimate-cost{backend=distributed}' | filecheck %s --check-prefix=DIST
// RUN: echo '{"latency_us": 250.0, "us_per_byte": 0.0008, "hosts": ["a", "b"]}' > %t.net.json
// RUN: ramiel-opt %s --split-input-file '--estimate-cost{backend=distributed transfer-cost="%t.net.json"}' | filecheck %s --check-prefix=NET
// RUN: echo '{"latency_us": -1, "us_per_byte": 0}' > %t.bad.json
// RUN: %not ramiel-opt %s --split-input-file '--estimate-cost{transfer-cost="%t.bad.json"}' 2>&1 | filecheck %s --check-prefix=BADNET

// The module records the backend whose transfer costs weight the edges.
// CHECK: builtin.module attributes {onnx.opset = 17 : i64, ramiel.backend = "threads"}
// PROC:  builtin.module attributes {onnx.opset = 17 : i64, ramiel.backend = "processes"}
// DIST:  builtin.module attributes {onnx.opset = 17 : i64, ramiel.backend = "distributed"}
// A measured transfer cost file (ramiel calibrate -o FILE) replaces the backend's default model.
// NET:   builtin.module attributes {onnx.opset = 17 : i64, ramiel.backend = "distributed", ramiel.transfer_cost = [2.500000e+02 : f64, 8.000000e-04 : f64]}
// BADNET: error: transfer cost file {{.*}}.bad.json: 'latency_us' must be a number from 0 to 1e+09, got -1
// CHECK-LABEL: func.func @main
// CHECK:      %none = "onnx.NoValue"() : () -> none
// CHECK-NEXT: %w = "onnx.Constant"() <{value = dense<1.000000e-01> : tensor<4x3x3x3xf32>}> : () -> tensor<4x3x3x3xf32>
// CHECK-NEXT: %s = "onnx.Constant"() <{value = dense<[64, 3136]> : tensor<2xi64>}> : () -> tensor<2xi64>
// Conv: 2 * 256 outputs * 27 MACs = 13824 FLOP / 75e3 = 0.184 µs > 2224 bytes / 20e3 -> 5.184.
// CHECK-NEXT: %conv = "onnx.Conv"(%x, %w, %none) {{.*}} {ramiel.cost_us = 5.184000e+00 : f64, ramiel.result_bytes = [1024 : i64]}
// Relu: 2 * 802816 bytes / 20e3 = 80.282 µs (memory bound) -> 85.282.
// CHECK-NEXT: %relu = "onnx.Relu"(%y) {ramiel.cost_us = 8.528200e+01 : f64, ramiel.result_bytes = [802816 : i64]}
// MaxPool 3x3: 50176 outputs * 9 window elements / 3500 = 129.024 µs -> 134.024, plus its input
// converted to channels-last and its result back (5 + bytes / 6 GB/s: 138.803 + 38.451 µs).
// CHECK-NEXT: %pool = "onnx.MaxPool"(%relu) {{.*}} {ramiel.cost_us = 3.112770e+02 : f64, ramiel.result_bytes = [200704 : i64]}
// Reshape: no FLOPs; (802816 + 16 + 802816) bytes / 20e3 -> 85.282.
// CHECK-NEXT: %r = "onnx.Reshape"(%relu, %s) {ramiel.cost_us = 8.528200e+01 : f64, ramiel.result_bytes = [802816 : i64]}
// With a profile database, a measured op takes its measured time; the others fall back to the
// analytic model with a warning that counts them.
// PROF:      %conv = "onnx.Conv"{{.*}}ramiel.cost_us = 5.184000e+00 : f64
// PROF-NEXT: %relu = "onnx.Relu"(%y) {ramiel.cost_us = 4.250000e+01 : f64
// PROF-NEXT: %pool = "onnx.MaxPool"{{.*}}ramiel.cost_us = 3.112770e+02 : f64
// PROF-WARN: warning: 3 op(s) are not in the profile database {{.*}}.json; their cost is the analytic estimate
// MISSING: error: profile database {{.*}}.missing.json not found (create it with 'ramiel profile')
// BACKEND: error: estimate-cost: option 'backend' must be one of threads, processes, distributed, not 'gpu'{{$}}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @main(%x: tensor<1x3x8x8xf32>, %y: tensor<1x64x56x56xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x64x28x28xf32>, tensor<64x3136xf32>) {
  %none = "onnx.NoValue"() : () -> none
  %w = "onnx.Constant"() <{value = dense<0.1> : tensor<4x3x3x3xf32>}> : () -> tensor<4x3x3x3xf32>
  %s = "onnx.Constant"() <{value = dense<[64, 3136]> : tensor<2xi64>}> : () -> tensor<2xi64>
  %conv = "onnx.Conv"(%x, %w, %none) <{kernel_shape = [3 : si64, 3 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, none) -> tensor<1x4x8x8xf32>
  %relu = "onnx.Relu"(%y) : (tensor<1x64x56x56xf32>) -> tensor<1x64x56x56xf32>
  %pool = "onnx.MaxPool"(%relu) <{kernel_shape = [3 : si64, 3 : si64], strides = [2 : si64, 2 : si64], pads = [1 : si64, 1 : si64, 1 : si64, 1 : si64]}> : (tensor<1x64x56x56xf32>) -> tensor<1x64x28x28xf32>
  %r = "onnx.Reshape"(%relu, %s) : (tensor<1x64x56x56xf32>, tensor<2xi64>) -> tensor<64x3136xf32>
  func.return %conv, %pool, %r : tensor<1x4x8x8xf32>, tensor<1x64x28x28xf32>, tensor<64x3136xf32>
}
}

// -----

// Gemm and MatMul are dense: 2 * M * N * K FLOP at 75 GFLOP/s. Gemm 1x1024 by 1024x1000:
// 2048000 FLOP / 75e3 = 27.307 µs, but reading its weights is slower: (4096 + 4096000 + 4000 +
// 4000) bytes / 20e3 = 205.405 µs -> 210.405.
// CHECK-LABEL: func.func @dense
// CHECK: %g = "onnx.Gemm"{{.*}}ramiel.cost_us = 2.104050e+02 : f64, ramiel.result_bytes = [4000 : i64]
// MatMul 64x64 by 64x64: 524288 FLOP / 75e3 = 6.991 µs > 49152 bytes / 20e3 = 2.458 -> 11.991.
// CHECK: %m = "onnx.MatMul"{{.*}}ramiel.cost_us = 1.199100e+01 : f64, ramiel.result_bytes = [16384 : i64]
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @dense(%x: tensor<1x1024xf32>, %a: tensor<64x64xf32>) -> (tensor<1x1000xf32>, tensor<64x64xf32>) {
  %w = "onnx.Constant"() <{value = dense<0.1> : tensor<1000x1024xf32>}> : () -> tensor<1000x1024xf32>
  %b = "onnx.Constant"() <{value = dense<0.1> : tensor<1000xf32>}> : () -> tensor<1000xf32>
  %g = "onnx.Gemm"(%x, %w, %b) <{transB = 1 : si64}> : (tensor<1x1024xf32>, tensor<1000x1024xf32>, tensor<1000xf32>) -> tensor<1x1000xf32>
  %m = "onnx.MatMul"(%a, %a) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  func.return %g, %m : tensor<1x1000xf32>, tensor<64x64xf32>
}
}

// -----

// Ops inside clusters are annotated too; send, recv and yield are not ops with a cost. A tiny op
// costs the 5 µs overhead (+ 16 bytes / 20e3, rounded to 3 decimals).
// CHECK-LABEL: func.func @clustered
// CHECK:       %a = "onnx.Relu"(%x) {ramiel.cost_us = 5.001000e+00 : f64, ramiel.result_bytes = [8 : i64]}
// CHECK-NEXT:  cluster.send %a to "a" : tensor<2xf32>
// CHECK:       %r = cluster.recv from "a" : tensor<2xf32>
// CHECK-NEXT:  %b = "onnx.Neg"(%r) {ramiel.cost_us = 5.001000e+00 : f64, ramiel.result_bytes = [8 : i64]}
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @clustered(%x: tensor<2xf32>) -> tensor<2xf32> {
  "cluster.cluster"() <{sym_name = "c0"}> ({
    %a = "onnx.Relu"(%x) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.send"(%a) <{channel = "a"}> : (tensor<2xf32>) -> ()
    "cluster.yield"() : () -> ()
  }) : () -> ()
  %0 = "cluster.cluster"() <{sym_name = "c1"}> ({
    %r = "cluster.recv"() <{channel = "a"}> : () -> tensor<2xf32>
    %b = "onnx.Neg"(%r) : (tensor<2xf32>) -> tensor<2xf32>
    "cluster.yield"(%b) : (tensor<2xf32>) -> ()
  }) : () -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
}

// -----

// Control flow: the ops of the regions get their costs, and the region op costs 5 µs plus the
// dearer branch (If) or its body times the trip count (Loop, Scan).
// CHECK-LABEL: func.func @control_flow
// Each element-wise op: 5 + 2 * 820 bytes / 20e3 = 5.082.
// CHECK:        %a = "onnx.Relu"(%x) {ramiel.cost_us = 5.082000e+00 : f64
// CHECK:        %b = "onnx.Neg"(%x) {ramiel.cost_us = 5.082000e+00 : f64
// CHECK:        %c = "onnx.Relu"(%b) {ramiel.cost_us = 5.082000e+00 : f64
// If: 5 + max(5.082, 5.082 + 5.082) = 15.164.
// CHECK:      }) {ramiel.cost_us = 1.516400e+01 : f64
// Loop of 4 trips: 5 + 4 * 5.082 = 25.328.
// CHECK:      }) {ramiel.cost_us = 2.532800e+01 : f64
builtin.module attributes {onnx.opset = 17 : i64} {
func.func @control_flow(%p: tensor<i1>, %x: tensor<205xf32>) -> tensor<205xf32> {
  %r = "onnx.If"(%p) ({
    %a = "onnx.Relu"(%x) : (tensor<205xf32>) -> tensor<205xf32>
    "onnx.Yield"(%a) : (tensor<205xf32>) -> ()
  }, {
    %b = "onnx.Neg"(%x) : (tensor<205xf32>) -> tensor<205xf32>
    %c = "onnx.Relu"(%b) : (tensor<205xf32>) -> tensor<205xf32>
    "onnx.Yield"(%c) : (tensor<205xf32>) -> ()
  }) : (tensor<i1>) -> tensor<205xf32>
  %m = "onnx.Constant"() <{value = dense<4> : tensor<i64>}> : () -> tensor<i64>
  %none = "onnx.NoValue"() : () -> none
  %y = "onnx.Loop"(%m, %none, %r) ({
  ^bb0(%i: tensor<i64>, %k: tensor<i1>, %v: tensor<205xf32>):
    %d = "onnx.Relu"(%v) : (tensor<205xf32>) -> tensor<205xf32>
    "onnx.Yield"(%k, %d) : (tensor<i1>, tensor<205xf32>) -> ()
  }) : (tensor<i64>, none, tensor<205xf32>) -> tensor<205xf32>
  func.return %y : tensor<205xf32>
}
}
