//===- VouchAttrs.cpp - a model's clauses as typed attributes -------------===//
//
// The attributes check themselves against the clause table (the signatures
// of the ODS enum cases): a train attribute holds exactly its optimizer's
// hyper-parameters, a data attribute exactly its source's arguments. The
// dictionaries IR spelled the clauses with before are read here too.
//
//===----------------------------------------------------------------------===//
#include "ir/VouchAttrs.h"

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
                                std::optional<APFloat> momentum, int64_t steps,
                                int64_t logEvery) {
  StringRef name = stringifyOptimizerKind(optimizer);
  if (failed(checkPresence(emitError, name,
                           clauseSignature(ClauseKind::Optimizer, name),
                           {{"lr", true},
                            {"beta1", beta1.has_value()},
                            {"beta2", beta2.has_value()},
                            {"eps", eps.has_value()},
                            {"weight_decay", true},
                            {"momentum", momentum.has_value()}})))
    return failure();
  if (steps < 1 || logEvery < 1)
    return emitError() << "steps and log_every must be at least 1, got "
                       << steps << " and " << logEvery;
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
  return std::nullopt;
}

TrainAttr vouch::buildTrainAttr(MLIRContext *context, OptimizerKind optimizer,
                                const llvm::StringMap<double> &hyper,
                                int64_t steps, int64_t logEvery,
                                function_ref<InFlightDiagnostic()> emitError) {
  auto get = [&](StringRef name) -> std::optional<double> {
    auto it = hyper.find(name);
    return it == hyper.end() ? std::nullopt : std::optional(it->second);
  };
  for (const auto &entry : hyper)
    if (!llvm::is_contained(
            {"lr", "beta1", "beta2", "eps", "weight_decay", "momentum"},
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
                               toAPFloat(get("momentum")), steps, logEvery);
}

//===----------------------------------------------------------------------===//
// DataAttr
//===----------------------------------------------------------------------===//

LogicalResult DataAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               DataKind kind, std::optional<APFloat> lo,
                               std::optional<APFloat> hi,
                               std::optional<int64_t> n, StringAttr path,
                               StringAttr x, StringAttr y) {
  StringRef name = stringifyDataKind(kind);
  if (failed(checkPresence(emitError, name,
                           clauseSignature(ClauseKind::DataSource, name),
                           {{"lo", lo.has_value()},
                            {"hi", hi.has_value()},
                            {"n", n.has_value()},
                            {"path", static_cast<bool>(path)},
                            {"x", static_cast<bool>(x)},
                            {"y", static_cast<bool>(y)}})))
    return failure();
  if (lo && hi && !(lo->convertToDouble() < hi->convertToDouble()))
    return emitError() << "'" << name << "' needs lo < hi";
  if (n && *n < 1)
    return emitError() << "'" << name << "' needs n >= 1, got " << *n;
  for (StringAttr file : {path, x, y})
    if (file && file.getValue().empty())
      return emitError() << "'" << name << "' needs non-empty file names";
  return success();
}

//===----------------------------------------------------------------------===//
// The dictionaries of before
//===----------------------------------------------------------------------===//

namespace {

/// Reads a dictionary entry as a number (float or integer attribute).
std::optional<double> numberOf(Attribute value) {
  if (auto f = dyn_cast_or_null<FloatAttr>(value))
    return f.getValueAsDouble();
  if (auto i = dyn_cast_or_null<IntegerAttr>(value))
    return static_cast<double>(i.getInt());
  return std::nullopt;
}

/// The callee named by `dictionary[key]`, or an error.
template <typename Enum>
std::optional<Enum> calleeOf(DictionaryAttr dictionary, StringRef key,
                             ClauseKind kind,
                             std::optional<Enum> (*symbolize)(StringRef),
                             function_ref<InFlightDiagnostic()> emitError) {
  auto name = dyn_cast_or_null<StringAttr>(dictionary.get(key));
  if (!name) {
    emitError() << "the " << toString(kind) << " dictionary needs a string '"
                << key << "'";
    return std::nullopt;
  }
  std::optional<Enum> callee = symbolize(name.getValue());
  if (!callee) {
    std::string known;
    for (const ClauseFacts *facts : clauseCallees(kind))
      known += (known.empty() ? "" : ", ") + std::string(facts->name);
    emitError() << "unknown " << toString(kind) << " '" << name.getValue()
                << "' (known: " << known << ")";
  }
  return callee;
}

/// The numbers of `dictionary` a signature names, defaults filled in;
/// hyper-parameters the old spelling wrote out for every optimizer are
/// accepted in `ignorable` and dropped.
std::optional<llvm::StringMap<double>>
numbersOf(DictionaryAttr dictionary, StringRef callee,
          const std::vector<SignatureParam> &signature,
          ArrayRef<StringRef> otherKeys, ArrayRef<StringRef> ignorable,
          function_ref<InFlightDiagnostic()> emitError) {
  for (NamedAttribute entry : dictionary) {
    StringRef key = entry.getName().getValue();
    if (!hasParam(signature, key) && !llvm::is_contained(otherKeys, key) &&
        !llvm::is_contained(ignorable, key)) {
      emitError() << "'" << callee << "' has no argument '" << key << "'";
      return std::nullopt;
    }
  }
  llvm::StringMap<double> numbers;
  for (const SignatureParam &p : signature) {
    Attribute given = dictionary.get(StringRef(p.name));
    std::optional<double> value = numberOf(given);
    if (!given && !p.defaultText.empty()) {
      double parsed;
      if (!StringRef(p.defaultText).getAsDouble(parsed))
        value = parsed;
    }
    if (!value) {
      emitError() << "'" << callee << "' needs a number for '" << p.name
                  << "'";
      return std::nullopt;
    }
    numbers[p.name] = *value;
  }
  return numbers;
}

} // namespace

