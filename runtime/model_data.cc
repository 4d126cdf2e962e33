// model_data.cc: see model_data.h.
#include "runtime/model_data.h"

#include "runtime/init.h"

namespace vouch::rt {

Result<Dataset> load_model_data(const ModelDescription& m, const std::string& override_path) {
  Result<Dataset> data = Status::Error("no data");
  if (!override_path.empty()) {
    data = load_data_file(override_path, m.in_features, m.out_features);
  } else if (m.data.kind == DataSpec::RegressionGrid) {
    if (m.in_features != 2 || m.out_features != 1)
      return Status::Error("the regression grid has 2 inputs and 1 output, but model `" +
                           m.name + "` takes " + std::to_string(m.in_features) + " and gives " +
                           std::to_string(m.out_features));
    data = regression_grid(m.data.lo, m.data.hi, m.data.n);
  } else {
    data = load_data_file(m.data.path, m.in_features, m.out_features);
  }
  if (!data.ok()) return data;
  if (data.value().rows % m.batch != 0)
    return Status::Error("the data has " + std::to_string(data.value().rows) +
                         " rows, not a multiple of the batch size " + std::to_string(m.batch));
  return data;
}

std::vector<NamedTensor> initial_params(const ModelDescription& m, uint64_t seed) {
  std::vector<NamedTensor> params;
  for (size_t i = 0; i < m.params.size(); i++) {
    const ParamInfo& p = m.params[i];
    NamedTensor t{p.name, p.shape, std::vector<double>(p.numel)};
    init_tensor(p.init, param_seed(seed, int(i)), p.shape, t.data.data());
    params.push_back(std::move(t));
  }
  return params;
}

}  // namespace vouch::rt
