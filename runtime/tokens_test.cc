// The token stream (runtime/tokens.h, runtime/cuda/kernels/token_windows.h): both file
// formats parse; every corruption is refused with the file and its reason; token ids
// are checked against the model's fields with the first offending position; the
// sequential windows are llm.c's (worked out by hand below); the random windows equal
// tools/data/token_windows_reference.py's, an independent Python implementation of the
// documented formula (the expected numbers are its output, the commands quoted).
#include "runtime/tokens.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/cuda/kernels/counter_rng.h"
#include "runtime/cuda/kernels/token_windows.h"
#include "runtime/model_data.h"
#include "runtime/test_files.h"

namespace vouch::rt {
namespace {

using test_files::npy_bytes;
using test_files::raw;
using test_files::write_temp;

// llm.c's shard: 256 int32 (magic, version, count, zeros), then the tokens.
std::string shard(int32_t magic, int32_t version, int32_t claimed, const std::string& tokens) {
  std::vector<int32_t> header(256, 0);
  header[0] = magic;
  header[1] = version;
  header[2] = claimed;
  return raw<int32_t>(header) + tokens;
}

std::vector<int64_t> iota(int64_t n, int64_t mod) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; i++) v.push_back(i % mod);
  return v;
}

std::string open_error(const std::string& name, const std::string& bytes) {
  const std::string path = write_temp(name, bytes);
  Result<std::shared_ptr<TokenFile>> f = TokenFile::open(path);
  EXPECT_FALSE(f.ok()) << name;
  if (f.ok()) return "";
  EXPECT_EQ(f.status().message().rfind(path + ": ", 0), 0u) << f.status().message();
  return f.status().message();
}

// A GPT-like model: input idx and target labels, i32 [batch, T], ids of a V-row table
// (the input feeds an embedding) and labels of V classes (cross_entropy).
ModelDescription token_model(int64_t T, int64_t V, int64_t batch) {
  ModelDescription m;
  m.name = "gpt";
  m.batch = batch;
  m.fields.push_back({"idx", DType::I32, T, false, 0, V - 1, INT64_MIN,
                      "embedding's ids (a table of " + std::to_string(V) + " rows)"});
  m.fields.push_back({"labels", DType::I32, T, true, 0, V - 1, -100,
                      "cross_entropy's labels (" + std::to_string(V) + " classes, ignore_index -100)"});
  m.in_features = m.out_features = T;
  return m;
}

TEST(TokenFileTest, ReadsLlmcShardsOfUint16AndUint32) {
  const std::vector<int64_t> u16 = {0, 1, 65535, 7, 300};
  std::string path = write_temp("u16.bin", shard(20240520, 1, 5, raw<uint16_t>(u16)));
  Result<std::shared_ptr<TokenFile>> f = TokenFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f.value()->count(), 5);
  EXPECT_EQ(f.value()->token_bytes(), 2);
  for (int64_t i = 0; i < 5; i++) EXPECT_EQ(f.value()->at(i), u16[size_t(i)]);
  EXPECT_EQ(f.value()->format(), "llm.c shard, magic 20240520 (uint16 tokens)");

  const std::vector<int64_t> u32 = {128000, 5, 4294967295LL};
  path = write_temp("u32.bin", shard(20240801, 7, 3, raw<uint32_t>(u32)));
  f = TokenFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f.value()->count(), 3);
  EXPECT_EQ(f.value()->token_bytes(), 4);
  for (int64_t i = 0; i < 3; i++) EXPECT_EQ(f.value()->at(i), u32[size_t(i)]);
  // The tokens start right after the 1024-byte header of the mapping.
  EXPECT_EQ(static_cast<const char*>(f.value()->tokens()) -
                static_cast<const char*>(f.value()->mapping()),
            1024);
}

