//===- Passes.h - every vouch pass ------------------------------*- C++ -*-===//
#ifndef VOUCH_PASSES_PASSES_H
#define VOUCH_PASSES_PASSES_H

#include <memory>

#include "ir/VouchOps.h"
#include "mlir/Pass/Pass.h"

namespace vouch {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// Attribute names shared by autodiff, codegen and the tape.
inline constexpr const char *kNodeAttr = "vouch.node";
inline constexpr const char *kVjpOfAttr = "vouch.vjp_of";

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace vouch

#endif // VOUCH_PASSES_PASSES_H