Attribute vouch::clauseFromDictionary(StringRef key, DictionaryAttr dictionary,
                                      function_ref<InFlightDiagnostic()> emitError) {
  MLIRContext *context = dictionary.getContext();
  if (key == "train") {
    std::optional<OptimizerKind> optimizer = calleeOf<OptimizerKind>(
        dictionary, "optimizer", ClauseKind::Optimizer, symbolizeOptimizerKind,
        emitError);
    if (!optimizer)
      return {};
    StringRef name = stringifyOptimizerKind(*optimizer);
    std::optional<llvm::StringMap<double>> hyper = numbersOf(
        dictionary, name, clauseSignature(ClauseKind::Optimizer, name),
        {"optimizer", "steps", "log_every"},
        {"beta1", "beta2", "eps", "momentum"}, emitError);
    if (!hyper)
      return {};
    int64_t steps = kDefaultTrainSteps, logEvery = kDefaultTrainLogEvery;
    for (auto [option, slot] : {std::pair<StringRef, int64_t *>{"steps", &steps},
                                {"log_every", &logEvery}})
      if (Attribute given = dictionary.get(option)) {
        auto integer = dyn_cast<IntegerAttr>(given);
        if (!integer) {
          emitError() << "the train option '" << option
                      << "' must be an integer";
          return {};
        }
        *slot = integer.getInt();
      }
    return buildTrainAttr(context, *optimizer, *hyper, steps, logEvery,
                          emitError);
  }

  std::optional<DataKind> kind = calleeOf<DataKind>(
      dictionary, "kind", ClauseKind::DataSource, symbolizeDataKind, emitError);
  if (!kind)
    return {};
  StringRef name = stringifyDataKind(*kind);
  std::vector<SignatureParam> signature =
      clauseSignature(ClauseKind::DataSource, name);
  std::optional<APFloat> lo, hi;
  std::optional<int64_t> n;
  StringAttr files[3];
  for (NamedAttribute entry : dictionary) {
    StringRef arg = entry.getName().getValue();
    if (arg != "kind" && !hasParam(signature, arg)) {
      emitError() << "'" << name << "' has no argument '" << arg << "'";
      return {};
    }
  }
  for (const SignatureParam &p : signature) {
    Attribute given = dictionary.get(StringRef(p.name));
    StringRef defaultText(p.defaultText);
    if (p.name == "lo" || p.name == "hi") {
      std::optional<double> value = numberOf(given);
      double parsed;
      if (!given && !defaultText.getAsDouble(parsed))
        value = parsed;
      if (!value) {
        emitError() << "'" << name << "' needs a number for '" << p.name << "'";
        return {};
      }
      (p.name == "lo" ? lo : hi) = APFloat(*value);
    } else if (p.name == "n") {
      auto integer = dyn_cast_or_null<IntegerAttr>(given);
      int64_t parsed;
      if (integer)
        n = integer.getInt();
      else if (!given && !defaultText.getAsInteger(10, parsed))
        n = parsed;
      else {
        emitError() << "'" << name << "' needs an integer for 'n'";
        return {};
      }
    } else {
      auto file = dyn_cast_or_null<StringAttr>(given);
      if (!file) {
        emitError() << "'" << name << "' needs a string for '" << p.name
                    << "'";
        return {};
      }
      files[p.name == "path" ? 0 : p.name == "x" ? 1 : 2] = file;
    }
  }
  return DataAttr::getChecked(emitError, context, *kind, lo, hi, n, files[0],
                              files[1], files[2]);
}
