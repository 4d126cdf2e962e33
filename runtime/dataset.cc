// dataset.cc: the regression grid, the CSV loader and the NPY pair loader (dataset.h).
#include "runtime/dataset.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace vouch::rt {

namespace {

double relu(double v) { return v > 0 ? v : 0; }

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) b++;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) e--;
  return s.substr(b, e - b);
}

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> fields;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    fields.push_back(trim(line.substr(start, comma - start)));
    if (comma == std::string::npos) return fields;
    start = comma + 1;
  }
}

// A finite decimal number, the whole field; locale-independent.
bool parse_number(const std::string& field, double* out) {
  const char* b = field.data();
  const char* e = b + field.size();
  if (b != e && *b == '+') b++;
  if (b == e) return false;
  auto [ptr, ec] = std::from_chars(b, e, *out);
  return ec == std::errc() && ptr == e && std::isfinite(*out);
}

bool all_non_numeric(const std::vector<std::string>& fields) {
  double ignored;
  for (const std::string& f : fields)
    if (parse_number(f, &ignored)) return false;
  return true;
}

Status check_features(int64_t in_features, int64_t out_features) {
  if (in_features <= 0 || out_features <= 0)
    return Status::Error("dataset: feature counts must be positive (in=" +
                         std::to_string(in_features) + ", out=" + std::to_string(out_features) +
                         ")");
  return Status::Ok();
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); i++) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// Rows of a 2-D [rows, cols] array (or 1-D [rows] where cols == 1), or an error.
Result<int64_t> rows_of(const std::string& path, const NpyArray& a, int64_t cols) {
  if (a.shape.size() == 2 && a.shape[1] == cols) return a.shape[0];
  if (a.shape.size() == 1 && cols == 1) return a.shape[0];
  return Status::Error(path + ": expected a 2-D array [rows, " + std::to_string(cols) +
                       "], got shape " + shape_string(a.shape));
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Dataset regression_grid(double lo, double hi, int64_t n) {
  Dataset d;
  d.in_features = 2;
  d.out_features = 1;
  d.rows = n * n;
  std::vector<double> xs(n);
  for (int64_t i = 0; i < n; i++) xs[i] = n == 1 ? lo : lo + double(i) * (hi - lo) / double(n - 1);
  for (int64_t r = 0; r < d.rows; r++) {
    double x1 = xs[r / n], x2 = xs[r % n];
    d.x.push_back(x1);
    d.x.push_back(x2);
    d.y.push_back(0.8 * relu(x1 + x2) - 0.4 * relu(x2 - x1) + 0.2);
  }
  std::ostringstream desc;
  desc << "regression_grid(" << lo << ", " << hi << ", " << n << "): " << d.rows << " rows";
  d.description = desc.str();
  return d;
}

Result<Dataset> load_csv(const std::string& path, int64_t in_features, int64_t out_features) {
  Status st = check_features(in_features, out_features);
  if (!st.ok()) return st;
  std::ifstream in(path);
  if (!in) return Status::Error(path + ": cannot open file (" + std::strerror(errno) + ")");

  Dataset d;
  d.in_features = in_features;
  d.out_features = out_features;
  const size_t columns = size_t(in_features + out_features);
  bool first = true, had_header = false;
  std::string line;
  for (int64_t lineno = 1; std::getline(in, line); lineno++) {
    if (trim(line).empty()) continue;
    std::vector<std::string> fields = split_fields(line);
    if (first) {
      first = false;
      if (all_non_numeric(fields)) {
        had_header = true;
        continue;
      }
    }
    std::string where = path + ":" + std::to_string(lineno) + ": ";
    if (fields.size() != columns)
      return Status::Error(where + "expected " + std::to_string(columns) + " columns (" +
                           std::to_string(in_features) + " inputs + " +
                           std::to_string(out_features) + " outputs), found " +
                           std::to_string(fields.size()));
    for (size_t c = 0; c < columns; c++) {
      double v;
      if (!parse_number(fields[c], &v))
        return Status::Error(where + "column " + std::to_string(c + 1) + ": '" + fields[c] +
                             "' is not a finite number");
      (int64_t(c) < in_features ? d.x : d.y).push_back(v);
    }
    d.rows++;
  }
  if (in.bad()) return Status::Error(path + ": read error");
  if (d.rows == 0)
    return Status::Error(path + (had_header ? ": no data rows after the header"
                                            : ": empty file (no data rows)"));
  d.description = "csv " + path + ": " + std::to_string(d.rows) + " rows";
  return d;
}

Result<Dataset> load_npy_pair(const std::string& x_path, const std::string& y_path,
                              int64_t in_features, int64_t out_features) {
  Status st = check_features(in_features, out_features);
  if (!st.ok()) return st;
  Result<NpyArray> x = load_npy(x_path);
  if (!x.ok()) return x.status();
  Result<NpyArray> y = load_npy(y_path);
  if (!y.ok()) return y.status();
  Result<int64_t> x_rows = rows_of(x_path, x.value(), in_features);
  if (!x_rows.ok()) return x_rows.status();
  Result<int64_t> y_rows = rows_of(y_path, y.value(), out_features);
  if (!y_rows.ok()) return y_rows.status();
  if (x_rows.value() != y_rows.value())
    return Status::Error(x_path + " has " + std::to_string(x_rows.value()) + " rows but " +
                         y_path + " has " + std::to_string(y_rows.value()));
  if (x_rows.value() == 0) return Status::Error(x_path + ": no data rows");
  Dataset d;
  d.rows = x_rows.value();
  d.in_features = in_features;
  d.out_features = out_features;
  d.x = std::move(x.value().data);
  d.y = std::move(y.value().data);
  d.description = "npy " + x_path + "," + y_path + ": " + std::to_string(d.rows) + " rows";
  return d;
}

Result<Dataset> load_npy_fields(const std::vector<std::string>& paths,
                                const std::vector<int64_t>& row_elems, size_t inputs) {
  if (paths.size() != row_elems.size())
    return Status::Error("expected " + std::to_string(row_elems.size()) +
                         " .npy files (one per input and target), got " +
                         std::to_string(paths.size()));
  Dataset d;
  std::vector<NpyArray> arrays;
  for (size_t f = 0; f < paths.size(); f++) {
    const std::string& path = paths[f];
    Result<NpyArray> a = load_npy(path);
    if (!a.ok()) return a.status();
    arrays.push_back(std::move(a.value()));
    const NpyArray& arr = arrays.back();
    int64_t trailing = 1;
    for (size_t k = 1; k < arr.shape.size(); k++) trailing *= arr.shape[k];
    if (arr.shape.empty() || trailing != row_elems[f] ||
        (arr.shape.size() == 1 && row_elems[f] != 1))
      return Status::Error(path + ": expected [rows, ...] with " + std::to_string(row_elems[f]) +
                           " element(s) per row, got shape " + shape_string(arr.shape));
    const int64_t rows = arr.shape[0];
    if (rows == 0) return Status::Error(path + ": no data rows");
    if (f == 0) d.rows = rows;
    if (rows != d.rows)
      return Status::Error(path + " has " + std::to_string(rows) + " rows but " + paths[0] +
                           " has " + std::to_string(d.rows));
    for (size_t i = 0; i < arr.data.size(); i++)
      if (!std::isfinite(arr.data[i]))
        return Status::Error(path + ": element " + std::to_string(i) + " (row " +
                             std::to_string(int64_t(i) / row_elems[f]) + ") is not finite");
    (f < inputs ? d.in_features : d.out_features) += row_elems[f];
  }
  // Row-major tables: each row holds its fields' columns side by side.
  d.x.assign(size_t(d.rows * d.in_features), 0.0);
  d.y.assign(size_t(d.rows * d.out_features), 0.0);
  int64_t x_col = 0, y_col = 0;
  for (size_t f = 0; f < paths.size(); f++) {
    const NpyArray& arr = arrays[f];
    const bool input = f < inputs;
    std::vector<double>& table = input ? d.x : d.y;
    const int64_t cols = input ? d.in_features : d.out_features;
    int64_t& col = input ? x_col : y_col;
    for (int64_t r = 0; r < d.rows; r++)
      std::copy_n(arr.data.begin() + r * row_elems[f], row_elems[f],
                  table.begin() + r * cols + col);
    col += row_elems[f];
  }
  d.description = "npy ";
  for (size_t f = 0; f < paths.size(); f++) d.description += (f ? "," : "") + paths[f];
  d.description += ": " + std::to_string(d.rows) + " rows";
  return d;
}

std::vector<std::string> split_paths(const std::string& spec) {
  std::vector<std::string> paths;
  for (size_t begin = 0;;) {
    const size_t comma = spec.find(',', begin);
    paths.push_back(spec.substr(begin, comma == std::string::npos ? comma : comma - begin));
    if (comma == std::string::npos) return paths;
    begin = comma + 1;
  }
}

Result<Dataset> load_data_file(const std::string& spec, int64_t in_features,
                               int64_t out_features, const std::vector<int64_t>& row_elems,
                               size_t inputs) {
  const std::vector<std::string> paths = split_paths(spec);
  bool all_npy = paths.size() >= 2;
  for (const std::string& p : paths) all_npy = all_npy && ends_with(p, ".npy");
  if (all_npy) {
    if (row_elems.empty()) {
      if (paths.size() != 2)
        return Status::Error("data '" + spec + "': expected x.npy,y.npy");
      return load_npy_pair(paths[0], paths[1], in_features, out_features);
    }
    return load_npy_fields(paths, row_elems, inputs);
  }
  if (paths.size() == 1 && ends_with(spec, ".csv")) {
    Result<Dataset> d = load_csv(spec, in_features, out_features);
    return d;
  }
  return Status::Error("data '" + spec + "': expected file.csv or one .npy per input and "
                       "target, comma-separated (x.npy,y.npy)");
}

}  // namespace vouch::rt
