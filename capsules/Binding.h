//===- Binding.h - a capsule bound to the handler that runs it --*- C++ -*-===//
//
// The seed's ExecutableKernel (5.3.3): a capsule and a handler whose op,
// provider and device identities agree. Lean states the agreement as proof
// fields; here `bind` is the only way to make one, and it checks. Codegen
// binds each planned op's capsule to the kernel recipe that emits its step
// (codegen/ProgramEmitter.cpp), so a recipe cannot silently run another
// provider or device than the plan chose.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CAPSULES_BINDING_H
#define VOUCH_CAPSULES_BINDING_H

#include <string>

#include "capsules/Capsule.h"

namespace vouch::capsules {

/// What executes a capsule: its identity, nothing more (the executing code
/// belongs to codegen or the runtime).
struct KernelHandler {
  std::string name;
  std::string op;
  Provider provider = Provider::Reference;
  Device device = Device::Cpu;
};

class ExecutableKernel {
public:
  /// Binds `handler` to `capsule` if op, provider and device all agree;
  /// otherwise the error names both identities and every field that
  /// differs.
  static Expected<ExecutableKernel> bind(const KernelCapsule &capsule,
                                         const KernelHandler &handler);

  const KernelCapsule &capsule() const { return capsule_; }
  const KernelHandler &handler() const { return handler_; }

private:
  ExecutableKernel(KernelCapsule capsule, KernelHandler handler)
      : capsule_(std::move(capsule)), handler_(std::move(handler)) {}
  KernelCapsule capsule_;
  KernelHandler handler_;
};

} // namespace vouch::capsules

#endif // VOUCH_CAPSULES_BINDING_H
