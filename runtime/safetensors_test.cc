// Tests for safetensors.h: the exact bytes of a small file, f32/f64 round trips, the
// atomic write, every corruption refused with its reason, and check_params.
#include "runtime/safetensors.h"

#include <algorithm>
#include <chrono>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/test_files.h"

namespace vouch::rt {
namespace {

using test_files::read_file;
using test_files::temp_path;
using test_files::write_temp;

// A safetensors file from a header text (no padding added) and data bytes.
std::string st_file(const std::string& header, const std::string& data) {
  std::string out;
  uint64_t n = header.size();
  for (int i = 0; i < 8; i++) out += char((n >> (8 * i)) & 0xFF);
  return out + header + data;
}

std::vector<NamedTensor> sample() {
  return {{"W1", {2, 3}, {1, -2, 3.5, 0.1, 1e-300, -0.0}},
          {"b1", {3}, {0.25, std::numeric_limits<double>::infinity(), 7}},
          {"scalar", {}, {42}},
          {"empty", {0, 4}, {}}};
}

TEST(SafetensorsTest, ExactBytesOfASmallFile) {
  std::string path = temp_path("small.safetensors");
  ASSERT_TRUE(save_safetensors(path, {{"w", {2}, {1.0, -2.0}}}, /*as_f64=*/false).ok());
  std::string header =
      "{\"w\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"__metadata__\":{\"format\":\"vouch\"}}";
  while (header.size() % 8 != 0) header += ' ';
  float data[2] = {1.0f, -2.0f};
  std::string expected = st_file(header, std::string(reinterpret_cast<char*>(data), 8));
  EXPECT_EQ(read_file(path), expected);
}

TEST(SafetensorsTest, RoundTripF64IsExact) {
  std::string path = temp_path("f64.safetensors");
  ASSERT_TRUE(save_safetensors(path, sample(), true).ok());
  Result<std::vector<NamedTensor>> r = load_safetensors(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r.value().size(), 4u);
  for (size_t i = 0; i < 4; i++) {
    EXPECT_EQ(r.value()[i].name, sample()[i].name);
    EXPECT_EQ(r.value()[i].shape, sample()[i].shape);
    EXPECT_EQ(r.value()[i].data, sample()[i].data);
  }
  EXPECT_TRUE(std::signbit(r.value()[0].data[5]));  // -0.0 survives
}

TEST(SafetensorsTest, RoundTripF32RoundsOnce) {
  std::string path = temp_path("f32.safetensors");
  ASSERT_TRUE(save_safetensors(path, sample(), false).ok());
  Result<std::vector<NamedTensor>> r = load_safetensors(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::vector<NamedTensor> want = sample();
  for (size_t i = 0; i < want.size(); i++)
    for (size_t j = 0; j < want[i].data.size(); j++)
      EXPECT_EQ(r.value()[i].data[j], double(float(want[i].data[j])));
  EXPECT_EQ(r.value()[0].data[4], 0.0);  // 1e-300 underflows in f32
}

bool dir_has_temp_files(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  bool found = false;
  while (dirent* e = readdir(d))
    if (std::strstr(e->d_name, ".vouch-") != nullptr) found = true;
  closedir(d);
  return found;
}

TEST(SafetensorsTest, AtomicWriteLeavesNoTempFileAndReplaces) {
  std::string path = temp_path("atomic.safetensors");
  ASSERT_TRUE(save_safetensors(path, sample(), true).ok());
  ASSERT_TRUE(save_safetensors(path, {{"only", {1}, {5}}}, true).ok());
  EXPECT_FALSE(dir_has_temp_files(temp_path("")));
  Result<std::vector<NamedTensor>> r = load_safetensors(path);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.value().size(), 1u);
  EXPECT_EQ(r.value()[0].name, "only");
}

TEST(SafetensorsTest, FailedWriteReportsAndLeavesNothing) {
  std::string path = temp_path("no_such_dir/p.safetensors");
  Status st = save_safetensors(path, sample(), true);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("no_such_dir does not exist"), std::string::npos) << st.message();
  // A directory where the file should go: refused before anything is written.
  std::string dir_target = temp_path("is_a_dir");
  ASSERT_EQ(system(("mkdir -p " + dir_target + "/inner").c_str()), 0);
  Status st2 = save_safetensors(dir_target, sample(), true);
  ASSERT_FALSE(st2.ok());
  EXPECT_EQ(st2.message(), "cannot write " + dir_target + ": it is a directory");
  EXPECT_FALSE(dir_has_temp_files(temp_path("")));
}

TEST(SafetensorsTest, SaveRefusesInconsistentTensors) {
  std::string path = temp_path("bad_save.safetensors");
  EXPECT_FALSE(save_safetensors(path, {{"w", {2, 2}, {1, 2, 3}}}, true).ok());
  EXPECT_FALSE(save_safetensors(path, {{"w", {1}, {1}}, {"w", {1}, {2}}}, true).ok());
  EXPECT_FALSE(save_safetensors(path, {{"__metadata__", {1}, {1}}}, true).ok());
}

void expect_refused(const std::string& name, const std::string& bytes, const std::string& reason) {
  std::string path = write_temp(name, bytes);
  Result<std::vector<NamedTensor>> r = load_safetensors(path);
  ASSERT_FALSE(r.ok()) << name;
  EXPECT_EQ(r.status().message().rfind(path + ": ", 0), 0u) << r.status().message();
  EXPECT_NE(r.status().message().find(reason), std::string::npos)
      << name << ": " << r.status().message();
}

TEST(SafetensorsTest, RefusesCorruptFiles) {
  std::string d16(16, '\0');
  auto entry = [](const char* name, const char* dtype, const char* shape, const char* offsets) {
    return std::string("\"") + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
           ",\"data_offsets\":" + offsets + "}";
  };
  Result<std::vector<NamedTensor>> missing = load_safetensors(temp_path("absent.safetensors"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("absent.safetensors: cannot open file"),
            std::string::npos);

  expect_refused("short.st", "abc", "file is 3 bytes, shorter than the 8-byte header length");
  expect_refused("hdrlen.st", st_file("{}", "").substr(0, 8) + "{", "header length 2 is larger than the file (9 bytes)");
  expect_refused("json.st", st_file("{\"w\":{", d16), "header: malformed JSON at byte");
  expect_refused("notobj.st", st_file("[1,2]", d16), "header is not a JSON object");
  expect_refused("bf16.st", st_file("{" + entry("w", "BF16", "[8]", "[0,16]") + "}", d16),
                 "tensor 'w': unsupported dtype 'BF16' (only F32 and F64)");
  expect_refused("mismatch.st", st_file("{" + entry("w", "F64", "[3]", "[0,16]") + "}", d16),
                 "tensor 'w': shape [3] as F64 needs 24 bytes but data_offsets [0,16] span 16");
  expect_refused("reversed.st", st_file("{" + entry("w", "F32", "[0]", "[16,8]") + "}", d16),
                 "data_offsets [16,8] are reversed");
  expect_refused("outside.st", st_file("{" + entry("w", "F32", "[0]", "[20,20]") + "}", d16),
                 "lie outside the data area (16 bytes)");
  expect_refused("trunc.st", st_file("{" + entry("w", "F64", "[3]", "[0,24]") + "}", d16),
                 "truncated data: tensor 'w' ends at byte 24 but the data area holds 16 bytes");
  expect_refused("overlap.st",
                 st_file("{" + entry("a", "F32", "[3]", "[0,12]") + "," +
                             entry("b", "F64", "[1]", "[8,16]") + "}",
                         d16),
                 "tensors 'a' and 'b' overlap");
  expect_refused("negshape.st", st_file("{" + entry("w", "F32", "[-1]", "[0,4]") + "}", d16),
                 "shape holds a non-integer or negative entry");
  expect_refused("offs.st", st_file("{" + entry("w", "F32", "[1]", "[0]") + "}", d16),
                 "data_offsets must be two non-negative integers");
  expect_refused("nofield.st", st_file("{\"w\":{\"dtype\":\"F32\",\"shape\":[1]}}", d16),
                 "needs the fields dtype, shape and data_offsets");
  expect_refused("extra.st",
                 st_file("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],\"x\":1}}", d16),
                 "unexpected field 'x'");
  expect_refused("meta.st", st_file("{\"__metadata__\":3}", d16), "__metadata__ is not a JSON object");
  // An empty name: save_safetensors would refuse to write it back.
  expect_refused("noname.st", st_file("{" + entry("", "F32", "[4]", "[0,16]") + "}", d16),
                 "a tensor has an empty name");
  expect_refused("dup.st",
                 st_file("{" + entry("w", "F32", "[1]", "[0,4]") + "," +
                             entry("w", "F32", "[1]", "[4,8]") + "}",
                         d16),
                 "duplicate key 'w'");

  // A valid file cut short.
  std::string good = temp_path("good.safetensors");
  ASSERT_TRUE(save_safetensors(good, sample(), true).ok());
  std::string bytes = read_file(good);
  expect_refused("cut.st", bytes.substr(0, bytes.size() - 8), "truncated data: tensor 'scalar'");
  // Its header length one byte short: the data area starts a byte early (at the header's
  // last padding space), so every tensor would load shifted by a byte.
  std::string short_header = bytes;
  short_header[0] = char(uint8_t(short_header[0]) - 1);
  expect_refused("hdrshort.st", short_header,
                 "but its tensors cover " + std::to_string(bytes.size() - 8 -
                                                           (uint8_t(bytes[0]) |
                                                            uint8_t(bytes[1]) << 8)) +
                     " (a wrong header length, or trailing bytes)");
  expect_refused("trailing.st", bytes + "x", "(a wrong header length, or trailing bytes)");
  // A gap between two tensors.
  expect_refused("gap.st",
                 st_file("{" + entry("a", "F32", "[2]", "[0,8]") + "," +
                             entry("b", "F32", "[1]", "[12,16]") + "}",
                         d16),
                 "bytes [8,12) of the data area belong to no tensor");
}

// Issue 14: --load-params with a directory aborted with std::ios_failure.
TEST(SafetensorsTest, ADirectoryIsRefusedByName) {
  const std::string dir = temp_path("params_dir.st");
  ASSERT_EQ(system(("mkdir -p " + dir).c_str()), 0);
  Result<std::vector<NamedTensor>> r = load_safetensors(dir);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), dir + ": is a directory, not a file");
}

