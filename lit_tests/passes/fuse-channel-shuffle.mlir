// RUN: ramiel-opt %s --split-input-file --fuse-channel-shuffle --dce | filecheck %s

// ShuffleNet's channel shuffle as exporters write it (6 channels, 2 groups): the three ops
// become one Gather of the channels, p[j * 2 + i] = i * 3 + j, named after the last Reshape.
// CHECK-LABEL: func.func @shuffle
// CHECK-NEXT:    %shuffle = "onnx.Constant"() <{value = dense<[0, 3, 1, 4, 2, 5]> : tensor<6xi64>}> : () -> tensor<6xi64>
// CHECK-NEXT:    %y = "onnx.Gather"(%x, %shuffle) <{axis = 1 : si64}> {onnx_node_name = "shuffle_out"} : (tensor<1x6x2x2xf32>, tensor<6xi64>) -> tensor<1x6x2x2xf32>
// CHECK-NEXT:    func.return %y
func.func @shuffle(%x: tensor<1x6x2x2xf32>) -> tensor<1x6x2x2xf32> {
  %s1 = "onnx.Constant"() <{value = dense<[1, 2, 3, 2, 2]> : tensor<5xi64>}> : () -> tensor<5xi64>
  %s2 = "onnx.Constant"() <{value = dense<[1, 6, 2, 2]> : tensor<4xi64>}> : () -> tensor<4xi64>
  %r = "onnx.Reshape"(%x, %s1) : (tensor<1x6x2x2xf32>, tensor<5xi64>) -> tensor<1x2x3x2x2xf32>
  %t = "onnx.Transpose"(%r) <{perm = [0 : si64, 2 : si64, 1 : si64, 3 : si64, 4 : si64]}> : (tensor<1x2x3x2x2xf32>) -> tensor<1x3x2x2x2xf32>
  %y = "onnx.Reshape"(%t, %s2) {onnx_node_name = "shuffle_out"} : (tensor<1x3x2x2x2xf32>, tensor<4xi64>) -> tensor<1x6x2x2xf32>
  func.return %y : tensor<1x6x2x2xf32>
}

// -----

// 3 groups of 2 (the shapes decide g, here the -1 of the exported target shape is resolved by
// the types): p[j * 3 + i] = i * 2 + j.
// CHECK-LABEL: func.func @three_groups
// CHECK-NEXT:    %shuffle = "onnx.Constant"() <{value = dense<[0, 2, 4, 1, 3, 5]> : tensor<6xi64>}>
// CHECK-NEXT:    %y = "onnx.Gather"(%x, %shuffle) <{axis = 1 : si64}>
func.func @three_groups(%x: tensor<2x6x1x3xf32>) -> tensor<2x6x1x3xf32> {
  %s1 = "onnx.Constant"() <{value = dense<[2, 3, -1, 1, 3]> : tensor<5xi64>}> : () -> tensor<5xi64>
  %s2 = "onnx.Constant"() <{value = dense<[2, -1, 1, 3]> : tensor<4xi64>}> : () -> tensor<4xi64>
  %r = "onnx.Reshape"(%x, %s1) : (tensor<2x6x1x3xf32>, tensor<5xi64>) -> tensor<2x3x2x1x3xf32>
  %t = "onnx.Transpose"(%r) <{perm = [0 : si64, 2 : si64, 1 : si64, 3 : si64, 4 : si64]}> : (tensor<2x3x2x1x3xf32>) -> tensor<2x2x3x1x3xf32>
  %y = "onnx.Reshape"(%t, %s2) : (tensor<2x2x3x1x3xf32>, tensor<4xi64>) -> tensor<2x6x1x3xf32>
  func.return %y : tensor<2x6x1x3xf32>
}

// -----

// Near-misses stay: another permutation of the 5-D tensor; the 5-D value read outside the
// pattern; a last Reshape to another shape.
// CHECK-LABEL: func.func @near_misses
// CHECK-NOT:     onnx.Gather
// CHECK-COUNT-3: "onnx.Transpose"
// CHECK-NOT:     onnx.Gather
func.func @near_misses(%x: tensor<1x6x2x2xf32>) -> (tensor<1x6x2x2xf32>, tensor<1x6x2x2xf32>, tensor<1x2x3x2x2xf32>, tensor<1x3x8xf32>) {
  %s1 = "onnx.Constant"() <{value = dense<[1, 2, 3, 2, 2]> : tensor<5xi64>}> : () -> tensor<5xi64>
  %s2 = "onnx.Constant"() <{value = dense<[1, 6, 2, 2]> : tensor<4xi64>}> : () -> tensor<4xi64>
  %s3 = "onnx.Constant"() <{value = dense<[1, 3, 8]> : tensor<3xi64>}> : () -> tensor<3xi64>
  %r0 = "onnx.Reshape"(%x, %s1) : (tensor<1x6x2x2xf32>, tensor<5xi64>) -> tensor<1x2x3x2x2xf32>
  %t0 = "onnx.Transpose"(%r0) <{perm = [0 : si64, 1 : si64, 2 : si64, 4 : si64, 3 : si64]}> : (tensor<1x2x3x2x2xf32>) -> tensor<1x2x3x2x2xf32>
  %y0 = "onnx.Reshape"(%t0, %s2) : (tensor<1x2x3x2x2xf32>, tensor<4xi64>) -> tensor<1x6x2x2xf32>
  %r1 = "onnx.Reshape"(%x, %s1) : (tensor<1x6x2x2xf32>, tensor<5xi64>) -> tensor<1x2x3x2x2xf32>
  %t1 = "onnx.Transpose"(%r1) <{perm = [0 : si64, 2 : si64, 1 : si64, 3 : si64, 4 : si64]}> : (tensor<1x2x3x2x2xf32>) -> tensor<1x3x2x2x2xf32>
  %y1 = "onnx.Reshape"(%t1, %s2) : (tensor<1x3x2x2x2xf32>, tensor<4xi64>) -> tensor<1x6x2x2xf32>
  %r2 = "onnx.Reshape"(%x, %s1) : (tensor<1x6x2x2xf32>, tensor<5xi64>) -> tensor<1x2x3x2x2xf32>
  %t2 = "onnx.Transpose"(%r2) <{perm = [0 : si64, 2 : si64, 1 : si64, 3 : si64, 4 : si64]}> : (tensor<1x2x3x2x2xf32>) -> tensor<1x3x2x2x2xf32>
  %y2 = "onnx.Reshape"(%t2, %s3) : (tensor<1x3x2x2x2xf32>, tensor<3xi64>) -> tensor<1x3x8xf32>
  func.return %y0, %y1, %r1, %y2 : tensor<1x6x2x2xf32>, tensor<1x6x2x2xf32>, tensor<1x2x3x2x2xf32>, tensor<1x3x8xf32>
}
