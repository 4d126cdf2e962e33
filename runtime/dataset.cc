// dataset.cc: the regression grid, the CSV loader and the NPY pair loader (dataset.h).
#include "runtime/dataset.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <sstream>
#include <string_view>

#include "runtime/input_file.h"
#include "runtime/quoted.h"

namespace vouch::rt {

namespace {

double relu(double v) { return v > 0 ? v : 0; }

// A field without the spaces, tabs and carriage returns around it (CRLF files).
std::string_view trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r')) b++;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r')) e--;
  return s.substr(b, e - b);
}

// Whether a decimal that from_chars found outside float64's range (digits, an
// optional point and digits, an optional exponent; no sign) lies above it rather
// than below: the decimal exponent of its first nonzero digit is positive. The two
// ranges are 600 orders of magnitude apart, so that exponent alone decides.
bool above_f64_range(std::string_view s) {
  size_t i = 0;
  int64_t lead = 0;  // the exponent of the first nonzero digit, before 'e'
  bool seen = false;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; i++)
    if (seen || s[i] != '0') {
      lead += seen ? 1 : 0;
      seen = true;
    }
  if (i < s.size() && s[i] == '.')
    for (i++; i < s.size() && s[i] >= '0' && s[i] <= '9'; i++) {
      if (seen) continue;
      lead--;
      seen = s[i] != '0';
    }
  int64_t exponent = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    const bool negative = i < s.size() && s[i] == '-';
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) i++;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; i++)
      exponent = std::min<int64_t>(exponent * 10 + (s[i] - '0'), int64_t(1) << 40);
    if (negative) exponent = -exponent;
  }
  return lead + exponent > 0;
}