TEST(TokenFileTest, ReadsOneDimensionalNpyOfUint16AndInt32) {
  const std::vector<int64_t> ids = {3, 0, 9, 9, 2, 65535};
  std::string path = write_temp("u2.npy", npy_bytes("<u2", {6}, raw<uint16_t>(ids)));
  Result<std::shared_ptr<TokenFile>> f = TokenFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f.value()->count(), 6);
  EXPECT_EQ(f.value()->token_bytes(), 2);
  for (int64_t i = 0; i < 6; i++) EXPECT_EQ(f.value()->at(i), ids[size_t(i)]);

  const std::vector<int64_t> i4 = {1, -4, 70000};
  path = write_temp("i4.npy", npy_bytes("<i4", {3}, raw<int32_t>(i4)));
  f = TokenFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f.value()->count(), 3);
  EXPECT_EQ(f.value()->token_bytes(), 4);
  for (int64_t i = 0; i < 3; i++) EXPECT_EQ(f.value()->at(i), i4[size_t(i)]);  // signed
}

TEST(TokenFileTest, RefusesCorruptShards) {
  const std::string tokens = raw<uint16_t>(iota(10, 50));
  std::string e = open_error("magic.bin", shard(20240521, 1, 10, tokens));
  EXPECT_NE(e.find("bad magic 20240521"), std::string::npos) << e;
  e = open_error("version.bin", shard(20240520, 2, 10, tokens));
  EXPECT_NE(e.find("magic 20240520 (uint16 tokens) needs version 1, got 2"), std::string::npos)
      << e;
  e = open_error("version32.bin", shard(20240801, 1, 10, raw<uint32_t>(iota(10, 50))));
  EXPECT_NE(e.find("needs version 7, got 1"), std::string::npos) << e;
  e = open_error("short.bin", shard(20240520, 1, 10, tokens).substr(0, 1000));
  EXPECT_NE(e.find("truncated: 1000 bytes, less than llm.c's header"), std::string::npos) << e;
  // The header claims 11 tokens, the file holds 10: both numbers named.
  e = open_error("count.bin", shard(20240520, 1, 11, tokens));
  EXPECT_NE(e.find("file size mismatch: the header claims 11 tokens of 2 bytes, 1046 bytes "
                   "with the header, but the file has 1044 bytes"),
            std::string::npos)
      << e;
  e = open_error("extra.bin", shard(20240520, 1, 9, tokens));
  EXPECT_NE(e.find("claims 9 tokens of 2 bytes, 1042 bytes with the header, but the file has "
                   "1044 bytes"),
            std::string::npos)
      << e;
  e = open_error("negative.bin", shard(20240520, 1, -3, tokens));
  EXPECT_NE(e.find("the header claims -3 tokens"), std::string::npos) << e;
  e = open_error("empty.bin", "");
  EXPECT_NE(e.find("empty file"), std::string::npos) << e;
  Result<std::shared_ptr<TokenFile>> missing = TokenFile::open(test_files::temp_path("nope.bin"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("cannot open file"), std::string::npos);
}

// A directory given as the token file is named as one (issue 14's audit of file
// arguments).
TEST(TokenFileTest, RefusesADirectoryByName) {
  const std::string dir = test_files::temp_path("tokens_dir.bin");
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  Result<std::shared_ptr<TokenFile>> f = TokenFile::open(dir);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(), dir + ": is a directory, not a file");
}

TEST(TokenFileTest, RefusesNpyOfOtherDtypesRanksOrSizes) {
  std::string e = open_error("f4.npy", npy_bytes("<f4", {3}, raw<float>(iota(3, 9))));
  EXPECT_NE(e.find("a token .npy holds <u2 (uint16) or <i4 (int32) ids, got dtype '<f4'"),
            std::string::npos)
      << e;
  e = open_error("i8.npy", npy_bytes("<i8", {3}, raw<int64_t>(iota(3, 9))));
  EXPECT_NE(e.find("got dtype '<i8'"), std::string::npos) << e;
  e = open_error("2d.npy", npy_bytes("<i4", {2, 3}, raw<int32_t>(iota(6, 9))));
  EXPECT_NE(e.find("a token .npy is 1-D (the stream of ids), got shape (2, 3)"),
            std::string::npos)
      << e;
  e = open_error("trunc.npy", npy_bytes("<u2", {8}, raw<uint16_t>(iota(7, 9))));
  EXPECT_NE(e.find("truncated data: 8 tokens need 16 bytes after the header, the file has 14"),
            std::string::npos)
      << e;
  e = open_error("big.npy", npy_bytes(">u2", {2}, raw<uint16_t>(iota(2, 9))));
  EXPECT_NE(e.find("big-endian"), std::string::npos) << e;
}

