// TEMPORARY hand-written op table (replaced by the generated one from ODS).
#include "ir/OpTable.h"

namespace vouch {

std::string_view toString(OpFamily family) {
  switch (family) {
  case OpFamily::Structural: return "structural";
  case OpFamily::Generator: return "generator";
  case OpFamily::Pointwise: return "pointwise";
  case OpFamily::View: return "view";
  case OpFamily::Index: return "index";
  case OpFamily::Reduction: return "reduction";
  case OpFamily::Loss: return "loss";
  case OpFamily::Gemm: return "gemm";
  }
  return "";
}

const std::vector<OpFacts> &opTable() {
  using F = OpFamily;
  static const std::vector<OpFacts> rows = {
      {"fill", F::Generator, "", "", false, "", "", "native-cuda", "", "", ""},
      {"matmul", F::Gemm, "", "", true, "matmul", "", "cublas,cublaslt,native-cuda", "", "", ""},
      {"linear", F::Gemm, "", "", true, "linear", "", "cublaslt,cublas,native-cuda", "", "", ""},
      {"add", F::Pointwise, "", "", true, "add", "", "native-cuda", "", "", ""},
      {"sub", F::Pointwise, "", "", true, "sub", "", "native-cuda", "", "", ""},
      {"mul", F::Pointwise, "", "", true, "mul", "", "native-cuda", "", "", ""},
      {"relu", F::Pointwise, "", "", true, "relu", "", "native-cuda", "", "", ""},
      {"step", F::Pointwise, "", "", true, "", "", "native-cuda", "", "", ""},
      {"scale", F::Pointwise, "", "", true, "scale", "", "native-cuda", "", "", ""},
      {"broadcast", F::Index, "", "", true, "broadcast", "", "native-cuda", "", "", ""},
      {"reshape", F::View, "", "", true, "reshape", "", "native-cuda", "", "", ""},
      {"permute", F::Index, "", "", true, "permute", "", "native-cuda", "", "", ""},
      {"reduce_sum", F::Reduction, "", "", true, "reduce_sum", "", "native-cuda", "", "", ""},
      {"reduce_mean", F::Reduction, "", "", true, "reduce_mean", "", "native-cuda", "", "", ""},
      {"mse_loss", F::Loss, "", "", true, "mse_loss", "", "native-cuda", "", "", ""},
  };
  return rows;
}

const OpFacts *findOpFacts(std::string_view mnemonic) {
  for (const OpFacts &row : opTable())
    if (row.mnemonic == mnemonic)
      return &row;
  return nullptr;
}

} // namespace vouch
