// Scan: a for loop over the scanned axis (the reverse direction counts down), scan outputs
// stacked on their axis.
// RUN: ramiel-opt %s '--lower-to-torchpy{mode=sequential}' | ramiel-translate --to-python - | filecheck %s --check-prefix=SCAN
// SCAN:      def forward(self, s0, xs):
// SCAN-NEXT:     """The graph outputs: s, ys."""
// SCAN-NEXT:     ys_steps = []
// SCAN-NEXT:     s = s0
// SCAN-NEXT:     for t in range(5):  # scan (Scan)
// SCAN-NEXT:         t_reversed = 4 - t
// SCAN-NEXT:         x = xs.select(1, t_reversed)
// SCAN-NEXT:         n = s + x  # add (Add)
// SCAN-NEXT:         ys_steps.append(n)
// SCAN-NEXT:         s = n
// SCAN-NEXT:     ys = torch.stack(ys_steps, 1)
builtin.module attributes {onnx.opset = 17 : i64} {
  func.func @main(%s0: tensor<2xf32> {onnx.name = "s0"}, %xs: tensor<2x5xf32> {onnx.name = "xs"}) -> (tensor<2xf32> {onnx.name = "s"}, tensor<2x5xf32> {onnx.name = "ys"}) {
    %s, %ys = "onnx.Scan"(%s0, %xs) <{num_scan_inputs = 1 : si64, scan_input_axes = [1 : si64], scan_input_directions = [1 : si64], scan_output_axes = [1 : si64]}> ({
    ^bb0(%acc: tensor<2xf32>, %x: tensor<2xf32>):
      %n = "onnx.Add"(%acc, %x) {onnx_node_name = "add"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      "onnx.Yield"(%n, %n) : (tensor<2xf32>, tensor<2xf32>) -> ()
    }) {onnx_node_name = "scan"} : (tensor<2xf32>, tensor<2x5xf32>) -> (tensor<2xf32>, tensor<2x5xf32>)
    func.return %s, %ys : tensor<2xf32>, tensor<2x5xf32>
  }
}