// The reader streams: a pipe (no size to check against) loads the same tensors, and
// a byte after its data area is refused.
TEST(SafetensorsTest, LoadsFromAPipe) {
  std::string good = temp_path("piped.safetensors");
  ASSERT_TRUE(save_safetensors(good, sample(), true).ok());
  const std::string fifo = temp_path("params.fifo");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(system(("(cat " + good + " > " + fifo + ") &").c_str()), 0);
  Result<std::vector<NamedTensor>> r = load_safetensors(fifo);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r.value()[0].data, sample()[0].data);
  ASSERT_EQ(system(("(cat " + good + "; printf x) > " + fifo + " &").c_str()), 0);
  Result<std::vector<NamedTensor>> extra = load_safetensors(fifo);
  ASSERT_FALSE(extra.ok());
  EXPECT_EQ(extra.status().message(),
            fifo + ": bytes after the data area (a wrong header length, or trailing bytes)");
}

// Issue 14: NaN / inf params were loaded silently; the check names tensor and index.
TEST(SafetensorsTest, NonFiniteParamsAreFound) {
  EXPECT_TRUE(check_finite_params("p.st", {{"w", {2}, {1, 2}}}).ok());
  Status inf = check_finite_params("p.st", sample());  // b1 holds inf at index 1
  ASSERT_FALSE(inf.ok());
  EXPECT_EQ(inf.message(), "p.st: tensor 'b1' holds inf at index 1: parameters must be finite");
  Status nan = check_finite_params("p.st", {{"w", {2, 3}, {0, 0, 0, 0, NAN, 0}}});
  ASSERT_FALSE(nan.ok());
  EXPECT_EQ(nan.message(),
            "p.st: tensor 'w' holds nan at index 4 ([1,1]): parameters must be finite");
}

