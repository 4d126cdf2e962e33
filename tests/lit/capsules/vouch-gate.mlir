// RUN: %vouch-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(vouch.model(vouch-gate))' | FileCheck %s

// The gate reads what planning recorded (vouch.profile on the model,
// vouch.capsule and vouch.kernel on each op), written out here by hand. An
// accepted model passes through unchanged.

// CHECK-LABEL: vouch.model "accepted"
// CHECK: vouch.relu {{.*}}vouch.capsule = "native_cuda.relu"
vouch.model "accepted" attributes {batch = 1 : i64, vouch.profile = "checked_cuda"} {
  %a = vouch.input "a" : tensor<4xf32>
  %r = vouch.relu %a {vouch.capsule = "native_cuda.relu", vouch.kernel = "accepted_n0_relu"} : (tensor<4xf32>) -> tensor<4xf32>
  vouch.output "r" %r : tensor<4xf32>
}

// -----

// A tensor of 2^32 elements does not fit the UInt32 CUDA ABI: every value
// of the op is reported, and so is the missing kernel symbol, then the
// summary.

// expected-error @+1 {{assurance gate rejected model `big` under profile `checked_cuda`: 4 failed obligations (symbol, uint32-abi ×3)}}
vouch.model "big" attributes {batch = 1 : i64, vouch.profile = "checked_cuda"} {
  %a = vouch.input "a" : tensor<65536x65536xf32>
  // expected-error @+4 {{assurance gate [uint32-abi]: operand 0 (tensor<65536x65536xf32>) has 4294967296 elements, more than the UInt32 CUDA ABI allows (4294967295): its last index does not fit}}
  // expected-error @+3 {{assurance gate [uint32-abi]: operand 1 (tensor<65536x65536xf32>) has 4294967296 elements, more than the UInt32 CUDA ABI allows (4294967295): its last index does not fit}}
  // expected-error @+2 {{assurance gate [uint32-abi]: the result (tensor<65536x65536xf32>) has 4294967296 elements, more than the UInt32 CUDA ABI allows (4294967295): its last index does not fit}}
  // expected-error @+1 {{assurance gate [symbol]: the op has no kernel symbol (vouch.kernel)}}
  %b = vouch.add %a, %a {vouch.capsule = "native_cuda.add"} : (tensor<65536x65536xf32>, tensor<65536x65536xf32>) -> tensor<65536x65536xf32>
  vouch.output "b" %b : tensor<65536x65536xf32>
}

// -----

// An empty tensor (a zero channel count) whose other extents multiply past
// the UInt32 CUDA ABI is refused as well: the zero must not hide them.

// expected-error @+1 {{assurance gate rejected model `empty` under profile `checked_cuda`: 2 failed obligations (uint32-abi ×2)}}
vouch.model "empty" attributes {batch = 1 : i64, vouch.profile = "checked_cuda"} {
  %a = vouch.input "a" : tensor<0x65536x65536xf32>
  // expected-error @+2 {{assurance gate [uint32-abi]: operand 0 (tensor<0x65536x65536xf32>) is empty, but its non-zero extents multiply to more than the UInt32 CUDA ABI allows (4294967295): an index over them does not fit}}
  // expected-error @+1 {{assurance gate [uint32-abi]: the result (tensor<0x65536x65536xf32>) is empty, but its non-zero extents multiply to more than the UInt32 CUDA ABI allows (4294967295): an index over them does not fit}}
  %b = vouch.relu %a {vouch.capsule = "native_cuda.relu", vouch.kernel = "empty_n0_relu"} : (tensor<0x65536x65536xf32>) -> tensor<0x65536x65536xf32>
  vouch.output "b" %b : tensor<0x65536x65536xf32>
}

// -----

// An op planning found no capsule for, and a capsule of another op and
// device: each failure at its op, all of them.

// expected-error @+1 {{assurance gate rejected model `wrong` under profile `checked_cuda`: 4 failed obligations (capsule, identity ×3)}}
vouch.model "wrong" attributes {batch = 1 : i64, vouch.profile = "checked_cuda"} {
  %a = vouch.input "a" : tensor<4xf32>
  // expected-error @+1 {{assurance gate [capsule]: no capsule for vouch.relu on device cuda under profile `checked_cuda` (providers tried: native-cuda, cublaslt, cublas, cufft)}}
  %r = vouch.relu %a {vouch.kernel = "wrong_n0_relu"} : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+3 {{assurance gate [identity]: capsule `reference.add` implements vouch.add, not vouch.step}}
  // expected-error @+2 {{assurance gate [identity]: capsule `reference.add` runs on device cpu, but profile `checked_cuda` targets cuda}}
  // expected-error @+1 {{assurance gate [identity]: profile `checked_cuda` does not use provider reference (capsule `reference.add`); it uses native-cuda, cublaslt, cublas, cufft}}
  %s = vouch.step %r {vouch.capsule = "reference.add", vouch.kernel = "wrong_n1_step"} : (tensor<4xf32>) -> tensor<4xf32>
  vouch.output "s" %s : tensor<4xf32>
}

// -----

// libtorch_forward_cuda is selectable, and rejected while no LibTorch
// provider is linked into the build.

// expected-error @+2 {{assurance gate [profile]: profile `libtorch_forward_cuda` needs provider `libtorch`, but no LibTorch provider is linked into this build}}
// expected-error @+1 {{assurance gate rejected model `torch` under profile `libtorch_forward_cuda`: 1 failed obligation (profile)}}
vouch.model "torch" attributes {batch = 1 : i64, vouch.profile = "libtorch_forward_cuda"} {
  %a = vouch.input "a" : tensor<4xf32>
  %r = vouch.relu %a {vouch.capsule = "native_cuda.relu", vouch.kernel = "torch_n0_relu"} : (tensor<4xf32>) -> tensor<4xf32>
  vouch.output "r" %r : tensor<4xf32>
}

// -----

// Without vouch-plan's record and without a profile option there is nothing
// to gate against.

// expected-error @+1 {{vouch-gate needs a profile: run vouch-plan first or pass profile=}}
vouch.model "unplanned" attributes {batch = 1 : i64} {
  %a = vouch.input "a" : tensor<4xf32>
  %r = vouch.relu %a : (tensor<4xf32>) -> tensor<4xf32>
  vouch.output "r" %r : tensor<4xf32>
}
