// A torchpy module whose ramiel.cores (the cores the schedule was planned for) is not a positive
// i64: ramiel-translate refuses it (the program could not run), lit_tests/translate/to-python-threads.mlir.
builtin.module attributes {ramiel.cores = 0 : i64} {
  "torchpy.func"() <{sym_name = "cluster_c0", kind = "cluster"}> ({
    %x = "torchpy.get"() <{channel = "x__c0"}> : () -> tensor<2xf32>
    %y = "torchpy.call"(%x) <{callee = "torch.relu", args = [0 : index]}> : (tensor<2xf32>) -> tensor<2xf32>
    "torchpy.put"(%y) <{channel = "y__out"}> : (tensor<2xf32>) -> ()
    "torchpy.return"() : () -> ()
  }) : () -> ()
  "torchpy.program"() <{sym_name = "main", inputs = [["x__c0"]], outputs = ["y__out"], input_order = ["x"], output_order = ["y"]}> : () -> ()
}