TEST(SafetensorsTest, EmptyTensorsNeverOverlap) {
  std::string d8(8, '\0');
  std::string header =
      "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"z\":{\"dtype\":\"F64\",\"shape\":[0],\"data_offsets\":[4,4]}}";
  Result<std::vector<NamedTensor>> r = load_safetensors(write_temp("empty_in.st", st_file(header, d8)));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r.value()[1].data.empty());
}

TEST(CheckParamsTest, AcceptsExactMatch) {
  EXPECT_TRUE(check_params(sample(), {{"scalar", {}}, {"W1", {2, 3}}, {"b1", {3}}, {"empty", {0, 4}}})
                  .ok());
}

TEST(CheckParamsTest, ListsEveryProblem) {
  Status st = check_params(sample(), {{"W1", {3, 2}}, {"b1", {3}}, {"W2", {1, 8}}});
  ASSERT_FALSE(st.ok());
  const std::string& m = st.message();
  EXPECT_NE(m.find("(4 problems)"), std::string::npos) << m;
  EXPECT_NE(m.find("parameter 'W1' has shape [2,3], the model expects [3,2]"), std::string::npos) << m;
  EXPECT_NE(m.find("missing parameter 'W2' (expected shape [1,8])"), std::string::npos) << m;
  EXPECT_NE(m.find("unexpected parameter 'scalar'"), std::string::npos) << m;
  EXPECT_NE(m.find("unexpected parameter 'empty'"), std::string::npos) << m;
  EXPECT_EQ(m.find("'b1'"), std::string::npos) << m;
}

