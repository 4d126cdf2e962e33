// RUN: not %vouch-opt %s --pass-pipeline='builtin.module(vouch.model(vouch-gate))' 2>&1 | FileCheck %s

// Every cuda capsule, planned (by hand, as vouch-plan would record it) on an
// op beyond the bounds its shape contract states, is rejected by the gate:
// rank 9 for vouch's own kernels (rank ≤ 8), an element count beyond the
// UInt32 CUDA ABI where the op's verifier caps the rank (matmul; batch_norm's
// input, as [N, C] with C channels of N elements), an extent
// beyond int for cuBLAS(Lt). The cuda capsules' shape contracts cite this
// file (capsules/Evidence.cpp, key `gate`), and tools/check_evidence.sh
// checks that each of them is named here (`vouch.capsule = "<name>"`): a
// new cuda capsule needs a case. //passes:gate_test words each obligation's
// failure once; this file shows it for every capsule.

vouch.model "bounds" attributes {batch = 1 : i64, vouch.profile = "checked_cuda"} {
  %a = vouch.input "a" : tensor<1x1x1x1x1x1x1x1x2xf32>
  %v = vouch.input "v" : tensor<2xf32>
  %w = vouch.input "w" : tensor<3x2xf32>
  %b = vouch.input "b" : tensor<3xf32>
  %big = vouch.input "big" : tensor<65536x65536xf32>
  %col = vouch.input "col" : tensor<65536x1xf32>
  %row = vouch.input "row" : tensor<1x2147483648xf32>
  %deep = vouch.input "deep" : tensor<2147483648x1xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.fill` handles rank ≤ 8
  %f = vouch.fill 1.0 {vouch.capsule = "native_cuda.fill", vouch.kernel = "bounds_fill"} : tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.linear` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.linear` handles rank ≤ 8
  %l = vouch.linear %a, %w, %b {vouch.capsule = "native_cuda.linear", vouch.kernel = "bounds_linear"} : (tensor<1x1x1x1x1x1x1x1x2xf32>, tensor<3x2xf32>, tensor<3xf32>) -> tensor<1x1x1x1x1x1x1x1x3xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: operand 0 (tensor<65536x65536xf32>) has 4294967296 elements, more than the UInt32 CUDA ABI allows (4294967295): its last index does not fit
  %m = vouch.matmul %big, %col {vouch.capsule = "native_cuda.matmul", vouch.kernel = "bounds_matmul"} : (tensor<65536x65536xf32>, tensor<65536x1xf32>) -> tensor<65536x1xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: axis 1 of operand 0 has extent 2147483648; cublas takes int extents (≤ 2147483647)
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: axis 0 of operand 1 has extent 2147483648; cublas takes int extents (≤ 2147483647)
  %bm = vouch.matmul %row, %deep {vouch.capsule = "cublas.matmul", vouch.kernel = "bounds_cublas_matmul"} : (tensor<1x2147483648xf32>, tensor<2147483648x1xf32>) -> tensor<1x1xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: axis 1 of operand 0 has extent 2147483648; cublaslt takes int extents (≤ 2147483647)
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: axis 1 of operand 1 has extent 2147483648; cublaslt takes int extents (≤ 2147483647)
  %bl = vouch.linear %row, %row {vouch.capsule = "cublaslt.linear", vouch.kernel = "bounds_cublaslt_linear"} : (tensor<1x2147483648xf32>, tensor<1x2147483648xf32>) -> tensor<1x1xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: axis 0 of operand 0 has extent 2147483648; cublaslt takes int extents (≤ 2147483647)
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: axis 0 of operand 1 has extent 2147483648; cublaslt takes int extents (≤ 2147483647)
  %bw:2 = vouch.linear_weight_grad %deep, %deep {vouch.capsule = "cublaslt.linear_weight_grad", vouch.kernel = "bounds_cublaslt_linear_weight_grad"} : (tensor<2147483648x1xf32>, tensor<2147483648x1xf32>) -> (tensor<1x1xf32>, tensor<1xf32>)
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.relu` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.relu` handles rank ≤ 8
  %r = vouch.relu %a {vouch.capsule = "native_cuda.relu", vouch.kernel = "bounds_relu"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+3]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.add` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 1 has rank 9; capsule `native_cuda.add` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.add` handles rank ≤ 8
  %ad = vouch.add %a, %a {vouch.capsule = "native_cuda.add", vouch.kernel = "bounds_add"} : (tensor<1x1x1x1x1x1x1x1x2xf32>, tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+3]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.sub` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 1 has rank 9; capsule `native_cuda.sub` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.sub` handles rank ≤ 8
  %s = vouch.sub %a, %a {vouch.capsule = "native_cuda.sub", vouch.kernel = "bounds_sub"} : (tensor<1x1x1x1x1x1x1x1x2xf32>, tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+3]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.mul` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 1 has rank 9; capsule `native_cuda.mul` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.mul` handles rank ≤ 8
  %mu = vouch.mul %a, %a {vouch.capsule = "native_cuda.mul", vouch.kernel = "bounds_mul"} : (tensor<1x1x1x1x1x1x1x1x2xf32>, tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.tanh` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.tanh` handles rank ≤ 8
  %t = vouch.tanh %a {vouch.capsule = "native_cuda.tanh", vouch.kernel = "bounds_tanh"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.exp` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.exp` handles rank ≤ 8
  %e = vouch.exp %a {vouch.capsule = "native_cuda.exp", vouch.kernel = "bounds_exp"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.step` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.step` handles rank ≤ 8
  %st = vouch.step %a {vouch.capsule = "native_cuda.step", vouch.kernel = "bounds_step"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.scale` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.scale` handles rank ≤ 8
  %sc = vouch.scale %a by 2.0 {vouch.capsule = "native_cuda.scale", vouch.kernel = "bounds_scale"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.reshape` handles rank ≤ 8
  %rs = vouch.reshape %a {vouch.capsule = "native_cuda.reshape", vouch.kernel = "bounds_reshape"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.permute` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.permute` handles rank ≤ 8
  %p = vouch.permute %a perm [0, 1, 2, 3, 4, 5, 6, 8, 7] {vouch.capsule = "native_cuda.permute", vouch.kernel = "bounds_permute"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x2x1xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.broadcast` handles rank ≤ 8
  %br = vouch.broadcast %v dims [8] {vouch.capsule = "native_cuda.broadcast", vouch.kernel = "bounds_broadcast"} : (tensor<2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.reduce_sum` handles rank ≤ 8
  %rsum = vouch.reduce_sum %a axes [8] {vouch.capsule = "native_cuda.reduce_sum", vouch.kernel = "bounds_reduce_sum"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.reduce_mean` handles rank ≤ 8
  %rmean = vouch.reduce_mean %a axes [8] {vouch.capsule = "native_cuda.reduce_mean", vouch.kernel = "bounds_reduce_mean"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.reduce_max` handles rank ≤ 8
  %reduce_max = vouch.reduce_max %a axes [8] {vouch.capsule = "native_cuda.reduce_max", vouch.kernel = "bounds_reduce_max"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.reduce_min` handles rank ≤ 8
  %reduce_min = vouch.reduce_min %a axes [8] {vouch.capsule = "native_cuda.reduce_min", vouch.kernel = "bounds_reduce_min"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+3]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.div` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 1 has rank 9; capsule `native_cuda.div` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.div` handles rank ≤ 8
  %b_div = vouch.div %a, %a {vouch.capsule = "native_cuda.div", vouch.kernel = "bounds_div"} : (tensor<1x1x1x1x1x1x1x1x2xf32>, tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+3]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.maximum` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 1 has rank 9; capsule `native_cuda.maximum` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.maximum` handles rank ≤ 8
  %b_maximum = vouch.maximum %a, %a {vouch.capsule = "native_cuda.maximum", vouch.kernel = "bounds_maximum"} : (tensor<1x1x1x1x1x1x1x1x2xf32>, tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+3]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.minimum` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 1 has rank 9; capsule `native_cuda.minimum` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.minimum` handles rank ≤ 8
  %b_minimum = vouch.minimum %a, %a {vouch.capsule = "native_cuda.minimum", vouch.kernel = "bounds_minimum"} : (tensor<1x1x1x1x1x1x1x1x2xf32>, tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.abs` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.abs` handles rank ≤ 8
  %u_abs = vouch.abs %a {vouch.capsule = "native_cuda.abs", vouch.kernel = "bounds_abs"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.sqrt` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.sqrt` handles rank ≤ 8
  %u_sqrt = vouch.sqrt %a {vouch.capsule = "native_cuda.sqrt", vouch.kernel = "bounds_sqrt"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.log` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.log` handles rank ≤ 8
  %u_log = vouch.log %a {vouch.capsule = "native_cuda.log", vouch.kernel = "bounds_log"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.sin` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.sin` handles rank ≤ 8
  %u_sin = vouch.sin %a {vouch.capsule = "native_cuda.sin", vouch.kernel = "bounds_sin"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.cos` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.cos` handles rank ≤ 8
  %u_cos = vouch.cos %a {vouch.capsule = "native_cuda.cos", vouch.kernel = "bounds_cos"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.sigmoid` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.sigmoid` handles rank ≤ 8
  %u_sigmoid = vouch.sigmoid %a {vouch.capsule = "native_cuda.sigmoid", vouch.kernel = "bounds_sigmoid"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.silu` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.silu` handles rank ≤ 8
  %u_silu = vouch.silu %a {vouch.capsule = "native_cuda.silu", vouch.kernel = "bounds_silu"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.inv` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.inv` handles rank ≤ 8
  %u_inv = vouch.inv %a {vouch.capsule = "native_cuda.inv", vouch.kernel = "bounds_inv"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.softplus` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.softplus` handles rank ≤ 8
  %n_softplus = vouch.softplus %a beta 1.0 threshold 20.0 {vouch.capsule = "native_cuda.softplus", vouch.kernel = "bounds_softplus"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.safe_log` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.safe_log` handles rank ≤ 8
  %n_safe_log = vouch.safe_log %a eps 1.0e-12 {vouch.capsule = "native_cuda.safe_log", vouch.kernel = "bounds_safe_log"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.clamp` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.clamp` handles rank ≤ 8
  %n_clamp = vouch.clamp %a min -1.0 max 1.0 {vouch.capsule = "native_cuda.clamp", vouch.kernel = "bounds_clamp"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.pow` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.pow` handles rank ≤ 8
  %n_pow = vouch.pow %a p 2.0 {vouch.capsule = "native_cuda.pow", vouch.kernel = "bounds_pow"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.softmax` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.softmax` handles rank ≤ 8
  %softmax = vouch.softmax %a axis 8 {vouch.capsule = "native_cuda.softmax", vouch.kernel = "bounds_softmax"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.log_softmax` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.log_softmax` handles rank ≤ 8
  %log_softmax = vouch.log_softmax %a axis 8 {vouch.capsule = "native_cuda.log_softmax", vouch.kernel = "bounds_log_softmax"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+3]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.softmax_grad` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 1 has rank 9; capsule `native_cuda.softmax_grad` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.softmax_grad` handles rank ≤ 8
  %softmax_grad = vouch.softmax_grad %a, %a axis 8 {vouch.capsule = "native_cuda.softmax_grad", vouch.kernel = "bounds_softmax_grad"} : (tensor<1x1x1x1x1x1x1x1x2xf32>, tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+3]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.log_softmax_grad` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 1 has rank 9; capsule `native_cuda.log_softmax_grad` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.log_softmax_grad` handles rank ≤ 8
  %log_softmax_grad = vouch.log_softmax_grad %a, %a axis 8 {vouch.capsule = "native_cuda.log_softmax_grad", vouch.kernel = "bounds_log_softmax_grad"} : (tensor<1x1x1x1x1x1x1x1x2xf32>, tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.layer_norm` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.layer_norm` handles rank ≤ 8
  %layer_norm = vouch.layer_norm %a weight %v bias %v eps 1.0e-05 {vouch.capsule = "native_cuda.layer_norm", vouch.kernel = "bounds_layer_norm"} : (tensor<1x1x1x1x1x1x1x1x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+3]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.layer_norm_grad` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 1 has rank 9; capsule `native_cuda.layer_norm_grad` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: result 0 has rank 9; capsule `native_cuda.layer_norm_grad` handles rank ≤ 8
  %layer_norm_grad:3 = vouch.layer_norm_grad %a, %a weight %v with_bias eps 1.0e-05 {vouch.capsule = "native_cuda.layer_norm_grad", vouch.kernel = "bounds_layer_norm_grad"} : (tensor<1x1x1x1x1x1x1x1x2xf32>, tensor<1x1x1x1x1x1x1x1x2xf32>, tensor<2xf32>) -> (tensor<1x1x1x1x1x1x1x1x2xf32>, tensor<2xf32>, tensor<2xf32>)
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.mse_loss` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 1 has rank 9; capsule `native_cuda.mse_loss` handles rank ≤ 8
  %mse = vouch.mse_loss %a, %a {vouch.capsule = "native_cuda.mse_loss", vouch.kernel = "bounds_mse_loss"} : (tensor<1x1x1x1x1x1x1x1x2xf32>, tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<f32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.gelu` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.gelu` handles rank ≤ 8
  %gelu = vouch.gelu %a approximate "tanh" {vouch.capsule = "native_cuda.gelu", vouch.kernel = "bounds_gelu"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.gelu_grad` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.gelu_grad` handles rank ≤ 8
  %gelu_grad = vouch.gelu_grad %a approximate "none" {vouch.capsule = "native_cuda.gelu_grad", vouch.kernel = "bounds_gelu_grad"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.slice` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.slice` handles rank ≤ 8
  %slice = vouch.slice %a axis 8 start 1 end 2 step 1 {vouch.capsule = "native_cuda.slice", vouch.kernel = "bounds_slice"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x1xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.slice_scatter` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.slice_scatter` handles rank ≤ 8
  %slice_scatter = vouch.slice_scatter %slice axis 8 start 1 end 2 step 1 {vouch.capsule = "native_cuda.slice_scatter", vouch.kernel = "bounds_slice_scatter"} : (tensor<1x1x1x1x1x1x1x1x1xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+3]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.concat` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 1 has rank 9; capsule `native_cuda.concat` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.concat` handles rank ≤ 8
  %concat = vouch.concat %a, %a axis 8 {vouch.capsule = "native_cuda.concat", vouch.kernel = "bounds_concat"} : (tensor<1x1x1x1x1x1x1x1x2xf32>, tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x4xf32>
  %labels = vouch.target "labels" : tensor<1x1x1x1x1x1x1x1xi32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.cross_entropy` handles rank ≤ 8
  %ce = vouch.cross_entropy %a, %labels {ignore_index = -100 : i64, vouch.capsule = "native_cuda.cross_entropy", vouch.kernel = "bounds_cross_entropy"} : (tensor<1x1x1x1x1x1x1x1x2xf32>, tensor<1x1x1x1x1x1x1x1xi32>) -> tensor<f32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.cross_entropy_grad` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.cross_entropy_grad` handles rank ≤ 8
  %ce_grad = vouch.cross_entropy_grad %a, %labels, %ce {ignore_index = -100 : i64, vouch.capsule = "native_cuda.cross_entropy_grad", vouch.kernel = "bounds_cross_entropy_grad"} : (tensor<1x1x1x1x1x1x1x1x2xf32>, tensor<1x1x1x1x1x1x1x1xi32>, tensor<f32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  %table = vouch.input "table" : tensor<1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.embedding` handles rank ≤ 8
  %emb = vouch.embedding %labels, %table {vouch.capsule = "native_cuda.embedding", vouch.kernel = "bounds_embedding"} : (tensor<1x1x1x1x1x1x1x1xi32>, tensor<1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 1 has rank 9; capsule `native_cuda.embedding_grad` handles rank ≤ 8
  %emb_grad = vouch.embedding_grad %labels, %emb {vouch.capsule = "native_cuda.embedding_grad", vouch.kernel = "bounds_embedding_grad"} : (tensor<1x1x1x1x1x1x1x1xi32>, tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x2xf32>
  %idx = vouch.target "idx" : tensor<1x1x1x1x1x1x1x1x2xi32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+3]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.gather` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 1 has rank 9; capsule `native_cuda.gather` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.gather` handles rank ≤ 8
  %gather = vouch.gather %a, %idx axis 8 {vouch.capsule = "native_cuda.gather", vouch.kernel = "bounds_gather"} : (tensor<1x1x1x1x1x1x1x1x2xf32>, tensor<1x1x1x1x1x1x1x1x2xi32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+4]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.scatter_add` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+3]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 1 has rank 9; capsule `native_cuda.scatter_add` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 2 has rank 9; capsule `native_cuda.scatter_add` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.scatter_add` handles rank ≤ 8
  %scatter = vouch.scatter_add %a, %idx, %gather axis 8 {vouch.capsule = "native_cuda.scatter_add", vouch.kernel = "bounds_scatter_add"} : (tensor<1x1x1x1x1x1x1x1x2xf32>, tensor<1x1x1x1x1x1x1x1x2xi32>, tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.dropout` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.dropout` handles rank ≤ 8
  %dropout = vouch.dropout %a p 5.000000e-01 ordinal 0 {vouch.capsule = "native_cuda.dropout", vouch.kernel = "bounds_dropout"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.rand_uniform` handles rank ≤ 8
  %uniform = vouch.rand_uniform ordinal 1 {vouch.capsule = "native_cuda.rand_uniform", vouch.kernel = "bounds_rand_uniform"} : tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.bernoulli_mask` handles rank ≤ 8
  %bernoulli = vouch.bernoulli_mask p 5.000000e-01 ordinal 2 {vouch.capsule = "native_cuda.bernoulli_mask", vouch.kernel = "bounds_bernoulli_mask"} : tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: the result (tensor<65536x65536xi1>) has 4294967296 elements, more than the UInt32 CUDA ABI allows (4294967295): its last index does not fit
  %causal = vouch.causal_mask {vouch.capsule = "native_cuda.causal_mask", vouch.kernel = "bounds_causal_mask"} : tensor<65536x65536xi1>
  %mask = vouch.target "mask" : tensor<1x1x1x1x1x1x1x1x2xi1>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+3]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.masked_softmax` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 1 has rank 9; capsule `native_cuda.masked_softmax` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.masked_softmax` handles rank ≤ 8
  %masked_softmax = vouch.masked_softmax %a, %mask axis 8 {vouch.capsule = "native_cuda.masked_softmax", vouch.kernel = "bounds_masked_softmax"} : (tensor<1x1x1x1x1x1x1x1x2xf32>, tensor<1x1x1x1x1x1x1x1x2xi1>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.cast` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.cast` handles rank ≤ 8
  %cast = vouch.cast %mask {vouch.capsule = "native_cuda.cast", vouch.kernel = "bounds_cast"} : (tensor<1x1x1x1x1x1x1x1x2xi1>) -> tensor<1x1x1x1x1x1x1x1x2xf32>
  // batch_norm and its VJP: an input beyond the UInt32 CUDA ABI.
  %bnrm = vouch.state "bn.running_mean" = zeros : tensor<65536xf32>
  %bnrv = vouch.state "bn.running_var" = ones : tensor<65536xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: operand 0 (tensor<65536x65536xf32>) has 4294967296 elements, more than the UInt32 CUDA ABI allows (4294967295): its last index does not fit
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: result 0 (tensor<65536x65536xf32>) has 4294967296 elements, more than the UInt32 CUDA ABI allows (4294967295): its last index does not fit
  %bny, %bnm, %bnr = vouch.batch_norm %big running %bnrm, %bnrv eps 1.0e-05 momentum 1.0e-01 {vouch.capsule = "native_cuda.batch_norm", vouch.kernel = "bounds_batch_norm"} : (tensor<65536x65536xf32>, tensor<65536xf32>, tensor<65536xf32>) -> (tensor<65536x65536xf32>, tensor<65536xf32>, tensor<65536xf32>)
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+3]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: operand 0 (tensor<65536x65536xf32>) has 4294967296 elements, more than the UInt32 CUDA ABI allows (4294967295): its last index does not fit
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: operand 1 (tensor<65536x65536xf32>) has 4294967296 elements, more than the UInt32 CUDA ABI allows (4294967295): its last index does not fit
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: the result (tensor<65536x65536xf32>) has 4294967296 elements, more than the UInt32 CUDA ABI allows (4294967295): its last index does not fit
  %bndx = vouch.batch_norm_grad %big, %big, %bnm, %bnr {vouch.capsule = "native_cuda.batch_norm_grad", vouch.kernel = "bounds_batch_norm_grad"} : (tensor<65536x65536xf32>, tensor<65536x65536xf32>, tensor<65536xf32>, tensor<65536xf32>) -> tensor<65536x65536xf32>
  // The fused attention kernels: heads of at most 256 features (q's, v's).
  %wq = vouch.input "wq" : tensor<2x3x300xf32>
  %wv = vouch.input "wv" : tensor<2x3x257xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: q's heads have 300 features; capsule `native_cuda.flash_attention` handles at most 256 (build with --attention composed)
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: v's heads have 257 features; capsule `native_cuda.flash_attention` handles at most 256 (build with --attention composed)
  %fo, %flse = vouch.flash_attention %wq, %wq, %wv causal scale 0.5 {vouch.capsule = "native_cuda.flash_attention", vouch.kernel = "bounds_flash_attention"} : (tensor<2x3x300xf32>, tensor<2x3x300xf32>, tensor<2x3x257xf32>) -> (tensor<2x3x257xf32>, tensor<2x3xf32>)
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: q's heads have 300 features; capsule `native_cuda.flash_attention_grad` handles at most 256 (build with --attention composed)
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: v's heads have 257 features; capsule `native_cuda.flash_attention_grad` handles at most 256 (build with --attention composed)
  %dq, %dk, %dv = vouch.flash_attention_grad %fo, %wq, %wq, %wv, %fo, %flse causal scale 0.5 {vouch.capsule = "native_cuda.flash_attention_grad", vouch.kernel = "bounds_flash_attention_grad"} : (tensor<2x3x257xf32>, tensor<2x3x300xf32>, tensor<2x3x300xf32>, tensor<2x3x257xf32>, tensor<2x3x257xf32>, tensor<2x3xf32>) -> (tensor<2x3x300xf32>, tensor<2x3x300xf32>, tensor<2x3x257xf32>)
  // The packed form: heads of qkv [..., T, 3·H·d], d = 300.
  %wqkv = vouch.input "wqkv" : tensor<2x3x900xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: q's heads have 300 features; capsule `native_cuda.qkv_attention` handles at most 256 (build with --attention composed)
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: v's heads have 300 features; capsule `native_cuda.qkv_attention` handles at most 256 (build with --attention composed)
  %po, %plse = vouch.qkv_attention %wqkv heads 1 causal scale 0.5 {vouch.capsule = "native_cuda.qkv_attention", vouch.kernel = "bounds_qkv_attention"} : (tensor<2x3x900xf32>) -> (tensor<2x3x300xf32>, tensor<2x1x3xf32>)
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: q's heads have 300 features; capsule `native_cuda.qkv_attention_grad` handles at most 256 (build with --attention composed)
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: v's heads have 300 features; capsule `native_cuda.qkv_attention_grad` handles at most 256 (build with --attention composed)
  %pdqkv = vouch.qkv_attention_grad %po, %wqkv, %po, %plse heads 1 causal scale 0.5 {vouch.capsule = "native_cuda.qkv_attention_grad", vouch.kernel = "bounds_qkv_attention_grad"} : (tensor<2x3x300xf32>, tensor<2x3x900xf32>, tensor<2x3x300xf32>, tensor<2x1x3xf32>) -> tensor<2x3x900xf32>
  // Pooling: the counts its kernels form are checked one by one
  // (IndexCountsOpInterface). A padded extent past the ABI, though every
  // tensor's extents and element count fit:
  %line = vouch.input "line" : tensor<1x1x4294967295xf32>
  %pooled = vouch.input "pooled" : tensor<1x1x2147483648xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: the padded extent of spatial axis 0 of vouch.max_pool is 4294967297, more than the UInt32 CUDA ABI allows (4294967295): its kernels index with it
  %max_pool = vouch.max_pool %line kernel [2] stride [2] padding [1] {vouch.capsule = "native_cuda.max_pool", vouch.kernel = "bounds_max_pool"} : (tensor<1x1x4294967295xf32>) -> tensor<1x1x2147483648xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: the padded extent of spatial axis 0 of vouch.max_pool_grad is 4294967297, more than the UInt32 CUDA ABI allows (4294967295): its kernels index with it
  %max_pool_grad = vouch.max_pool_grad %pooled, %line kernel [2] stride [2] padding [1] {vouch.capsule = "native_cuda.max_pool_grad", vouch.kernel = "bounds_max_pool_grad"} : (tensor<1x1x2147483648xf32>, tensor<1x1x4294967295xf32>) -> tensor<1x1x4294967295xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: the padded extent of spatial axis 0 of vouch.avg_pool is 4294967297, more than the UInt32 CUDA ABI allows (4294967295): its kernels index with it
  %avg_pool = vouch.avg_pool %line kernel [2] stride [2] padding [1] count_include_pad {vouch.capsule = "native_cuda.avg_pool", vouch.kernel = "bounds_avg_pool"} : (tensor<1x1x4294967295xf32>) -> tensor<1x1x2147483648xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: the padded extent of spatial axis 0 of vouch.avg_pool_grad is 4294967297, more than the UInt32 CUDA ABI allows (4294967295): its kernels index with it
  %avg_pool_grad = vouch.avg_pool_grad %pooled kernel [2] stride [2] padding [1] {vouch.capsule = "native_cuda.avg_pool_grad", vouch.kernel = "bounds_avg_pool_grad"} : (tensor<1x1x2147483648xf32>) -> tensor<1x1x4294967295xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: the padded extent of spatial axis 0 of vouch.smooth_max_pool is 4294967297, more than the UInt32 CUDA ABI allows (4294967295): its kernels index with it
  %smooth_max_pool = vouch.smooth_max_pool %line kernel [2] stride [2] padding [1] beta 1.0 {vouch.capsule = "native_cuda.smooth_max_pool", vouch.kernel = "bounds_smooth_max_pool"} : (tensor<1x1x4294967295xf32>) -> tensor<1x1x2147483648xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: the padded extent of spatial axis 0 of vouch.smooth_max_pool_grad is 4294967297, more than the UInt32 CUDA ABI allows (4294967295): its kernels index with it
  %smooth_max_pool_grad = vouch.smooth_max_pool_grad %pooled, %line, %pooled kernel [2] stride [2] padding [1] beta 1.0 {vouch.capsule = "native_cuda.smooth_max_pool_grad", vouch.kernel = "bounds_smooth_max_pool_grad"} : (tensor<1x1x2147483648xf32>, tensor<1x1x4294967295xf32>, tensor<1x1x2147483648xf32>) -> tensor<1x1x4294967295xf32>
  // A 2-D plane beyond the ABI: its spatial product and its window's volume
  // are reported on their own, beside the tensor's element count.
  %plane = vouch.input "plane" : tensor<1x1x65536x65537xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+3]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: operand 0 (tensor<1x1x65536x65537xf32>) has 4295032832 elements, more than the UInt32 CUDA ABI allows (4294967295): its last index does not fit
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: the input's spatial product of vouch.max_pool is 4295032832, more than the UInt32 CUDA ABI allows (4294967295): its kernels index with it
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: the window's volume (the kernel's product) of vouch.max_pool is 4295032832, more than the UInt32 CUDA ABI allows (4294967295): its kernels index with it
  %whole = vouch.max_pool %plane kernel [65536, 65537] stride [1, 1] padding [0, 0] {vouch.capsule = "native_cuda.max_pool", vouch.kernel = "bounds_max_pool_whole"} : (tensor<1x1x65536x65537xf32>) -> tensor<1x1x1x1xf32>
  // A convolution's window geometry (IndexCountsOpInterface): an image batch of
  // no entries has no element, so every tensor's count passes, but its
  // kernels would still index 65536·65536 positions (and windows) per image.
  // The gate's rule for every tensor says so too (an empty tensor's non-zero
  // extents): each operand and result below.
  %empty = vouch.input "empty" : tensor<0x1x65536x65536xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+5]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: operand 0 (tensor<0x1x65536x65536xf32>) is empty, but its non-zero extents multiply to more than the UInt32 CUDA ABI allows (4294967295): an index over them does not fit
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+4]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: the result (tensor<1x1x0x65536x65536xf32>) is empty, but its non-zero extents multiply to more than the UInt32 CUDA ABI allows (4294967295): an index over them does not fit
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+3]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: the image's spatial positions (product of [65536, 65536]) of vouch.im2col is 4294967296, more than the UInt32 CUDA ABI allows (4294967295): its kernels index with it
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: a batch entry's elements (C · spatial positions) of vouch.im2col is 4294967296, more than the UInt32 CUDA ABI allows (4294967295): its kernels index with it
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: the windows per image (product of the grid [65536, 65536]) of vouch.im2col is 4294967296, more than the UInt32 CUDA ABI allows (4294967295): its kernels index with it
  %columns = vouch.im2col %empty kernel [1, 1] stride [1, 1] padding [0, 0] dilation [1, 1] groups 1 {vouch.capsule = "native_cuda.im2col", vouch.kernel = "bounds_im2col"} : (tensor<0x1x65536x65536xf32>) -> tensor<1x1x0x65536x65536xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+5]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: operand 0 (tensor<1x1x0x65536x65536xf32>) is empty, but its non-zero extents multiply to more than the UInt32 CUDA ABI allows (4294967295): an index over them does not fit
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+4]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: the result (tensor<0x1x65536x65536xf32>) is empty, but its non-zero extents multiply to more than the UInt32 CUDA ABI allows (4294967295): an index over them does not fit
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+3]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: the image's spatial positions (product of [65536, 65536]) of vouch.col2im is 4294967296, more than the UInt32 CUDA ABI allows (4294967295): its kernels index with it
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: a batch entry's elements (C · spatial positions) of vouch.col2im is 4294967296, more than the UInt32 CUDA ABI allows (4294967295): its kernels index with it
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: the windows per image (product of the grid [65536, 65536]) of vouch.col2im is 4294967296, more than the UInt32 CUDA ABI allows (4294967295): its kernels index with it
  %image = vouch.col2im %columns kernel [1, 1] stride [1, 1] padding [0, 0] dilation [1, 1] groups 1 {vouch.capsule = "native_cuda.col2im", vouch.kernel = "bounds_col2im"} : (tensor<1x1x0x65536x65536xf32>) -> tensor<0x1x65536x65536xf32>
  // col2im_matmul's columns are never a value: its grid attribute and result
  // carry the same counts.
  %one = vouch.input "one" : tensor<1x1xf32>
  %none = vouch.input "none" : tensor<1x0xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+4]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: the result (tensor<0x1x65536x65536xf32>) is empty, but its non-zero extents multiply to more than the UInt32 CUDA ABI allows (4294967295): an index over them does not fit
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+3]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: the image's spatial positions (product of [65536, 65536]) of vouch.col2im_matmul is 4294967296, more than the UInt32 CUDA ABI allows (4294967295): its kernels index with it
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: a batch entry's elements (C · spatial positions) of vouch.col2im_matmul is 4294967296, more than the UInt32 CUDA ABI allows (4294967295): its kernels index with it
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}uint32-abi]: the windows per image (product of the grid [65536, 65536]) of vouch.col2im_matmul is 4294967296, more than the UInt32 CUDA ABI allows (4294967295): its kernels index with it
  %folded = vouch.col2im_matmul %one, %none kernel [1, 1] stride [1, 1] padding [0, 0] dilation [1, 1] grid [65536, 65536] groups 1 {vouch.capsule = "native_cuda.col2im_matmul", vouch.kernel = "bounds_col2im_matmul"} : (tensor<1x1xf32>, tensor<1x0xf32>) -> tensor<0x1x65536x65536xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+2]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: operand 0 has rank 9; capsule `native_cuda.round_bf16` handles rank ≤ 8
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}shape]: the result has rank 9; capsule `native_cuda.round_bf16` handles rank ≤ 8
  %r9 = vouch.round_bf16 %a {vouch.capsule = "native_cuda.round_bf16", vouch.kernel = "bounds_round_bf16"} : (tensor<1x1x1x1x1x1x1x1x2xf32>) -> tensor<1x1x1x1x1x1x1x1x2xbf16>
  // A bf16 value is read only by a library product under bf16 products: not by
  // vouch's own matmul kernel, nor by cuBLAS under this profile's fp32 products.
  %wt = vouch.input "wt" : tensor<2x3xf32>
  %wb = vouch.round_bf16 %w {vouch.capsule = "native_cuda.round_bf16", vouch.kernel = "bounds_round_w"} : (tensor<3x2xf32>) -> tensor<3x2xbf16>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}layout]: operand 0 is bf16, which capsule `native_cuda.matmul` does not read (under products=bf16 cuBLAS and cuBLASLt products read bf16 operands, and qkv_attention's kernels their qkv where its heads have at most 64 features)
  %nm = vouch.matmul %wb, %wt {vouch.capsule = "native_cuda.matmul", vouch.kernel = "bounds_bf16_native"} : (tensor<3x2xbf16>, tensor<2x3xf32>) -> tensor<3x3xf32>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}layout]: operand 0 is bf16, which capsule `cublas.matmul` does not read (under products=bf16 cuBLAS and cuBLASLt products read bf16 operands, and qkv_attention's kernels their qkv where its heads have at most 64 features)
  %cm = vouch.matmul %wb, %wt {vouch.capsule = "cublas.matmul", vouch.kernel = "bounds_bf16_fp32"} : (tensor<3x2xbf16>, tensor<2x3xf32>) -> tensor<3x3xf32>
  // Nor by qkv_attention's kernels under this profile's fp32 products, though
  // its heads (8 features) are attention64.cuh's.
  %qkv = vouch.input "qkv" : tensor<1x4x48xf32>
  %qb = vouch.round_bf16 %qkv {vouch.capsule = "native_cuda.round_bf16", vouch.kernel = "bounds_round_qkv"} : (tensor<1x4x48xf32>) -> tensor<1x4x48xbf16>
  // CHECK-DAG: gate-bounds.mlir:[[@LINE+1]]:{{[0-9]+}}: error: assurance gate {{\[}}layout]: operand 0 is bf16, which capsule `native_cuda.qkv_attention` does not read (under products=bf16 cuBLAS and cuBLASLt products read bf16 operands, and qkv_attention's kernels their qkv where its heads have at most 64 features)
  %qo, %ql = vouch.qkv_attention %qb heads 2 causal scale 0.5 {vouch.capsule = "native_cuda.qkv_attention", vouch.kernel = "bounds_bf16_qkv"} : (tensor<1x4x48xbf16>) -> (tensor<1x4x16xf32>, tensor<1x2x4xf32>)
}

// The summary comes last and counts every failure above, no more.
// CHECK: gate-bounds.mlir:{{[0-9]+}}:1: error: assurance gate rejected model `bounds` under profile `checked_cuda`: 161 failed obligations (layout ×3, shape ×122, uint32-abi ×36)
