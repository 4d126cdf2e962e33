//===- GemmCall.cpp - row-major products as cuBLAS calls --------*- C++ -*-===//
#include "capsules/GemmCall.h"

namespace vouch::capsules {

GemmCall matmulCall(bool transposeLhs, bool transposeRhs, bool batched) {
  GemmCall call;
  call.function = batched ? "cublasGemmStridedBatchedEx" : "cublasGemmEx";
  call.transa = transposeRhs ? 'T' : 'N';
  call.transb = transposeLhs ? 'T' : 'N';
  call.a = "rhs";
  call.b = "lhs";
  return call;
}

GemmCall linearCall(bool hasBias) {
  // y = x·Wᵀ is matmul(x, W, transpose_rhs); rows of x beyond the last axis
  // are flattened into M, which row-major storage makes free.
  GemmCall call = matmulCall(/*transposeLhs=*/false, /*transposeRhs=*/true,
                             /*batched=*/false);
  call.function = "cublasLtMatmul";
  call.a = "weight";
  call.b = "input";
  call.epilogue = hasBias ? "BIAS" : "DEFAULT";
  return call;
}

GemmCall linearWeightGradCall() {
  // dWᵀ = inputᵀ·grad read column-major: grad [rows, out] is the column-major
  // [out, rows] that transb transposes; the epilogue sums it over k = rows.
  GemmCall call;
  call.function = "cublasLtMatmul";
  call.transa = 'N';
  call.transb = 'T';
  call.a = "input";
  call.b = "grad";
  call.epilogue = "BGRADB";
  return call;
}

std::string formatGemmCall(const GemmCall &call) {
  std::string out = call.function + "(transa=" + call.transa +
                    ", transb=" + call.transb + ", A=" + call.a +
                    ", B=" + call.b;
  if (!call.epilogue.empty())
    out += ", epilogue=" + call.epilogue;
  if (call.bf16Operands) {
    auto how = [](bool inPlace, const std::string &storedBy) {
      return inPlace ? " bf16 in place (" + storedBy + ")"
                     : std::string(" rounded to bf16 by vouch_round_bf16");
    };
    const std::string a = how(call.aInPlace, call.aStoredBy);
    const std::string b = how(call.bInPlace, call.bStoredBy);
    if (a == b)
      out += ", A/B" + a;
    else
      out += ", A" + a + ", B" + b;
    if (call.bf16Result)
      out += call.epilogue == "BIAS" ? ", bias bf16, D bf16" : ", D bf16";
  }
  if (!call.padding.empty())
    out += ", " + call.padding;
  return out + ")";
}

} // namespace vouch::capsules
