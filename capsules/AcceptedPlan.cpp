//===- AcceptedPlan.cpp - what the assurance gate hands to codegen -*- C++ -*-===//
#include "capsules/AcceptedPlan.h"

#include <array>
#include <cassert>

namespace vouch::capsules {

std::string_view toString(Obligation o) {
  static constexpr std::array<std::string_view, 14> names = {
      "profile", "capsule", "shape",       "uint32-abi", "layout",
      "value",   "identity", "availability", "trust",      "numerics",
      "vjp",     "determinism", "evidence",  "symbol"};
  return names[static_cast<size_t>(o)];
}

std::string_view toString(Direction d) {
  return d == Direction::Forward ? "forward" : "backward";
}

AcceptedGraphPlan::AcceptedGraphPlan(std::string model, BackendProfile profile,
                                     const GateOptions &options,
                                     std::vector<PlannedOp> ops,
                                     std::vector<StepWork> stepWork,
                                     std::vector<KernelCapsule> capsules)
    : model_(std::move(model)), profile_(std::move(profile)),
      deterministic_(options.deterministic),
      requireEvidence_(options.requireEvidence), ops_(std::move(ops)),
      stepWork_(std::move(stepWork)), capsules_(std::move(capsules)) {}

namespace {
const KernelCapsule &named(const std::vector<KernelCapsule> &capsules,
                           const std::string &name) {
  for (const KernelCapsule &c : capsules)
    if (c.name == name)
      return c;
  assert(false && "the gate keeps every capsule the plan uses");
  return capsules.front();
}
} // namespace

const KernelCapsule &AcceptedGraphPlan::capsule(const PlannedOp &op) const {
  return named(capsules_, op.capsule);
}

const KernelCapsule &AcceptedGraphPlan::capsule(const StepWork &work) const {
  return named(capsules_, work.capsule);
}

std::vector<CoalescedGroup> AcceptedGraphPlan::coalesced() const {
  std::vector<CoalescedGroup> groups;
  for (size_t i = 0; i < ops_.size(); ++i) {
    if (!groups.empty() && groups.back().capsule == ops_[i].capsule) {
      ++groups.back().count;
      continue;
    }
    groups.push_back({ops_[i].capsule, i, 1});
  }
  return groups;
}

} // namespace vouch::capsules
