// dataset.cc: the regression grid, the CSV loader and the NPY pair loader (dataset.h).
#include "runtime/dataset.h"

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

Result<Dataset> load_data_file(const std::string& spec, int64_t in_features,
                               int64_t out_features) {
  size_t comma = spec.find(',');
  if (comma != std::string::npos) {
    std::string x_path = spec.substr(0, comma), y_path = spec.substr(comma + 1);
    if (ends_with(x_path, ".npy") && ends_with(y_path, ".npy"))
      return load_npy_pair(x_path, y_path, in_features, out_features);
  } else if (ends_with(spec, ".csv")) {
    return load_csv(spec, in_features, out_features);
  }
  return Status::Error("data '" + spec + "': expected file.csv or x.npy,y.npy");
}

}  // namespace vouch::rt
