// model_data.cc: see model_data.h.
#include "runtime/model_data.h"

#include <cmath>
#include <cstdio>

#include "runtime/init.h"
#include "runtime/tokens.h"

namespace vouch::rt {

std::vector<FieldInfo> model_fields(const ModelDescription& m) {
  if (!m.fields.empty()) return m.fields;
  return {FieldInfo{"x", DType::Real, m.in_features, false},
          FieldInfo{"y", DType::Real, m.out_features, true}};
}

namespace {

std::string format_double(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Each field's elements per row and name, in field order; returns how many are inputs.
size_t field_layout(const ModelDescription& m, std::vector<int64_t>& row_elems,
                    std::vector<std::string>& names) {
  size_t inputs = 0;
  for (const FieldInfo& f : model_fields(m)) {
    row_elems.push_back(f.row_elems);
    names.push_back(f.name);
    inputs += f.target ? 0 : 1;
  }
  return inputs;
}

// Calls check(field, where, row, element, value) for every value of every field of `d`
// (`spec`: the files, one per field in field order when npy, so `where` names the
// field's file, or the one CSV file); the first error stops.
template <class Check>
Status each_field_value(const ModelDescription& m, const Dataset& d, const std::string& spec,
                        Check check) {
  const std::vector<std::string> paths = split_paths(spec);
  const std::vector<FieldInfo> fields = model_fields(m);
  int64_t x_col = 0, y_col = 0;
  for (size_t fi = 0; fi < fields.size(); fi++) {
    const FieldInfo& f = fields[fi];
    const std::string where = paths.size() == fields.size() ? paths[fi]
                              : paths.size() == 1 && !spec.empty() ? spec
                                                                   : d.description;
    int64_t& col = f.target ? y_col : x_col;
    const int64_t cols = f.target ? d.out_features : d.in_features;
    const std::vector<double>& table = f.target ? d.y : d.x;
    for (int64_t r = 0; r < d.rows; r++)
      for (int64_t j = 0; j < f.row_elems; j++) {
        Status st = check(f, where, r, j, table[size_t(r * cols + col + j)]);
        if (!st.ok()) return st;
      }
    col += f.row_elems;
  }
  return Status::Ok();
}

// Every value of an integer field is an int32: the executors store it as one.
Status check_integer_fields(const ModelDescription& m, const Dataset& d,
                            const std::string& spec) {
  return each_field_value(m, d, spec, [](const FieldInfo& f, const std::string& where,
                                         int64_t r, int64_t, double v) {
    if (f.dtype != DType::I32) return Status::Ok();
    if (!(v == std::floor(v) && v >= -2147483648.0 && v <= 2147483647.0))
      return Status::Error(where + ": field '" + f.name + "' is i32, but row " +
                           std::to_string(r) + " holds " + format_double(v) +
                           " (not an integer in the int32 range)");
    const int64_t i = int64_t(v);
    if ((i < f.min_value || i > f.max_value) && i != f.also)
      return Status::Error(
          where + ": field '" + f.name + "', row " + std::to_string(r) + " holds " +
          std::to_string(i) + ", but it is " + f.use + ": " + std::to_string(f.min_value) +
          ".." + std::to_string(f.max_value) +
          (f.also != INT64_MIN ? " or " + std::to_string(f.also) : std::string()));
    return Status::Ok();
  });
}

const char kBeyondF32[] =
    ", beyond f32's range (it rounds to infinity; the largest finite f32 is "
    "3.4028234663852886e+38): this run is f32 (--dtype f32, or the default on cuda)";

}  // namespace

Result<Dataset> load_eval_data(const ModelDescription& m, const std::string& path) {
  std::vector<int64_t> row_elems;
  std::vector<std::string> names;
  const size_t inputs = field_layout(m, row_elems, names);
  Result<Dataset> data =
      load_data_file(path, m.in_features, m.out_features, row_elems, inputs, names);
  if (!data.ok()) return data;
  Status ints = check_integer_fields(m, data.value(), path);
  if (!ints.ok()) return ints;
  return data;
}

Result<Dataset> split_held_out(Dataset& d, double fraction, int64_t batch) {
  const int64_t at_least = int64_t(std::ceil(fraction * double(d.rows)));
  const int64_t train = (d.rows - at_least) / batch * batch;
  if (train <= 0)
    return Status::Error(d.description + ": holding out " + format_double(fraction) +
                         " of its " + std::to_string(d.rows) + " rows leaves no whole batch of " +
                         std::to_string(batch) + " to train on");
  Dataset held;
  held.rows = d.rows - train;
  held.in_features = d.in_features;
  held.out_features = d.out_features;
  held.description = d.description + " (held-out rows " + std::to_string(train) + ".." +
                     std::to_string(d.rows - 1) + ")";
  held.x.assign(d.x.begin() + train * d.in_features, d.x.end());
  held.y.assign(d.y.begin() + train * d.out_features, d.y.end());
  d.rows = train;
  d.x.resize(size_t(train * d.in_features));
  d.y.resize(size_t(train * d.out_features));
  d.description += " (training rows 0.." + std::to_string(train - 1) + ")";
  return held;
}

namespace {

// A token stream's first batch of sequential windows as a table (`vouch run
// --interpret` reads batch 0): input then target columns, one window per row.
Result<Dataset> first_token_batch(const ModelDescription& m, const std::string& path) {
  if (path.find(',') != std::string::npos)
    return Status::Error("a token stream is one file (llm.c .bin or a 1-D .npy), got '" +
                         path + "'");
  Result<int64_t> context = token_context(m);
  if (!context.ok()) return context.status();
  const int64_t T = context.value();
  Result<std::shared_ptr<TokenFile>> file = TokenFile::open(path);
  if (!file.ok()) return file.status();
  Status ids = check_token_ids(*file.value(), m, T);
  if (!ids.ok()) return ids;
  std::vector<int32_t> in(size_t(m.batch * T)), out(size_t(m.batch * T));
  fill_token_batch(*file.value(), T, 0, m.batch, m.batch, false, 0, in.data(), out.data());
  Dataset d;
  d.rows = m.batch;
  d.in_features = d.out_features = T;
  d.x.assign(in.begin(), in.end());
  d.y.assign(out.begin(), out.end());
  d.description = path + " (tokens: the first " + std::to_string(m.batch) +
                  " sequential windows)";
  return d;
}

}  // namespace

Result<Dataset> load_model_data(const ModelDescription& m, const std::string& override_path,
                                Dataset* held_out) {
  if (m.data.kind == DataSpec::Tokens)
    return first_token_batch(m, override_path.empty() ? m.data.path : override_path);
  Result<Dataset> data = Status::Error("no data");
  std::vector<int64_t> row_elems;
  std::vector<std::string> names;
  const size_t inputs = field_layout(m, row_elems, names);
  if (!override_path.empty()) {
    data = load_data_file(override_path, m.in_features, m.out_features, row_elems, inputs,
                          names);
  } else if (m.data.kind == DataSpec::RegressionGrid) {
    if (m.in_features != 2 || m.out_features != 1)
      return Status::Error("the regression grid has 2 inputs and 1 output, but model `" +
                           m.name + "` takes " + std::to_string(m.in_features) + " and gives " +
                           std::to_string(m.out_features));
    data = regression_grid(m.data.lo, m.data.hi, m.data.n);
  } else {
    data = load_data_file(m.data.path, m.in_features, m.out_features, row_elems, inputs,
                          names);
  }
  if (!data.ok()) return data;
  Status ints = check_integer_fields(
      m, data.value(), !override_path.empty() ? override_path : m.data.path);
  if (!ints.ok()) return ints;
  if (m.eval_fraction > 0) {
    Result<Dataset> held = split_held_out(data.value(), m.eval_fraction, m.batch);
    if (!held.ok()) return held.status();
    if (held_out) *held_out = std::move(held.value());
  }
  if (data.value().rows % m.batch != 0)
    return Status::Error("the data has " + std::to_string(data.value().rows) +
                         " rows, not a multiple of the batch size " + std::to_string(m.batch));
  return data;
}

Status check_fits_f32(const ModelDescription& m, const Dataset& d, const std::string& spec) {
  return each_field_value(m, d, spec, [](const FieldInfo& f, const std::string& where,
                                         int64_t r, int64_t j, double v) {
    if (f.dtype != DType::Real || !overflows_f32(v)) return Status::Ok();
    return Status::Error(where + ": field '" + f.name + "', row " + std::to_string(r) +
                         (f.row_elems > 1 ? ", element " + std::to_string(j) : "") +
                         " holds " + format_double(v) + kBeyondF32);
  });
}

Status check_params_fit_f32(const std::string& path, const std::vector<NamedTensor>& params) {
  for (const NamedTensor& t : params)
    for (size_t i = 0; i < t.data.size(); i++)
      if (overflows_f32(t.data[i]))
        return Status::Error(path + ": tensor '" + t.name + "' holds " +
                             format_double(t.data[i]) + " at index " + std::to_string(i) +
                             kBeyondF32);
  return Status::Ok();
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
