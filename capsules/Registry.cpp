//===- Registry.cpp - every capsule the planner may choose from -*- C++ -*-===//
#include "capsules/Registry.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "capsules/Catalog.h"

namespace vouch::capsules {

namespace {

std::string identity(const KernelCapsule &c) {
  return "(op=" + c.op + ", provider=" + std::string(toString(c.provider)) +
         ", device=" + std::string(toString(c.device)) + ")";
}

} // namespace

Status CapsuleRegistry::add(KernelCapsule capsule) {
  if (find(capsule.name))
    return Error{"capsule `" + capsule.name + "` is already registered"};
  if (const KernelCapsule *same =
          lookup(capsule.op, capsule.device, capsule.provider))
    return Error{"capsule `" + capsule.name + "` has the identity " +
                 identity(capsule) + " of registered capsule `" + same->name +
                 "`"};
  capsules_.push_back(std::move(capsule));
  return Status::success();
}

Status CapsuleRegistry::remove(std::string_view name) {
  for (auto it = capsules_.begin(); it != capsules_.end(); ++it)
    if (it->name == name) {
      capsules_.erase(it);
      return Status::success();
    }
  return Error{"capsule `" + std::string(name) + "` is not registered"};
}

const KernelCapsule *CapsuleRegistry::find(std::string_view name) const {
  for (const KernelCapsule &c : capsules_)
    if (c.name == name)
      return &c;
  return nullptr;
}

const KernelCapsule *CapsuleRegistry::lookup(std::string_view op, Device device,
                                             Provider provider) const {
  for (const KernelCapsule &c : capsules_)
    if (c.op == op && c.device == device && c.provider == provider)
      return &c;
  return nullptr;
}

std::vector<const KernelCapsule *>
CapsuleRegistry::forOp(std::string_view op, Device device) const {
  std::vector<const KernelCapsule *> out;
  for (const KernelCapsule &c : capsules_)
    if (c.op == op && c.device == device)
      out.push_back(&c);
  return out;
}

CapsuleRegistry makeDefaultRegistry() {
  CapsuleRegistry registry;
  for (auto catalog : {referenceCatalog(), cudaCatalog(), stepCatalog()})
    for (KernelCapsule &c : catalog) {
      Status added = registry.add(std::move(c));
      if (!added) { // the catalogs are code: a clash is a programming error
        std::fprintf(stderr, "vouch: %s\n", added.error().c_str());
        std::abort();
      }
    }
  return registry;
}

const CapsuleRegistry &defaultRegistry() {
  static const CapsuleRegistry registry = makeDefaultRegistry();
  return registry;
}

} // namespace vouch::capsules