// Found by //tests/fuzz:safetensors_fuzzer: refusals printed names, fields and dtypes
// from the header raw (control bytes, any length). They are shown escaped and cut.
TEST(SafetensorsTest, RefusalsShowTheHeadersTextEscaped) {
  std::string d16(16, '\0');
  expect_refused("field.st",
                 st_file("{\"w\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4],"
                         "\"d\\u001b[2J\":1}}",
                         d16),
                 "tensor 'w': unexpected field 'd\\x1b[2J'");
  expect_refused("dtype.st",
                 st_file("{\"w\":{\"dtype\":\"F\\u00ff" + std::string(100, 'x') +
                             "\",\"shape\":[1],\"data_offsets\":[0,4]}}",
                         d16),
                 "unsupported dtype 'F\\xc3\\xbf" + std::string(45, 'x') + "'... (103 bytes)");
  expect_refused("trunc_name.st",
                 st_file("{\"\\t\":{\"dtype\":\"F64\",\"shape\":[3],\"data_offsets\":[0,24]}}",
                         d16),
                 "truncated data: tensor '\\x09' ends at byte 24");
  expect_refused("overlap_names.st",
                 st_file("{\"a\\n\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,12]},"
                         "\"b\\r\":{\"dtype\":\"F64\",\"shape\":[1],\"data_offsets\":[8,16]}}",
                         d16),
                 "tensors 'a\\x0a' and 'b\\x0d' overlap");
}

// Found by //tests/fuzz:safetensors_fuzzer's property that a tensor holds its shape's
// elements: [2^61] as F64 needs 2^64 bytes, which wrapped to 0, so data_offsets [0,0]
// loaded a tensor of that shape holding nothing.
TEST(SafetensorsTest, ATensorsByteCountCannotWrap) {
  expect_refused("wrap.st",
                 st_file("{\"w\":{\"dtype\":\"F64\",\"shape\":[2305843009213693952],"
                         "\"data_offsets\":[0,0]}}",
                         ""),
                 "tensor 'w': shape [2305843009213693952] is too large");
  expect_refused("wrap32.st",
                 st_file("{\"w\":{\"dtype\":\"F32\",\"shape\":[1073741824,4294967296],"
                         "\"data_offsets\":[0,0]}}",
                         ""),
                 "is too large");
}

// Found with the safetensors fuzz target's inputs scaled up: a checkpoint of 200,000
// (empty) tensors took 100 s to load and check, quadratic in the names (the JSON
// reader's duplicate keys, check_params' matching, save's duplicate names); a 100 MB
// header, hours. Linear now; check_params lists the first 20 problems and counts the
// rest.
TEST(SafetensorsTest, ManyTensorsLoadAndCheckInLinearTime) {
  const int kTensors = 200000;
  std::vector<NamedTensor> many(kTensors);
  for (int i = 0; i < kTensors; i++) many[i] = {"t" + std::to_string(i), {0}, {}};
  auto start = std::chrono::steady_clock::now();
  const std::string path = temp_path("many.safetensors");
  ASSERT_TRUE(save_safetensors(path, many, true).ok());
  Result<std::vector<NamedTensor>> r = load_safetensors(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r.value().size(), size_t(kTensors));
  Status st = check_params(r.value(), {{"w", {2}}});
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 20.0);
  ASSERT_FALSE(st.ok());
  const std::string& m = st.message();
  EXPECT_EQ(m.rfind("parameters do not match the model (200001 problems):\n"
                    "  missing parameter 'w' (expected shape [2])\n"
                    "  unexpected parameter 't0'\n",
                    0),
            0u)
      << m.substr(0, 300);
  EXPECT_NE(m.find("\n  unexpected parameter 't18'\n  ... and 199981 more"), std::string::npos)
      << m.substr(m.size() - 200);
  EXPECT_EQ(std::count(m.begin(), m.end(), '\n'), 21);  // 22 lines
}

}  // namespace
}  // namespace vouch::rt
