//===- VouchAttrs.cpp - a model's clauses as typed attributes -------------===//
//
// The attributes check themselves against the clause table (the signatures
// of the ODS enum cases): a train attribute holds exactly its optimizer's
// hyper-parameters, a data attribute exactly its source's arguments. The
// dictionaries IR spelled the clauses with before are read here too.
//
//===----------------------------------------------------------------------===//
#include "ir/VouchAttrs.h"

#include <cmath>

#include <string>

#include "ir/ClauseTable.h"
#include "ir/OpTable.h"
#include "ir/VouchDialect.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace vouch;

#include "ir/VouchEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "ir/VouchAttrs.cpp.inc"

void VouchDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "ir/VouchAttrs.cpp.inc"
      >();
}

namespace {

bool hasParam(const std::vector<SignatureParam> &signature, StringRef name) {
  return llvm::any_of(signature, [&](const SignatureParam &p) {
    return std::string_view(name) == p.name;
  });
}

/// Checks that exactly the signature's parameters among `present` are set.
LogicalResult
checkPresence(function_ref<InFlightDiagnostic()> emitError, StringRef callee,
              const std::vector<SignatureParam> &signature,
              ArrayRef<std::pair<StringRef, bool>> present) {
  for (auto [name, isSet] : present) {
    bool takes = hasParam(signature, name);
    if (takes && !isSet)
      return emitError() << "'" << callee << "' needs its argument '" << name
                         << "'";
    if (!takes && isSet)
      return emitError() << "'" << callee << "' takes no argument '" << name
                         << "'";
  }
  return success();
}

std::optional<double> toDouble(std::optional<APFloat> value) {
  if (!value)
    return std::nullopt;
  return value->convertToDouble();
}

std::optional<APFloat> toAPFloat(std::optional<double> value) {
  if (!value)
    return std::nullopt;
  return APFloat(*value);
}

} // namespace

std::string vouch::initKindNames() {
  std::string names;
  for (const ClauseFacts *facts : clauseCallees(ClauseKind::Initializer))
    names += (names.empty() ? "" : ", ") + std::string(facts->name);
  return names;
}

//===----------------------------------------------------------------------===//
// TrainAttr
//===----------------------------------------------------------------------===//

LogicalResult TrainAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                OptimizerKind optimizer, APFloat lr,
                                std::optional<APFloat> beta1,
                                std::optional<APFloat> beta2,
                                std::optional<APFloat> eps,
                                APFloat weightDecay,
                                std::optional<APFloat> momentum,
                                std::optional<APFloat> alpha,
                                std::optional<APFloat> lrDecay,
                                std::optional<APFloat> decayMinRank, int64_t steps,
                                int64_t logEvery, ScheduleAttr schedule,
                                std::optional<APFloat> clipGradNorm,
                                bool shuffle, std::optional<int64_t> evalEvery) {
  StringRef name = stringifyOptimizerKind(optimizer);
  if (failed(checkPresence(emitError, name,
                           clauseSignature(ClauseKind::Optimizer, name),
                           {{"lr", true},
                            {"beta1", beta1.has_value()},
                            {"beta2", beta2.has_value()},
                            {"eps", eps.has_value()},
                            {"weight_decay", true},
                            {"momentum", momentum.has_value()},
                            {"alpha", alpha.has_value()},
                            {"lr_decay", lrDecay.has_value()},
                            {"decay_min_rank", decayMinRank.has_value()}})))
    return failure();
  if (decayMinRank) {
    double rank = decayMinRank->convertToDouble();
    if (!(rank >= 0 && rank <= 8 && rank == std::floor(rank)))
      return emitError() << "decay_min_rank must be an integer in [0, 8], got "
                         << rank;
  }
  if (steps < 1 || logEvery < 1)
    return emitError() << "steps and log_every must be at least 1, got "
                       << steps << " and " << logEvery;
  if (clipGradNorm && !(clipGradNorm->convertToDouble() > 0))
    return emitError() << "clip_grad_norm must be greater than 0";
  if (evalEvery && *evalEvery < 1)
    return emitError() << "eval_every must be at least 1, got " << *evalEvery;
  return success();
}

LogicalResult ScheduleAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   ScheduleKind kind,
                                   std::optional<int64_t> stepSize,
                                   std::optional<APFloat> gamma,
                                   std::optional<int64_t> warmup,
                                   std::optional<int64_t> total,
                                   std::optional<APFloat> minLr) {
  StringRef name = stringifyScheduleKind(kind);
  if (kind == ScheduleKind::Constant)
    return emitError() << "a constant schedule is written as no schedule";
  if (failed(checkPresence(emitError, name,
                           clauseSignature(ClauseKind::Schedule, name),
                           {{"step_size", stepSize.has_value()},
                            {"gamma", gamma.has_value()},
                            {"warmup", warmup.has_value()},
                            {"total", total.has_value()},
                            {"min_lr", minLr.has_value()}})))
    return failure();
  if (stepSize && *stepSize < 1)
    return emitError() << "'step' needs step_size >= 1, got " << *stepSize;
  if (gamma && !(gamma->convertToDouble() > 0))
    return emitError() << "'" << name << "' needs gamma > 0";
  if (warmup && total && !(*warmup >= 0 && *warmup < *total))
    return emitError() << "'warmup_cosine' needs 0 <= warmup < total, got "
                       << *warmup << " and " << *total;
  if (minLr && !(minLr->convertToDouble() >= 0))
    return emitError() << "'warmup_cosine' needs min_lr >= 0";
  return success();
}