// The number a whole field spells, finite or not (nan, inf), locale-independent: an
// optional sign, then a decimal number and nothing else ('+-1', '1x', '' are none).
// A decimal beyond float64's range is what IEEE 754 rounds it to, as Python's
// float() and numpy read it: infinity above (refused by the callers as not finite),
// zero below (1e-400 is 0).
bool parse_number(std::string_view field, double* out) {
  const char* b = field.data();
  const char* e = b + field.size();
  if (b != e && *b == '+') {
    b++;
    if (b != e && (*b == '+' || *b == '-')) return false;
  }
  if (b == e) return false;
  auto [ptr, ec] = std::from_chars(b, e, *out);
  if (ptr != e) return false;
  if (ec == std::errc::result_out_of_range) {
    const bool negative = *b == '-';
    const double magnitude =
        above_f64_range(std::string_view(b + negative, size_t(e - b - negative)))
            ? std::numeric_limits<double>::infinity()
            : 0.0;
    *out = negative ? -magnitude : magnitude;
    return true;
  }
  return ec == std::errc();
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

// Ok when every value of a field's array (row_elems per row) is finite; else the
// first other one: its file, field, element and row.
Status check_finite(const std::string& path, const std::string& field,
                    const std::vector<double>& data, int64_t row_elems) {
  for (size_t i = 0; i < data.size(); i++) {
    if (std::isfinite(data[i])) continue;
    char value[32];
    std::snprintf(value, sizeof value, "%g", data[i]);
    return Status::Error(path + ": " + (field.empty() ? "" : "field '" + field + "', ") +
                         "element " + std::to_string(i) + " (row " +
                         std::to_string(int64_t(i) / row_elems) + ") is " + value +
                         ", not a finite number");
  }
  return Status::Ok();
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

namespace {

// A CSV file read a chunk at a time, never whole: each field is parsed when it ends,
// each row stored when its line ends, and the first problem stops the read with
// path:line. Fields are bounded (kMaxFieldBytes) and so are the fields counted past a
// row's last column, so a file of one endless line (a sparse file of NUL bytes, a
// million commas) is refused at once instead of being gathered into memory.
class CsvReader {
 public:
  // No number is this long.
  static constexpr size_t kMaxFieldBytes = 4096;
  // Fields past a row's columns counted before the row is refused.
  static constexpr size_t kExtraFieldsCounted = 1000;

  CsvReader(InputFile& file, int64_t in_features, int64_t out_features)
      : file_(file), in_(in_features), columns_(size_t(in_features + out_features)) {}

  Status read(Dataset& d) {
    std::vector<char> chunk(size_t(1) << 16);
    bool start = true;
    while (true) {
      Result<size_t> got = file_.read_some(chunk.data(), chunk.size());
      if (!got.ok()) return got.status();
      if (got.value() == 0) break;
      std::string_view text(chunk.data(), got.value());
      // A UTF-8 byte order mark (spreadsheets write one) is not part of the data.
      if (start && text.substr(0, 3) == "\xef\xbb\xbf") text.remove_prefix(3);
      start = false;
      for (char c : text) {
        if (c != '\n' && c != ',') {
          if (field_.size() >= kMaxFieldBytes)
            return error("column " + std::to_string(index_ + 1) + ": a field of more than " +
                         std::to_string(kMaxFieldBytes) + " bytes (" + quoted(field_) +
                         ") is not a number");
          field_ += c;
          continue;
        }
        Status st = end_field(c == '\n');
        if (st.ok() && c == '\n') st = end_line(d);
        if (!st.ok()) return st;
      }
    }
    Status st = end_field(true);
    if (st.ok()) st = end_line(d);
    return st;
  }

  bool had_header() const { return had_header_; }

 private:
  Status error(const std::string& reason) const {
    return Status::Error(file_.path() + ":" + std::to_string(line_) + ": " + reason);
  }

  Status column_count_error(const std::string& found) const {
    return error("expected " + std::to_string(columns_) + " columns (" + std::to_string(in_) +
                 " inputs + " + std::to_string(int64_t(columns_) - in_) + " outputs), found " +
                 found);
  }

  Status check_value(size_t index, std::string_view field, bool number, double v) const {
    const std::string where = "column " + std::to_string(index + 1) + ": ";
    if (!number) return error(where + quoted(field) + " is not a number");
    if (!std::isfinite(v)) return error(where + quoted(field) + " is not a finite number");
    return Status::Ok();
  }

  // A field ended, at a comma or at the end of its line (`last`).
  Status end_field(bool last) {
    const std::string_view field = trim(field_);
    const size_t index = index_++;
    blank_ = last && index == 0 && field.empty();  // a blank line: skipped
    if (blank_) return Status::Ok();
    double v = 0;
    const bool number = parse_number(field, &v);
    // The first non-blank line is a header when none of its fields is a number (nan
    // and inf are numbers: such a row is data, refused below as the others are). It is
    // decided at the line's end, so until then its fields wait in first_.
    const bool first = !seen_line_;
    numeric_ = numeric_ || (first && number);
    Status st = Status::Ok();
    if (index >= columns_) {
      // Counted, not kept. A header may have any number of fields.
      if (index >= columns_ + kExtraFieldsCounted && (!first || numeric_))
        st = column_count_error("more than " + std::to_string(columns_ + kExtraFieldsCounted));
    } else if (first) {
      first_.push_back(std::string(field));
    } else {
      st = check_value(index, field, number, v);
      row_[index] = v;
    }
    field_.clear();
    return st;
  }

  // A line ended, at '\n' or at the end of the file.
  Status end_line(Dataset& d) {
    const size_t fields = index_;
    const bool blank = blank_;
    index_ = 0;
    blank_ = false;
    if (!blank && !seen_line_) {
      seen_line_ = true;
      had_header_ = !numeric_;
      if (!had_header_ && fields == columns_) {
        for (size_t i = 0; i < columns_; i++) {
          double v = 0;
          const bool number = parse_number(first_[i], &v);
          Status st = check_value(i, first_[i], number, v);
          if (!st.ok()) return st;
          row_[i] = v;
        }
      }
      first_.clear();
      if (had_header_) {
        line_++;
        return Status::Ok();
      }
    }
    if (!blank) {
      if (fields != columns_) return column_count_error(std::to_string(fields));
      for (size_t c = 0; c < columns_; c++) (int64_t(c) < in_ ? d.x : d.y).push_back(row_[c]);
      d.rows++;
    }
    line_++;
    return Status::Ok();
  }

  InputFile& file_;
  const int64_t in_;
  const size_t columns_;
  std::string field_;       // the field being read, at most kMaxFieldBytes
  size_t index_ = 0;        // its column (0-based) in its line
  bool blank_ = false;      // the line that ended is blank (one empty field)
  int64_t line_ = 1;        // the line being read (1-based)
  bool seen_line_ = false;  // a non-blank line ended (the header or the first row)
  bool numeric_ = false;    // the first non-blank line holds a number
  bool had_header_ = false;
  std::vector<std::string> first_;  // the first non-blank line's fields, until its end
  std::vector<double> row_ = std::vector<double>(columns_);
};

}  // namespace

Result<Dataset> load_csv(const std::string& path, int64_t in_features, int64_t out_features) {
  Status st = check_features(in_features, out_features);
  if (!st.ok()) return st;
  Result<InputFile> file = InputFile::open(path);
  if (!file.ok()) return file.status();

  Dataset d;
  d.in_features = in_features;
  d.out_features = out_features;
  CsvReader reader(file.value(), in_features, out_features);
  st = reader.read(d);
  if (!st.ok()) return st;
  if (d.rows == 0)
    return Status::Error(path + (reader.had_header() ? ": no data rows after the header"
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
  Status finite = check_finite(x_path, "", x.value().data, in_features);
  if (finite.ok()) finite = check_finite(y_path, "", y.value().data, out_features);
  if (!finite.ok()) return finite;
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
                                const std::vector<int64_t>& row_elems, size_t inputs,
                                const std::vector<std::string>& names) {
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
    Status finite = check_finite(path, f < names.size() ? names[f] : std::string(), arr.data,
                                 row_elems[f]);
    if (!finite.ok()) return finite;
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
                               size_t inputs, const std::vector<std::string>& names) {
  const std::vector<std::string> paths = split_paths(spec);
  bool all_npy = paths.size() >= 2;
  for (const std::string& p : paths) all_npy = all_npy && ends_with(p, ".npy");
  if (all_npy) {
    if (row_elems.empty()) {
      if (paths.size() != 2)
        return Status::Error("data '" + spec + "': expected x.npy,y.npy");
      return load_npy_pair(paths[0], paths[1], in_features, out_features);
    }
    return load_npy_fields(paths, row_elems, inputs, names);
  }
  if (paths.size() == 1 && ends_with(spec, ".csv")) {
    Result<Dataset> d = load_csv(spec, in_features, out_features);
    return d;
  }
  return Status::Error("data '" + spec + "': expected file.csv or one .npy per input and "
                       "target, comma-separated (x.npy,y.npy)");
}

}  // namespace vouch::rt