TEST(TokenFileTest, ChecksIdsAgainstTheModelAndTheWindowLength) {
  const ModelDescription m = token_model(/*T=*/4, /*V=*/50, /*batch=*/2);
  std::vector<int64_t> ids = iota(20, 50);
  ids[13] = 50;  // the first id outside the 50-row table
  ids[17] = 60;
  std::string path = write_temp("vocab.bin", shard(20240520, 1, 20, raw<uint16_t>(ids)));
  Result<std::shared_ptr<TokenFile>> f = TokenFile::open(path);
  ASSERT_TRUE(f.ok());
  Status st = check_token_ids(*f.value(), m, 4);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), path + ": token 13 is 50, not an id the model accepts: field 'idx' "
                                 "is embedding's ids (a table of 50 rows): 0..49");
  // A negative int32 id.
  std::vector<int64_t> neg = iota(20, 50);
  neg[4] = -1;
  path = write_temp("neg.npy", npy_bytes("<i4", {20}, raw<int32_t>(neg)));
  f = TokenFile::open(path);
  ASSERT_TRUE(f.ok());
  st = check_token_ids(*f.value(), m, 4);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("token 4 is -1"), std::string::npos) << st.message();
  // Four tokens are one short of a window of T + 1 = 5.
  path = write_temp("few.bin", shard(20240520, 1, 4, raw<uint16_t>(iota(4, 50))));
  f = TokenFile::open(path);
  ASSERT_TRUE(f.ok());
  st = check_token_ids(*f.value(), m, 4);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), path + ": 4 tokens, fewer than one window of 5 (the context 4 and "
                                 "the next token)");
  path = write_temp("five.bin", shard(20240520, 1, 5, raw<uint16_t>(iota(5, 50))));
  f = TokenFile::open(path);
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(check_token_ids(*f.value(), m, 4).ok());
}

TEST(TokenFileTest, NeedsOneI32InputAndTargetOfOneLength) {
  EXPECT_EQ(token_context(token_model(8, 10, 2)).value(), 8);
  ModelDescription three = token_model(8, 10, 2);
  three.fields.push_back({"mask", DType::I32, 8, false});
  Result<int64_t> r = token_context(three);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(
                "a token stream feeds exactly one input and one target, both i32[batch, T]"),
            std::string::npos)
      << r.status().message();
  ModelDescription real = token_model(8, 10, 2);
  real.fields[1].dtype = DType::Real;
  EXPECT_FALSE(token_context(real).ok());
  ModelDescription lengths = token_model(8, 10, 2);
  lengths.fields[1].row_elems = 7;
  EXPECT_FALSE(token_context(lengths).ok());
}

