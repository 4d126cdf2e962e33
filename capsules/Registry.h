//===- Registry.h - every capsule the planner may choose from ---*- C++ -*-===//
//
// A registry holds capsule descriptions, nothing executable (seed 5.3.4:
// registry → profile + gate → accepted plan → bound handler). A name is
// registered once, and so is an identity (op, provider, device): two
// capsules claiming to be the same kernel would make reports ambiguous.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CAPSULES_REGISTRY_H
#define VOUCH_CAPSULES_REGISTRY_H

#include <string_view>
#include <vector>

#include "capsules/Capsule.h"

namespace vouch::capsules {

class CapsuleRegistry {
public:
  /// Adds a capsule; refuses a name or an (op, provider, device) identity
  /// already registered, naming both capsules.
  Status add(KernelCapsule capsule);
  /// Removes the capsule with this name (tests build registries with holes).
  Status remove(std::string_view name);

  /// Lookups return null when nothing matches. Pointers are valid until the
  /// next add or remove.
  const KernelCapsule *find(std::string_view name) const;
  const KernelCapsule *lookup(std::string_view op, Device device,
                              Provider provider) const;
  /// Every capsule for `op` on `device`, in registration order.
  std::vector<const KernelCapsule *> forOp(std::string_view op,
                                           Device device) const;
  const std::vector<KernelCapsule> &all() const { return capsules_; }

private:
  std::vector<KernelCapsule> capsules_;
};

/// The shipped catalogs (capsules/Catalog.h) in one registry.
CapsuleRegistry makeDefaultRegistry();
/// A process-wide instance of makeDefaultRegistry().
const CapsuleRegistry &defaultRegistry();

} // namespace vouch::capsules

#endif // VOUCH_CAPSULES_REGISTRY_H
