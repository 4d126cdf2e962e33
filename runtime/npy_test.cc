// Tests for npy.h: every accepted dtype and version, and every refusal with its reason.
#include "runtime/npy.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "runtime/test_files.h"

namespace vouch::rt {
namespace {

using test_files::npy_bytes;
using test_files::raw;
using test_files::write_temp;

void expect_error(const std::string& file_name, const std::string& bytes,
                  const std::string& reason) {
  std::string path = write_temp(file_name, bytes);
  Result<NpyArray> r = load_npy(path);
  ASSERT_FALSE(r.ok()) << file_name;
  EXPECT_NE(r.status().message().find(path + ": "), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find(reason), std::string::npos) << r.status().message();
}

TEST(NpyTest, LoadsF8Matrix) {
  std::vector<double> v = {1.5, -2, 3.25, 4, 5, 6e-3};
  std::string path = write_temp("f8.npy", npy_bytes("<f8", {3, 2}, raw<double>(v)));
  Result<NpyArray> r = load_npy(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r.value().shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(r.value().data, v);
}

TEST(NpyTest, LoadsF4I4I8AndVersion2) {
  std::vector<double> v = {1, -2, 3, 0.5};
  Result<NpyArray> f4 = load_npy(write_temp("f4.npy", npy_bytes("<f4", {4}, raw<float>(v))));
  ASSERT_TRUE(f4.ok()) << f4.status().message();
  EXPECT_EQ(f4.value().data, v);
  EXPECT_EQ(f4.value().shape, (std::vector<int64_t>{4}));

  std::vector<double> ints = {7, -8, 9, 2147483647};
  Result<NpyArray> i4 = load_npy(write_temp("i4.npy", npy_bytes("<i4", {2, 2}, raw<int32_t>(ints))));
  ASSERT_TRUE(i4.ok()) << i4.status().message();
  EXPECT_EQ(i4.value().data, ints);
  Result<NpyArray> i8 = load_npy(write_temp("i8.npy", npy_bytes("<i8", {2, 2}, raw<int64_t>(ints))));
  ASSERT_TRUE(i8.ok()) << i8.status().message();
  EXPECT_EQ(i8.value().data, ints);

  Result<NpyArray> v2 =
      load_npy(write_temp("v2.npy", npy_bytes("<f8", {1, 4}, raw<double>(v), false, 2)));
  ASSERT_TRUE(v2.ok()) << v2.status().message();
  EXPECT_EQ(v2.value().data, v);
  EXPECT_EQ(v2.value().shape, (std::vector<int64_t>{1, 4}));
}

TEST(NpyTest, ScalarArray) {
  Result<NpyArray> r = load_npy(write_temp("scalar.npy", npy_bytes("<f8", {}, raw<double>(std::vector<double>{2.5}))));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r.value().shape.empty());
  EXPECT_EQ(r.value().data, std::vector<double>{2.5});
}

TEST(NpyTest, MissingFile) {
  Result<NpyArray> r = load_npy(test_files::temp_path("does_not_exist.npy"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cannot open file"), std::string::npos);
  EXPECT_NE(r.status().message().find("does_not_exist.npy"), std::string::npos);
}

TEST(NpyTest, ReadsUint8) {
  std::string path =
      write_temp("u8.npy", npy_bytes("|u1", {2, 3}, std::string("\x00\x01\x07\x10\x80\xff", 6)));
  Result<NpyArray> r = load_npy(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r.value().shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.value().data, (std::vector<double>{0, 1, 7, 16, 128, 255}));
}

// numpy's bool (|b1, one byte 0 or 1 per element): an i1 field's file.
TEST(NpyTest, ReadsBool) {
  std::string path =
      write_temp("b1.npy", npy_bytes("|b1", {2, 2}, std::string("\x01\x00\x00\x01", 4)));
  Result<NpyArray> r = load_npy(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r.value().shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(r.value().data, (std::vector<double>{1, 0, 0, 1}));
}

TEST(NpyTest, Refusals) {
  std::string d6 = raw<double>(std::vector<double>(6, 1.0));
  expect_error("magic.npy", "PK\x03\x04 this is a zip file", "bad magic");
  expect_error("short.npy", "\x93NUM", "bad magic");
  expect_error("fortran.npy", npy_bytes("<f8", {3, 2}, d6, /*fortran=*/true), "fortran_order");
  expect_error("big.npy", npy_bytes(">f8", {3, 2}, d6), "big-endian");
  expect_error("dtype.npy", npy_bytes("<c16", {3}, d6), "unsupported dtype '<c16'");
  expect_error("i2.npy", npy_bytes("<i2", {3}, "abcdef"), "unsupported dtype '<i2'");
  expect_error("trunc.npy", npy_bytes("<f8", {3, 2}, d6.substr(0, 40)),
               "truncated data: shape needs 48 bytes, file has 40");
  expect_error("extra.npy", npy_bytes("<f8", {3, 2}, d6 + "xx"), "unexpected bytes");
  expect_error("v3.npy", npy_bytes("<f8", {3, 2}, d6, false, 3), "unsupported NPY version 3.0");
  std::string hdr_trunc = npy_bytes("<f8", {3, 2}, "").substr(0, 30);
  expect_error("hdr.npy", hdr_trunc, "truncated header");
  expect_error("dict.npy", npy_bytes("", {}, d6, false, 1, "{'descr': '<f8', 'shape': (3, 2), }"),
               "needs the keys");
  expect_error("key.npy",
               npy_bytes("", {}, d6, false, 1,
                         "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), 'x': 1}"),
               "unexpected key 'x'");
  expect_error("shape.npy",
               npy_bytes("", {}, d6, false, 1,
                         "{'descr': '<f8', 'fortran_order': False, 'shape': (3, -2), }"),
               "malformed header");
  expect_error("struct.npy",
               npy_bytes("", {}, d6, false, 1,
                         "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (6,), }"),
               "structured dtypes");
}

// Found by //tests/fuzz:npy_fuzzer under UBSan: an empty array whose other extents
// overflow int64 ((0, 2^62, 2^62)) loaded, and the data loaders' row length
// (dataset.cc) overflowed. Refused as numpy refuses to make one.
TEST(NpyTest, ExtentsBesideAZeroMustFitToo) {
  expect_error("zero_big.npy",
               npy_bytes("<f8", {0, int64_t(1) << 62, int64_t(1) << 62}, ""), "shape too large");
  Result<NpyArray> empty = load_npy(write_temp("zero_ok.npy", npy_bytes("<f8", {0, 3, 4}, "")));
  ASSERT_TRUE(empty.ok()) << empty.status().message();
  EXPECT_TRUE(empty.value().data.empty());
}

// Found by //tests/fuzz:npy_fuzzer: a big-endian dtype from the header was printed raw
// (control bytes, and up to the header's 1 MB). It is shown escaped and cut, as the
// header's keys are.
TEST(NpyTest, TheDtypeOfARefusalIsShownEscaped) {
  std::string d6 = raw<double>(std::vector<double>(6, 1.0));
  std::string path = write_temp("big_raw.npy", npy_bytes(std::string(">f\xd8\x1b[2J", 7) +
                                                              std::string(5000, 'x'),
                                                          {3, 2}, d6));
  Result<NpyArray> r = load_npy(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            path + ": big-endian dtype '>f\\xd8\\x1b[2J" + std::string(41, 'x') +
                "'... (5007 bytes) is not supported");
}

// Issue 14: a directory where an .npy is expected aborted with std::ios_failure.
TEST(NpyTest, ADirectoryIsRefusedByName) {
  const std::string dir = test_files::temp_path("x_dir.npy");
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  Result<NpyArray> a = load_npy(dir);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().message(), dir + ": is a directory, not a file");
}

// The reader streams (header, then the data a chunk at a time): a pipe loads as a file
// does, and a truncated one is refused.
TEST(NpyTest, LoadsFromAPipe) {
  std::vector<double> values(20000);
  for (size_t i = 0; i < values.size(); i++) values[i] = double(i) * 0.5;
  const std::string file = write_temp("big.npy", npy_bytes("<f4", {10000, 2}, raw<float>(values)));
  const std::string fifo = test_files::temp_path("x.fifo");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(std::system(("(cat " + file + " > " + fifo + ") &").c_str()), 0);
  Result<NpyArray> a = load_npy(fifo);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a.value().data, values);
  ASSERT_EQ(std::system(("(head -c 1000 " + file + " > " + fifo + ") &").c_str()), 0);
  Result<NpyArray> cut = load_npy(fifo);
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.status().message(),
            fifo + ": truncated data: shape needs 80000 bytes, file has 872");
}

}  // namespace
}  // namespace vouch::rt
