//===- Binding.cpp - a capsule bound to the handler that runs it -*- C++ -*-===//
#include "capsules/Binding.h"

#include <vector>

namespace vouch::capsules {

Expected<ExecutableKernel> ExecutableKernel::bind(const KernelCapsule &capsule,
                                                  const KernelHandler &handler) {
  std::vector<std::string> differ;
  if (handler.op != capsule.op)
    differ.push_back("op");
  if (handler.provider != capsule.provider)
    differ.push_back("provider");
  if (handler.device != capsule.device)
    differ.push_back("device");
  if (differ.empty())
    return ExecutableKernel(capsule, handler);
  auto identity = [](const std::string &op, Provider p, Device d) {
    return "(op=" + op + ", provider=" + std::string(toString(p)) +
           ", device=" + std::string(toString(d)) + ")";
  };
  std::string fields;
  for (size_t i = 0; i < differ.size(); ++i)
    fields += (i ? ", " : "") + differ[i];
  return Error{"handler `" + handler.name + "` " +
               identity(handler.op, handler.provider, handler.device) +
               " cannot run capsule `" + capsule.name + "` " +
               identity(capsule.op, capsule.provider, capsule.device) + ": " +
               fields + (differ.size() == 1 ? " differs" : " differ")};
}

} // namespace vouch::capsules
