// A sequential forward whose segment writes in place (torch.relu_, what --inplace prints)
// starts with the autograd guard, as a forward that writes in place itself does: backward()
// then runs the statements as copies (ops.records_autograd, then torch.func.functionalize).
// A forward whose segments do not write in place has no guard.
// RUN: ramiel-translate --to-python %s | filecheck %s
// RUN: ramiel-opt %S/Inputs/fork-join-costs.mlir --lower-to-torchpy=mode=sequential --compile-segments | ramiel-translate --to-python - | filecheck %s --check-prefix=PURE

// CHECK:      def forward_seg0(w, x):
// CHECK:          s = torch.relu_(x)
// CHECK:      def forward(self, x):
// CHECK-NEXT:     """The graph outputs: y."""
// CHECK-NEXT:     if ops.records_autograd(x):  # backward(): the in-place statements below as copies
// CHECK-NEXT:         return torch.func.functionalize(type(self).forward)(self, x)
// CHECK-NEXT:     j = forward_seg0(self, x)

// PURE:      def forward(self, x):
// PURE-NEXT:     """The graph outputs: y."""
// PURE-NEXT:     j = forward_seg0(self, x)
builtin.module attributes {onnx.opset = 17 : i64} {
  torchpy.func segment @forward_seg0(%x: tensor<1x4xf32>) attributes {ramiel.segment_of = "forward", ramiel.statements = 2 : i64} {
    %s = torchpy.call torch.relu_(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
    %j = torchpy.call torch.sigmoid(%s) : (tensor<1x4xf32>) -> tensor<1x4xf32>
    torchpy.return %j : tensor<1x4xf32>
  }
  torchpy.func sequential @forward(%x: tensor<1x4xf32>) {
    %j = torchpy.call_segment @forward_seg0(%x) : (tensor<1x4xf32>) -> tensor<1x4xf32>
    torchpy.return %j : tensor<1x4xf32>
  }
  torchpy.program @main inputs [[]] outputs [""] input_order ["x"] output_order ["y"]
}