std::optional<double> TrainAttr::getHyperParameter(StringRef name) const {
  if (name == "lr")
    return getLr().convertToDouble();
  if (name == "weight_decay")
    return getWeightDecay().convertToDouble();
  if (name == "beta1")
    return toDouble(getBeta1());
  if (name == "beta2")
    return toDouble(getBeta2());
  if (name == "eps")
    return toDouble(getEps());
  if (name == "momentum")
    return toDouble(getMomentum());
  if (name == "alpha")
    return toDouble(getAlpha());
  if (name == "lr_decay")
    return toDouble(getLrDecay());
  if (name == "decay_min_rank")
    return toDouble(getDecayMinRank());
  return std::nullopt;
}

TrainAttr vouch::buildTrainAttr(MLIRContext *context, OptimizerKind optimizer,
                                const llvm::StringMap<double> &hyper,
                                int64_t steps, int64_t logEvery,
                                ScheduleAttr schedule,
                                std::optional<double> clipGradNorm,
                                bool shuffle, std::optional<int64_t> evalEvery,
                                function_ref<InFlightDiagnostic()> emitError) {
  auto get = [&](StringRef name) -> std::optional<double> {
    auto it = hyper.find(name);
    return it == hyper.end() ? std::nullopt : std::optional(it->second);
  };
  for (const auto &entry : hyper)
    if (!llvm::is_contained(
            {"lr", "beta1", "beta2", "eps", "weight_decay", "momentum",
             "alpha", "lr_decay", "decay_min_rank"},
            entry.getKey())) {
      emitError() << "unknown hyper-parameter '" << entry.getKey() << "'";
      return {};
    }
  std::optional<double> lr = get("lr"), weightDecay = get("weight_decay");
  if (!lr || !weightDecay) {
    emitError() << "'" << stringifyOptimizerKind(optimizer) << "' needs "
                << (lr ? "weight_decay" : "lr");
    return {};
  }
  return TrainAttr::getChecked(emitError, context, optimizer, APFloat(*lr),
                               toAPFloat(get("beta1")), toAPFloat(get("beta2")),
                               toAPFloat(get("eps")), APFloat(*weightDecay),
                               toAPFloat(get("momentum")),
                               toAPFloat(get("alpha")),
                               toAPFloat(get("lr_decay")),
                               toAPFloat(get("decay_min_rank")), steps, logEvery,
                               schedule, toAPFloat(clipGradNorm), shuffle,
                               evalEvery);
}

//===----------------------------------------------------------------------===//
// EvalAttr
//===----------------------------------------------------------------------===//

LogicalResult EvalAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               std::optional<APFloat> fraction, DataAttr data) {
  if (fraction.has_value() == static_cast<bool>(data))
    return emitError() << "the eval clause holds a fraction or a data source, "
                          "exactly one";
  if (fraction && !(fraction->convertToDouble() > 0 &&
                    fraction->convertToDouble() < 1))
    return emitError() << "the held-out fraction must be in (0, 1)";
  if (data && data.getKind() == DataKind::RegressionGrid)
    return emitError() << "held-out data is a file (npy, csv or tokens), not "
                          "the regression grid";
  if (data && data.getKind() == DataKind::Tokens && data.getOrder() &&
      data.getOrder().getValue() != "sequential")
    return emitError() << "held-out tokens are read in sequential windows "
                          "(order = sequential)";
  return success();
}

//===----------------------------------------------------------------------===//
// DataAttr
//===----------------------------------------------------------------------===//

LogicalResult DataAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               DataKind kind, std::optional<APFloat> lo,
                               std::optional<APFloat> hi,
                               std::optional<int64_t> n, StringAttr path,
                               DictionaryAttr files, StringAttr order) {
  StringRef name = stringifyDataKind(kind);
  // tokens' `file` is stored as `path`.
  bool tokens = kind == DataKind::Tokens;
  if (failed(checkPresence(emitError, name,
                           clauseSignature(ClauseKind::DataSource, name),
                           {{"lo", lo.has_value()},
                            {"hi", hi.has_value()},
                            {"n", n.has_value()},
                            {"path", !tokens && static_cast<bool>(path)},
                            {"file", tokens && static_cast<bool>(path)},
                            {"files", static_cast<bool>(files)},
                            {"order", static_cast<bool>(order)}})))
    return failure();
  if (order && order.getValue() != "random" &&
      order.getValue() != "sequential")
    return emitError() << "'" << name
                       << "': order is \"random\" or \"sequential\", got \""
                       << order.getValue() << "\"";
  if (lo && hi && !(lo->convertToDouble() < hi->convertToDouble()))
    return emitError() << "'" << name << "' needs lo < hi";
  if (n && *n < 1)
    return emitError() << "'" << name << "' needs n >= 1, got " << *n;
  if (path && path.getValue().empty())
    return emitError() << "'" << name << "' needs non-empty file names";
  if (files) {
    if (files.empty())
      return emitError() << "'" << name << "' needs a file per input and target";
    for (NamedAttribute entry : files) {
      auto file = llvm::dyn_cast<StringAttr>(entry.getValue());
      if (!file || file.getValue().empty())
        return emitError() << "'" << name << "': the file of '"
                           << entry.getName().getValue()
                           << "' must be a non-empty string";
    }
  }
  return success();
}

