builtin.module {
  torchpy.func sequential @forward(%x: tensor<2xf32>) {
    %y = torchpy.call torch.relu(%x) [0, "1)\nimport os\n("] : (tensor<2xf32>) -> tensor<2xf32>
    torchpy.return %y : tensor<2xf32>
  }
}
