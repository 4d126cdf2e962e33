//===- ModelData.cpp - feeding a model to the reference interpreter -------===//
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

bool feedBatch(ModelOp model, const rt::Dataset &data, int64_t batchIndex,
               std::map<std::string, HostTensor> &feeds, std::string &error) {
  int64_t batch = model.getBatch();
  if ((batchIndex + 1) * batch > data.rows) {
    error = "the data has " + std::to_string(data.rows) +
            " rows, fewer than one batch of " + std::to_string(batch);
    return false;
  }
  auto feed = [&](StringRef name, Value v, const std::vector<double> &all,
                  int64_t width) {
    auto shape = cast<RankedTensorType>(v.getType()).getShape();
    HostTensor t{{shape.begin(), shape.end()}, {}};
    auto first = all.begin() + batchIndex * batch * width;
    t.data.assign(first, first + batch * width);
    feeds[name.str()] = std::move(t);
  };
  for (Operation &op : model.getBlock()) {
    if (auto input = dyn_cast<InputOp>(op))
      feed(input.getName(), input.getResult(), data.x, data.in_features);
    else if (auto target = dyn_cast<TargetOp>(op))
      feed(target.getName(), target.getResult(), data.y, data.out_features);
  }
  return true;
}

} // namespace vouch::driver
