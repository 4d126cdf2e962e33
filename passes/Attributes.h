//===- Attributes.h - attribute names the passes agree on ------*- C++ -*-===//
//
// Passes communicate through these discardable attributes; codegen and the
// gate read them back. One list, so a name cannot drift between writers.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_PASSES_ATTRIBUTES_H
#define VOUCH_PASSES_ATTRIBUTES_H

namespace vouch {

/// vouch-autodiff: forward node id / the node a backward op belongs to.
inline constexpr const char *kNodeAttr = "vouch.node";
inline constexpr const char *kVjpOfAttr = "vouch.vjp_of";
/// vouch-fuse-pointwise: the fused kernel an op runs in.
inline constexpr const char *kFusionGroupAttr = "vouch.fusion_group";
/// vouch-plan: the capsule and kernel symbol of an op.
inline constexpr const char *kCapsuleAttr = "vouch.capsule";
inline constexpr const char *kKernelAttr = "vouch.kernel";

} // namespace vouch

#endif // VOUCH_PASSES_ATTRIBUTES_H
