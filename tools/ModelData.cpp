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
  // A dataset row holds the inputs' columns, then the targets', each field's
  // in declaration order (runtime/dataset.h).
  int64_t xColumn = 0, yColumn = 0;
  auto feed = [&](StringRef name, Value v, const std::vector<double> &all,
                  int64_t width, int64_t &column) {
    auto shape = cast<RankedTensorType>(v.getType()).getShape();
    int64_t rowElems = cast<RankedTensorType>(v.getType()).getNumElements() / batch;
    HostTensor t{{shape.begin(), shape.end()}, {}};
    for (int64_t r = batchIndex * batch; r < (batchIndex + 1) * batch; ++r) {
      auto first = all.begin() + r * width + column;
      t.data.insert(t.data.end(), first, first + rowElems);
    }
    column += rowElems;
    feeds[name.str()] = std::move(t);
  };
  for (Operation &op : model.getBlock()) {
    if (auto input = dyn_cast<InputOp>(op))
      feed(input.getName(), input.getResult(), data.x, data.in_features, xColumn);
  }
  for (Operation &op : model.getBlock()) {
    if (auto target = dyn_cast<TargetOp>(op))
      feed(target.getName(), target.getResult(), data.y, data.out_features, yColumn);
  }
  return true;
}

} // namespace vouch::driver
