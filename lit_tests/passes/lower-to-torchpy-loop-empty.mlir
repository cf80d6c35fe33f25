// A Loop whose trip count is known at run time only (M is a graph input) may run no iteration:
// its scan output is stacked by ops.stack_steps, which gives the empty (0, 4) tensor then, as
// onnxruntime does (torch.stack of no steps raises). A Loop of a known count keeps torch.stack
// (lower-to-torchpy-control-flow.mlir).
// RUN: ramiel-opt %s '--lower-to-torchpy{mode=sequential}' | filecheck %s
// RUN: ramiel-opt %s '--lower-to-torchpy{mode=sequential}' | ramiel-translate --to-python - | filecheck %s --check-prefix=PY

// CHECK:      %ws_steps = torchpy.call list()
// CHECK:      %ws = torchpy.call ops.stack_steps(%ws_steps) [0, "(0, 4)", "torch.float32"] : (!torchpy.object) -> tensor<5x4xf32>
// PY:         ws_steps = []
// PY:         for i in range(int(m)):  # grow (Loop)
// PY:         ws = ops.stack_steps(ws_steps, (0, 4), torch.float32)
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main(%x: tensor<4xf32> {onnx.name = "x"}, %m: tensor<i64> {onnx.name = "m"}) -> (tensor<4xf32> {onnx.name = "w"}, tensor<5x4xf32> {onnx.name = "ws"}) {
    %none = "onnx.NoValue"() : () -> none
    %w, %ws = "onnx.Loop"(%m, %none, %x) ({
    ^bb0(%i: tensor<i64>, %cond: tensor<i1>, %acc: tensor<4xf32>):
      %n = "onnx.Add"(%acc, %x) {onnx_node_name = "add"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      "onnx.Yield"(%cond, %n, %n) : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> ()
    }) {onnx_node_name = "grow"} : (tensor<i64>, none, tensor<4xf32>) -> (tensor<4xf32>, tensor<5x4xf32>)
    func.return %w, %ws : tensor<4xf32>, tensor<5x4xf32>
  }
}
