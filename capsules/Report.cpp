//===- Report.cpp - audit reports of accepted plans and rejections -*- C++ -*-===//
#include "capsules/Report.h"

#include <vector>

#include "capsules/JsonWriter.h"

namespace vouch::capsules {

namespace {

std::string str(std::string_view s) { return std::string(s); }

std::string onOff(bool b) { return b ? "on" : "off"; }

std::string acceptedTrust(AssurancePolicy policy) {
  std::string out;
  for (TrustLevel t : {TrustLevel::Verified, TrustLevel::Checked,
                       TrustLevel::Fuzzed, TrustLevel::TrustedExternal})
    if (allowsTrust(policy, t))
      out += (out.empty() ? "" : ", ") + str(toString(t));
  return out;
}

std::string abiLine(Device device) {
  if (device == Device::Cuda)
    return "every axis, index and element count fits the UInt32 CUDA ABI; "
           "cuBLAS extents fit int";
  return "host kernels index with int64; the UInt32 CUDA ABI does not apply";
}

/// `n3` for forward node 3, `b3.1` for the second backward op of node 3.
std::string nodeLabel(const PlannedOp &op) {
  if (op.direction == Direction::Forward)
    return "n" + std::to_string(op.node);
  return "b" + std::to_string(op.node) + "." + std::to_string(op.step);
}

struct NamedContract {
  const char *name;
  const ContractDescriptor *descriptor;
};

std::vector<NamedContract> contractsOf(const KernelCapsule &c) {
  return {{"shape", &c.shape},
          {"layout", &c.layout},
          {"value", &c.value},
          {"vjp", &c.vjp}};
}

/// `shape: ir/VouchOps.cpp; layout, value: runtime/cpu_kernels.h
/// vouch::rt::matmul<T>; …`: contracts sharing a provenance are listed
/// together, in contract order.
std::string provenanceLine(const KernelCapsule &c) {
  std::vector<std::pair<std::string, std::string>> groups; // where, names
  for (const NamedContract &nc : contractsOf(c)) {
    const Provenance &p = nc.descriptor->provenance;
    if (p.sourceFile.empty() && p.nativeSymbol.empty() && p.note.empty())
      continue;
    std::string where = p.sourceFile;
    if (!p.nativeSymbol.empty())
      where += (where.empty() ? "" : " ") + p.nativeSymbol;
    if (!p.note.empty())
      where += (where.empty() ? "(" : " (") + p.note + ")";
    bool merged = false;
    for (auto &[w, names] : groups)
      if (w == where) {
        names += std::string(", ") + nc.name;
        merged = true;
      }
    if (!merged)
      groups.push_back({where, nc.name});
  }
  std::string out;
  for (auto &[where, names] : groups)
    out += (out.empty() ? "" : "; ") + names + ": " + where;
  return out;
}

} // namespace

std::string renderCapsuleEntry(const KernelCapsule &c,
                               ProductPrecision products) {
  std::string out = formatCapsuleHeadline(c);
  if (c.numeric.fastestProducts != ProductPrecision::Fp32)
    out += " products=" +
           str(toString(productPrecisionOf(c.numeric, products)));
  out += "\n";
  for (const NamedContract &nc : contractsOf(c))
    out += std::string("  ") + nc.name + ": " +
           formatContract(*nc.descriptor) + "\n";
  std::string provenance = provenanceLine(c);
  if (!provenance.empty())
    out += "  provenance: " + provenance + "\n";
  return out;
}

std::string renderText(const AcceptedGraphPlan &plan) {
  const BackendProfile &profile = plan.profile();
  std::string out = "vouch report: model " + plan.model() + ", profile " +
                    profile.spec() + " (device " +
                    str(toString(profile.device)) + ")\n";
  out += "  " + profile.description + "\n";
  out += "  assurance=" + str(toString(profile.assurance)) + " (accepts " +
         acceptedTrust(profile.assurance) + ") products=" +
         str(toString(profile.products)) +
         " deterministic=" + onOff(plan.deterministic()) +
         " require-evidence=" + onOff(plan.requireEvidence()) + "\n";
  if (profile.products == ProductPrecision::Tf32)
    out += "  products=tf32: cuBLAS GEMMs, and the fused attention's f32 "
           "kernels (tensor cores), round their products' operands to TF32 "
           "(10-bit mantissa), sums in f32; a GEMM extent that is a row "
           "pitch and not a multiple of 4 is padded with zeros "
           "(vouch_repitch_f32 copies, named in the step's call); each "
           "capsule says what it computes in (products=)\n";
  if (profile.products == ProductPrecision::Bf16)
    out += "  products=bf16: cuBLAS GEMMs (their operands rounded to bf16 "
           "once each by vouch.round_bf16 steps and read in place, or, where "
           "a row-pitch extent is padded to a multiple of 8, by "
           "vouch_round_bf16 launches; read as CUDA_R_16BF; a padded output "
           "copied out by vouch_repitch_f32) and the "
           "fused attention's f32 kernels (tensor cores) round their "
           "products' operands to bf16 (8-bit mantissa), sums in f32 (a "
           "qkv_attention's qkv, where attention64.cuh takes its heads, "
           "rounded once by a vouch.round_bf16 step and loaded as bf16); "
           "storage stays f32 (activations, gradients, params, optimizer "
           "state) but for those bf16 operands; each capsule says what it "
           "computes in (products=)\n";
  out += "  abi: " + abiLine(profile.device) + "\n";

  out += "\ncapsules (one entry per capsule, at first use):\n";
  for (const KernelCapsule &c : plan.capsules())
    out += renderCapsuleEntry(c, profile.products);

  out += "\nops (in execution order):\n";
  for (const PlannedOp &op : plan.ops()) {
    out += "  " + nodeLabel(op) + " " + str(toString(op.direction)) + " " +
           op.op + " -> " + op.kernel + " [" + op.capsule + "]";
    if (!op.call.empty())
      out += " " + op.call;
    if (!op.fusion.empty())
      out += " fused=" + op.fusion;
    out += " @ " + op.location;
    if (!op.composedFrom.empty())
      out += " (" + op.composedFrom + ", " + op.form + ")";
    for (size_t i = 0; i < op.state.size(); ++i)
      out += (i ? ", " : " state=") + op.state[i];
    if (op.classes > 0 && !op.operandShapes.empty() && !op.operandShapes[0].empty())
      out += " classes=" + std::to_string(op.classes) + " of " +
             std::to_string(op.operandShapes[0].back());
    out += "\n";
  }

  if (!plan.stepWork().empty()) {
    out += "\nthe step's own work (every training step, besides the ops):\n";
    for (const StepWork &work : plan.stepWork()) {
      const Provenance &where = plan.capsule(work).value.provenance;
      out += "  " + work.role + " -> " + where.nativeSymbol + " [" +
             work.capsule + "]" +
             (where.note.empty() ? "" : ": " + where.note) + "\n";
    }
  }

  out += "\nlowering (adjacent ops with one capsule coalesced):\n";
  for (const CoalescedGroup &g : plan.coalesced()) {
    out += "  " + g.capsule + ":";
    for (size_t i = g.first; i < g.first + g.count; ++i)
      out += " " + nodeLabel(plan.ops()[i]);
    out += "\n";
  }
  return out;
}

//===----------------------------------------------------------------------===//
// JSON (docs/report.md)
//===----------------------------------------------------------------------===//

namespace {

JsonValue shapeJson(const std::vector<int64_t> &shape) {
  JsonValue a = JsonValue::array();
  for (int64_t d : shape)
    a.push(d);
  return a;
}

JsonValue contractJson(const ContractDescriptor &d) {
  JsonValue evidence = JsonValue::object();
  evidence.set("kind", toString(d.evidence.kind));
  evidence.set("reference", d.evidence.reference.empty()
                                ? JsonValue()
                                : JsonValue(d.evidence.reference));
  JsonValue provenance = JsonValue::object();
  provenance.set("source", d.provenance.sourceFile);
  provenance.set("symbol", d.provenance.nativeSymbol);
  provenance.set("note", d.provenance.note);
  JsonValue out = JsonValue::object();
  out.set("claim", d.claim);
  out.set("summary", d.summary);
  out.set("evidence", std::move(evidence));
  out.set("provenance", std::move(provenance));
  return out;
}

JsonValue capsuleJson(const KernelCapsule &c, ProductPrecision products) {
  JsonValue numeric = JsonValue::object();
  numeric.set("round", toString(c.numeric.round));
  numeric.set("subnormal", toString(c.numeric.subnormal));
  numeric.set("contract", toString(c.numeric.contract));
  numeric.set("reduce", toString(c.numeric.reduce));
  numeric.set("fastest_products", toString(c.numeric.fastestProducts));
  numeric.set("products",
              toString(productPrecisionOf(c.numeric, products)));
  numeric.set("text", formatNumericalPolicy(c.numeric));
  JsonValue contracts = JsonValue::object();
  for (const NamedContract &nc : contractsOf(c))
    contracts.set(nc.name, contractJson(*nc.descriptor));
  JsonValue out = JsonValue::object();
  out.set("name", c.name);
  out.set("op", c.op);
  out.set("provider", toString(c.provider));
  out.set("device", toString(c.device));
  out.set("trust", toString(c.trust));
  out.set("supports_forward", c.supportsForward);
  out.set("vjp", toString(c.vjpMode));
  out.set("numeric", std::move(numeric));
  out.set("max_rank", c.maxRank);
  out.set("accepts_transpose_flags", c.acceptsTransposeFlags);
  out.set("contracts", std::move(contracts));
  return out;
}

JsonValue opJson(size_t index, const PlannedOp &op) {
  JsonValue operands = JsonValue::array();
  for (const auto &shape : op.operandShapes)
    operands.push(shapeJson(shape));
  JsonValue out = JsonValue::object();
  out.set("index", index);
  out.set("node", op.node);
  out.set("direction", toString(op.direction));
  out.set("step", op.step);
  out.set("op", op.op);
  out.set("capsule", op.capsule);
  out.set("kernel", op.kernel);
  out.set("fusion", op.fusion.empty() ? JsonValue() : JsonValue(op.fusion));
  out.set("location", op.location);
  out.set("composed_from", op.composedFrom.empty() ? JsonValue()
                                                   : JsonValue(op.composedFrom));
  out.set("form", op.form.empty() ? JsonValue() : JsonValue(op.form));
  out.set("element_type", op.elementType);
  JsonValue results = JsonValue::array();
  for (const auto &shape : op.resultShapes)
    results.push(shapeJson(shape));
  out.set("operand_shapes", std::move(operands));
  out.set("result_shapes", std::move(results));
  out.set("transpose_lhs", op.transposeLhs);
  out.set("transpose_rhs", op.transposeRhs);
  out.set("call", op.call.empty() ? JsonValue() : JsonValue(op.call));
  JsonValue state = JsonValue::array();
  for (const std::string &name : op.state)
    state.push(name);
  out.set("state", std::move(state));
  out.set("classes", op.classes > 0 ? JsonValue(op.classes) : JsonValue());
  return out;
}

JsonValue reportHead(const std::string &model, const std::string &profile,
                     Device device, bool accepted) {
  JsonValue out = JsonValue::object();
  out.set("schema", "vouch.report/1");
  out.set("model", model);
  out.set("profile", profile);
  out.set("device", toString(device));
  out.set("accepted", accepted);
  return out;
}

} // namespace

std::string renderJson(const AcceptedGraphPlan &plan) {
  const BackendProfile &profile = plan.profile();
  JsonValue out =
      reportHead(plan.model(), profile.spec(), profile.device, true);
  out.set("assurance", toString(profile.assurance));
  JsonValue trust = JsonValue::array();
  for (TrustLevel t : {TrustLevel::Verified, TrustLevel::Checked,
                       TrustLevel::Fuzzed, TrustLevel::TrustedExternal})
    if (allowsTrust(profile.assurance, t))
      trust.push(toString(t));
  out.set("accepted_trust", std::move(trust));
  out.set("products", toString(profile.products));
  out.set("deterministic", plan.deterministic());
  out.set("require_evidence", plan.requireEvidence());
  out.set("abi", profile.device == Device::Cuda ? "uint32" : "int64");
  JsonValue capsules = JsonValue::array();
  for (const KernelCapsule &c : plan.capsules())
    capsules.push(capsuleJson(c, profile.products));
  out.set("capsules", std::move(capsules));
  JsonValue ops = JsonValue::array();
  for (size_t i = 0; i < plan.ops().size(); ++i)
    ops.push(opJson(i, plan.ops()[i]));
  out.set("ops", std::move(ops));
  JsonValue step = JsonValue::array();
  for (const StepWork &work : plan.stepWork()) {
    JsonValue item = JsonValue::object();
    item.set("role", work.role);
    item.set("capsule", work.capsule);
    item.set("kernel", plan.capsule(work).value.provenance.nativeSymbol);
    step.push(std::move(item));
  }
  out.set("step", std::move(step));
  JsonValue lowering = JsonValue::array();
  for (const CoalescedGroup &g : plan.coalesced()) {
    JsonValue group = JsonValue::object();
    group.set("capsule", g.capsule);
    group.set("first", g.first);
    group.set("count", g.count);
    lowering.push(std::move(group));
  }
  out.set("lowering", std::move(lowering));
  out.set("rejections", JsonValue::array());
  return out.print() + "\n";
}

std::string renderRejectionJson(const GateRejection &rejection) {
  JsonValue out = reportHead(rejection.model, rejection.profile,
                             rejection.device, false);
  out.set("capsules", JsonValue::array());
  out.set("ops", JsonValue::array());
  out.set("step", JsonValue::array());
  out.set("lowering", JsonValue::array());
  JsonValue failures = JsonValue::array();
  for (const GateFailure &f : rejection.failures) {
    JsonValue item = JsonValue::object();
    item.set("obligation", toString(f.obligation));
    item.set("op", f.op.empty() ? JsonValue() : JsonValue(f.op));
    item.set("location", f.location);
    item.set("message", f.message);
    failures.push(std::move(item));
  }
  out.set("rejections", std::move(failures));
  return out.print() + "\n";
}

std::string renderRejectionText(const GateRejection &rejection) {
  std::string out;
  for (const GateFailure &f : rejection.failures)
    out += f.location + ": error: [" + str(toString(f.obligation)) + "] " +
           f.message + "\n";
  out += "assurance gate rejected model `" + rejection.model +
         "` under profile `" + rejection.profile + "`: " +
         std::to_string(rejection.failures.size()) + " failed obligation" +
         (rejection.failures.size() == 1 ? "" : "s") + "\n";
  return out;
}

} // namespace vouch::capsules