TEST(TokenWindowsTest, SequentialWindowsAreLlmcs) {
  // N = 20, T = 4: W = floor(19 / 4) = 4 windows at 0, 4, 8, 12 (window 3 reads tokens
  // 12..16; token 19 is never read). Batch 3: step 0 takes windows 0, 1, 2; step 1
  // windows 3, 0, 1 (n = 3, 4, 5 mod 4); step 2 windows 2, 3, 0.
  auto starts = [](long long step) {
    std::vector<long long> s;
    for (long long r = 0; r < 3; r++)
      s.push_back(vouch::token_window_start(step, r, 3, 20, 4, false, 99));
    return s;
  };
  EXPECT_EQ(starts(0), (std::vector<long long>{0, 4, 8}));
  EXPECT_EQ(starts(1), (std::vector<long long>{12, 0, 4}));
  EXPECT_EQ(starts(2), (std::vector<long long>{8, 12, 0}));
  EXPECT_EQ(token_window_count(20, 4), 4);
  EXPECT_EQ(token_window_count(21, 4), 5);  // 21 tokens: window 4 reads 16..20

  // The rows of step 1 from a file whose token i is 100 + i: input = window[0, 4),
  // target = window[1, 5].
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 20; i++) ids.push_back(100 + i);
  std::string path = write_temp("seq.bin", shard(20240520, 1, 20, raw<uint16_t>(ids)));
  Result<std::shared_ptr<TokenFile>> f = TokenFile::open(path);
  ASSERT_TRUE(f.ok());
  std::vector<int32_t> in(12), out(12);
  fill_token_batch(*f.value(), 4, 1, 3, 3, false, 0, in.data(), out.data());
  EXPECT_EQ(in, (std::vector<int32_t>{112, 113, 114, 115, 100, 101, 102, 103, 104, 105, 106,
                                      107}));
  EXPECT_EQ(out, (std::vector<int32_t>{113, 114, 115, 116, 101, 102, 103, 104, 105, 106, 107,
                                       108}));
}

TEST(TokenWindowsTest, RandomWindowsMatchThePythonReference) {
  // SplitMix64's first output from state 0 (a published value): the generator's mix.
  EXPECT_EQ(vouch::rng_mix(0), 0xe220a8397b1dcdafULL);
  auto starts = [](long long n, long long t, unsigned long long seed, long long step,
                   long long rows) {
    std::vector<long long> s;
    for (long long r = 0; r < rows; r++)
      s.push_back(vouch::token_window_start(step, r, /*batch (unused)=*/rows, n, t, true, seed));
    return s;
  };
  // tools/data/token_windows_reference.py random N T SEED STEP ROWS
  EXPECT_EQ(starts(1000, 8, 0, 0, 6), (std::vector<long long>{296, 89, 951, 736, 691, 521}));
  EXPECT_EQ(starts(1000, 8, 0, 1, 6), (std::vector<long long>{412, 127, 769, 343, 440, 897}));
  EXPECT_EQ(starts(1000, 8, 2026, 7, 6), (std::vector<long long>{676, 463, 841, 463, 545, 157}));
  EXPECT_EQ(starts(65, 64, UINT64_MAX, 1LL << 40, 4), (std::vector<long long>{0, 0, 0, 0}));
  EXPECT_EQ(starts(10000000000LL, 1024, 42, 123456, 3),
            (std::vector<long long>{2210850045LL, 7972837563LL, 6194664497LL}));
  // Every start leaves room for T + 1 tokens: in [0, N - T - 1].
  for (long long step = 0; step < 50; step++)
    for (long long r = 0; r < 8; r++) {
      const long long s = vouch::token_window_start(step, r, 8, 30, 8, true, 5);
      EXPECT_GE(s, 0);
      EXPECT_LE(s, 30 - 8 - 1);
    }
}

TEST(TokenWindowsTest, TheInterpreterReadsTheFirstSequentialBatch) {
  ModelDescription m = token_model(4, 200, 2);
  m.data.kind = DataSpec::Tokens;
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < 13; i++) ids.push_back(100 + i);
  m.data.path = write_temp("interp.npy", npy_bytes("<u2", {13}, raw<uint16_t>(ids)));
  Result<Dataset> d = load_model_data(m, "");
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d.value().rows, 2);
  EXPECT_EQ(d.value().x, (std::vector<double>{100, 101, 102, 103, 104, 105, 106, 107}));
  EXPECT_EQ(d.value().y, (std::vector<double>{101, 102, 103, 104, 105, 106, 107, 108}));
  EXPECT_FALSE(load_model_data(m, "a.bin,b.bin").ok());
}

}  // namespace
}  // namespace vouch::rt
