//===- ModelData.h - feeding a model to the reference interpreter -*- C++ -*-===//
//
// `vouch run --interpret` starts from what a compiled executable would: the
// runtime's dataset and seeded params (runtime/model_data.h) for the
// model's description (codegen/ModelDescription.h). This file only maps a
// batch of that dataset onto the model's input and target.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_TOOLS_MODELDATA_H
#define VOUCH_TOOLS_MODELDATA_H

#include <map>
#include <string>

#include "ir/VouchOps.h"
#include "passes/Interpreter.h"
#include "runtime/dataset.h"

namespace vouch::driver {

bool parseSeed(const std::string &text, unsigned long long &seed);

/// Feeds rows [b·batch, (b+1)·batch) to the model's input and target (the
/// model has one of each: describeModel checked it).
bool feedBatch(ModelOp model, const rt::Dataset &data, int64_t batchIndex,
               std::map<std::string, HostTensor> &feeds, std::string &error);

} // namespace vouch::driver

#endif // VOUCH_TOOLS_MODELDATA_H
