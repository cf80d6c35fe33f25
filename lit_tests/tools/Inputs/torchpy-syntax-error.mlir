builtin.module {
  torchpy.func sequential @forward(%x: tensor<2xf32>) {
    %y = torchpy.call torch.relu(%x : (tensor<2xf32>) -> tensor<2xf32>
    torchpy.return %y : tensor<2xf32>
  }
}
