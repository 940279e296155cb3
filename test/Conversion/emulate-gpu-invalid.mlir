// RUN: sbp-opt %s --sbp-emulate-gpu -verify-diagnostics

func.func @shared_memory(%n: i32) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'gpu.launch' op uses shared memory, clusters or async tokens; sbp-emulate-gpu runs plain launches only}}
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1)
             dynamic_shared_memory_size %n {
    gpu.terminator
  }
  return
}
