//===- ModelData.h - params and data of a model, for the driver -*- C++ -*-===//
//
// Connects a vouch.model's declarations (param initialisers, the data
// clause) with the runtime's seeded initialisation and dataset loaders, so
// the interpreter starts from exactly the parameters and batches a compiled
// executable would.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_TOOLS_MODELDATA_H
#define VOUCH_TOOLS_MODELDATA_H

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/VouchOps.h"
#include "passes/Interpreter.h"
#include "runtime/dataset.h"
#include "runtime/init.h"
#include "runtime/safetensors.h"

namespace vouch::driver {

bool parseSeed(const std::string &text, unsigned long long &seed);

/// The runtime initialiser a vouch.param names.
rt::InitSpec initSpecOf(ParamOp param);

/// Every param initialised from `seed` in program order (param i draws
/// nextSeed(seed, i)).
std::vector<rt::NamedTensor> initialParams(ModelOp model,
                                           unsigned long long seed);

/// The model's dataset: `overridePath` if non-empty, else its data clause.
std::optional<rt::Dataset> loadModelData(ModelOp model,
                                         const std::string &overridePath,
                                         std::string &error);

/// Feeds rows [b·batch, (b+1)·batch) to the model's single input and target.
bool feedBatch(ModelOp model, const rt::Dataset &data, int64_t batchIndex,
               std::map<std::string, HostTensor> &feeds, std::string &error);

} // namespace vouch::driver

#endif // VOUCH_TOOLS_MODELDATA_H
