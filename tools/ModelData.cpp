//===- ModelData.cpp - params and data of a model, for the driver ---------===//
#include "tools/ModelData.h"

#include <cerrno>
#include <cstdlib>

using namespace mlir;

namespace vouch::driver {

bool parseSeed(const std::string &text, unsigned long long &seed) {
  errno = 0;
  char *end = nullptr;
  seed = std::strtoull(text.c_str(), &end, 10);
  return !text.empty() && text[0] != '-' && *end == '\0' && errno != ERANGE;
}

rt::InitSpec initSpecOf(ParamOp param) {
  static const std::pair<const char *, rt::InitKind> kinds[] = {
      {"zeros", rt::InitKind::Zeros},
      {"ones", rt::InitKind::Ones},
      {"uniform", rt::InitKind::Uniform},
      {"normal", rt::InitKind::Normal},
      {"xavier_uniform", rt::InitKind::XavierUniform},
      {"kaiming_uniform", rt::InitKind::KaimingUniform}};
  rt::InitSpec spec{rt::InitKind::Zeros};
  for (const auto &[name, kind] : kinds)
    if (param.getInit() == name)
      spec.kind = kind;
  ArrayRef<double> args = param.getInitArgs();
  if (args.size() == 2) {
    spec.a = args[0];
    spec.b = args[1];
  }
  return spec;
}

std::vector<rt::NamedTensor> initialParams(ModelOp model,
                                           unsigned long long seed) {
  std::vector<rt::NamedTensor> params;
  for (Operation &op : model.getBlock()) {
    auto param = dyn_cast<ParamOp>(op);
    if (!param)
      continue;
    auto shape = cast<RankedTensorType>(param.getType()).getShape();
    rt::NamedTensor t{param.getName().str(), {shape.begin(), shape.end()}, {}};
    t.data.resize(getNumElements(param.getType()));
    rt::init_tensor(initSpecOf(param),
                    rt::param_seed(seed, static_cast<int>(params.size())),
                    t.shape, t.data.data());
    params.push_back(std::move(t));
  }
  return params;
}

namespace {

template <class OpT> OpT onlyOne(ModelOp model, std::string &error,
                                 const char *what) {
  OpT found;
  int count = 0;
  for (Operation &op : model.getBlock())
    if (auto o = dyn_cast<OpT>(op)) {
      found = o;
      ++count;
    }
  if (count != 1) {
    error = "model '" + model.getSymName().str() + "' has " +
            std::to_string(count) + " " + what +
            " declarations; feeding data needs exactly one";
    return nullptr;
  }
  return found;
}

/// Features per row of a [batch, ...] value.
int64_t featuresOf(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  return type.getRank() == 0 ? 1 : type.getNumElements() / type.getDimSize(0);
}

} // namespace

std::optional<rt::Dataset> loadModelData(ModelOp model,
                                         const std::string &overridePath,
                                         std::string &error) {
  InputOp input = onlyOne<InputOp>(model, error, "input");
  if (!input)
    return std::nullopt;
  TargetOp target = onlyOne<TargetOp>(model, error, "target");
  if (!target)
    return std::nullopt;
  int64_t in = featuresOf(input.getResult()), out = featuresOf(target.getResult());

  std::string path = overridePath;
  DictionaryAttr data = model.getDataAttr();
  if (path.empty()) {
    if (!data) {
      error = "model '" + model.getSymName().str() +
              "' has no data clause; give a data file with --data";
      return std::nullopt;
    }
    StringRef kind = cast<StringAttr>(data.get("kind")).getValue();
    auto number = [&](const char *key) {
      Attribute a = data.get(key);
      if (auto f = dyn_cast_or_null<FloatAttr>(a))
        return f.getValueAsDouble();
      if (auto i = dyn_cast_or_null<IntegerAttr>(a))
        return static_cast<double>(i.getInt());
      return 0.0;
    };
    if (kind == "regression_grid") {
      if (in != 2 || out != 1) {
        error = "regression_grid data has 2 features and 1 target per row, "
                "but the model's input has " + std::to_string(in) +
                " and its target " + std::to_string(out);
        return std::nullopt;
      }
      return rt::regression_grid(number("lo"), number("hi"),
                                 static_cast<int64_t>(number("n")));
    }
    if (kind == "csv")
      path = cast<StringAttr>(data.get("path")).str();
    else if (kind == "npy")
      path = cast<StringAttr>(data.get("x")).str() + "," +
             cast<StringAttr>(data.get("y")).str();
  }
  rt::Result<rt::Dataset> loaded = rt::load_data_file(path, in, out);
  if (!loaded.ok()) {
    error = loaded.status().message();
    return std::nullopt;
  }
  return loaded.value();
}

bool feedBatch(ModelOp model, const rt::Dataset &data, int64_t batchIndex,
               std::map<std::string, HostTensor> &feeds, std::string &error) {
  InputOp input = onlyOne<InputOp>(model, error, "input");
  TargetOp target = onlyOne<TargetOp>(model, error, "target");
  if (!input || !target)
    return false;
  int64_t batch = model.getBatch();
  if ((batchIndex + 1) * batch > data.rows) {
    error = "the data has " + std::to_string(data.rows) +
            " rows, fewer than one batch of " + std::to_string(batch);
    return false;
  }
  auto slice = [&](Value v, const std::vector<double> &all, int64_t width) {
    auto shape = cast<RankedTensorType>(v.getType()).getShape();
    HostTensor t{{shape.begin(), shape.end()}, {}};
    auto first = all.begin() + batchIndex * batch * width;
    t.data.assign(first, first + batch * width);
    return t;
  };
  feeds[input.getName().str()] = slice(input.getResult(), data.x, data.in_features);
  feeds[target.getName().str()] =
      slice(target.getResult(), data.y, data.out_features);
  return true;
}

} // namespace vouch::driver
