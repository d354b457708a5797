// Probes recorded inside the processes of an `interpreter.run_parallel` grid are the host's:
// process by process in grid order (tests/interpreter/test_mpi.py runs this on MPI ranks too).
module @grid_probes {
  func.func @twice(%x : tensor<2xi64>) -> tensor<2xi64> {
    %p = interpreter.probe %x, probe_id = "in" : tensor<2xi64>
    %y = stablehlo.add %p, %p : tensor<2xi64>
    %q = interpreter.probe %y, probe_id = "out" : tensor<2xi64>
    func.return %q : tensor<2xi64>
  }
  func.func @main() {
    %a = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
    %b = stablehlo.constant dense<[5, 6]> : tensor<2xi64>
    %r:2 = "interpreter.run_parallel"(%a, %b) {
      programs=[[@twice], [@twice]]
    } : (tensor<2xi64>, tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>)
    check.expect_serialized_eq %a, probe_id = "in", iter = 0 : tensor<2xi64>
    check.expect_serialized_eq %b, probe_id = "in", iter = 1 : tensor<2xi64>
    check.expect_serialized_eq %r#0, probe_id = "out", iter = 0 : tensor<2xi64>
    check.expect_serialized_eq %r#1, probe_id = "out", iter = 1 : tensor<2xi64>
    func.return
  }
}
