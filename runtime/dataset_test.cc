// Tests for dataset.h: the regression grid of the reference semantics, the CSV loader
// (success and every error path), NPY pairs and the data-spec dispatch.
#include "runtime/dataset.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdlib>

#include "runtime/test_files.h"

namespace vouch::rt {
namespace {

using test_files::npy_bytes;
using test_files::raw;
using test_files::write_temp;

TEST(RegressionGridTest, QuickstartRowsAndTargets) {
  Dataset d = regression_grid(-1, 1, 5);
  ASSERT_EQ(d.rows, 25);
  EXPECT_EQ(d.in_features, 2);
  EXPECT_EQ(d.out_features, 1);
  ASSERT_EQ(d.x.size(), 50u);
  ASSERT_EQ(d.y.size(), 25u);
  // Row r = (xs[r / 5], xs[r % 5]), xs = {-1, -0.5, 0, 0.5, 1}.
  EXPECT_EQ(d.x[0], -1.0);
  EXPECT_EQ(d.x[1], -1.0);
  EXPECT_EQ(d.x[2 * 1 + 0], -1.0);  // row 1
  EXPECT_EQ(d.x[2 * 1 + 1], -0.5);
  EXPECT_EQ(d.x[2 * 7 + 0], -0.5);  // row 7 = (xs[1], xs[2])
  EXPECT_EQ(d.x[2 * 7 + 1], 0.0);
  EXPECT_EQ(d.x[2 * 24 + 0], 1.0);
  EXPECT_EQ(d.x[2 * 24 + 1], 1.0);
  // y = 0.8 relu(x1+x2) - 0.4 relu(x2-x1) + 0.2, by hand:
  EXPECT_DOUBLE_EQ(d.y[0], 0.2);                // (-1,-1): 0 - 0 + 0.2
  EXPECT_DOUBLE_EQ(d.y[4], 0.2 - 0.8);          // (-1, 1): 0 - 0.4*2 + 0.2
  EXPECT_DOUBLE_EQ(d.y[7], 0.2 - 0.2);          // (-0.5, 0): -0.4*0.5 + 0.2
  EXPECT_DOUBLE_EQ(d.y[19], 1.2);               // (0.5, 1): 0.8*1.5 - 0.4*0.5 + 0.2
  EXPECT_DOUBLE_EQ(d.y[20], 0.2);               // (1, -1)
  EXPECT_DOUBLE_EQ(d.y[24], 1.8);               // (1, 1): 0.8*2 + 0.2
}

TEST(CsvTest, LoadsWithHeaderAndBlankLines) {
  std::string path = write_temp("ok.csv", "x1, x2 ,y\n\n1,2,3\r\n  -0.5 ,1e-3, +4\n\n");
  Result<Dataset> d = load_csv(path, 2, 1);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d.value().rows, 2);
  EXPECT_EQ(d.value().x, (std::vector<double>{1, 2, -0.5, 1e-3}));
  EXPECT_EQ(d.value().y, (std::vector<double>{3, 4}));
}

TEST(CsvTest, LoadsWithoutHeader) {
  Result<Dataset> d = load_csv(write_temp("nohdr.csv", "1,2,3,4\n5,6,7,8"), 1, 3);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d.value().rows, 2);
  EXPECT_EQ(d.value().x, (std::vector<double>{1, 5}));
  EXPECT_EQ(d.value().y, (std::vector<double>{2, 3, 4, 6, 7, 8}));
}

void expect_csv_error(const std::string& name, const std::string& text,
                      const std::string& where, const std::string& reason) {
  std::string path = write_temp(name, text);
  Result<Dataset> d = load_csv(path, 2, 1);
  ASSERT_FALSE(d.ok()) << name;
  EXPECT_NE(d.status().message().find(path + where), std::string::npos) << d.status().message();
  EXPECT_NE(d.status().message().find(reason), std::string::npos) << d.status().message();
}

TEST(CsvTest, Errors) {
  expect_csv_error("cols.csv", "a,b,y\n1,2,3\n\n4,5\n", ":4: ",
                   "expected 3 columns (2 inputs + 1 outputs), found 2");
  expect_csv_error("nan.csv", "1,2,3\n4,abc,6\n", ":2: ", "column 2: 'abc' is not a number");
  expect_csv_error("empty_field.csv", "1,,3\n", ":1: ", "column 2: '' is not a number");
  expect_csv_error("inf.csv", "1,2,3\n1,inf,3\n", ":2: ", "'inf' is not a finite number");
  expect_csv_error("mixed_first.csv", "1,x,3\n", ":1: ", "column 2: 'x'");
  expect_csv_error("empty.csv", "", ": ", "empty file");
  expect_csv_error("blank.csv", "\n  \n", ": ", "empty file");
  expect_csv_error("header_only.csv", "x1,x2,y\n", ": ", "no data rows after the header");
  Result<Dataset> missing = load_csv(test_files::temp_path("missing.csv"), 2, 1);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("missing.csv: cannot open file"), std::string::npos);
  EXPECT_FALSE(load_csv(write_temp("zero.csv", "1\n"), 0, 1).ok());
}

// Issue 14: a first row of nan / inf was dropped as a "header"; a header is a line none
// of whose fields is a number, and nan is one (refused as non-finite, as any row's).
TEST(CsvTest, ANonFiniteFirstRowIsDataNotAHeader) {
  expect_csv_error("nan_first.csv", "nan,inf,1\n1,2,3\n", ":1: ",
                   "column 1: 'nan' is not a finite number");
  // -inf is a number: the line is data, and its first field is not one.
  expect_csv_error("inf_first.csv", "x,-inf,y\n1,2,3\n", ":1: ", "column 1: 'x' is not a number");
  Result<Dataset> header = load_csv(write_temp("names.csv", "x1,x2,y\n1,2,3\n"), 2, 1);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header.value().rows, 1);
}

// Issue 14: '+-1' was read as -1. A field is one whole number.
TEST(CsvTest, NumbersAreStrict) {
  expect_csv_error("plus_minus.csv", "1,2,3\n+-1,2,3\n", ":2: ", "column 1: '+-1' is not a number");
  expect_csv_error("plus_plus.csv", "1,2,3\n1,++2,3\n", ":2: ", "column 2: '++2' is not a number");
  expect_csv_error("trailing.csv", "1,2,3\n1,2,3x\n", ":2: ", "column 3: '3x' is not a number");
  expect_csv_error("inner_space.csv", "1,2,3\n1,2 5,3\n", ":2: ", "column 2: '2 5' is not a number");
  Result<Dataset> ok = load_csv(write_temp("signs.csv", "+1,-2,+.5e1\n"), 2, 1);
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_EQ(ok.value().x, (std::vector<double>{1, -2}));
  EXPECT_EQ(ok.value().y, (std::vector<double>{5}));
}

// Found by //tests/fuzz:csv_fuzzer: a decimal beyond float64's range was "not a
// number". It is a number, rounded as IEEE 754 (and Python's float()) rounds it: 0
// below the range (kept, with its sign), infinity above (refused as not finite).
TEST(CsvTest, NumbersBeyondF64RoundAsIeeeSays) {
  Result<Dataset> tiny =
      load_csv(write_temp("tiny.csv", "1e-400,-0.0000000000e-330,1e-310\n"
                                      "0.000000000000000000001e-305,1e-99999999999999999999,2\n"),
               2, 1);
  ASSERT_TRUE(tiny.ok()) << tiny.status().message();
  EXPECT_EQ(tiny.value().x, (std::vector<double>{0, 0, 0, 0}));
  EXPECT_TRUE(std::signbit(tiny.value().x[1]));
  EXPECT_EQ(tiny.value().y, (std::vector<double>{1e-310, 2}));
  expect_csv_error("huge.csv", "1,2,3\n1,1e400,3\n", ":2: ",
                   "column 2: '1e400' is not a finite number");
  expect_csv_error("huge_neg.csv", "1,2,3\n1,2,-1000e99999999999999999999\n", ":2: ",
                   "column 3: '-1000e99999999999999999999' is not a finite number");
  // 400 digits and a negative exponent: still 1e390, above the range.
  expect_csv_error("long.csv", "1" + std::string(400, '0') + "e-10,2,3\n", ":1: ",
                   "is not a finite number");
  // 300 zeros after the point and an exponent of -30: 1e-331, below it.
  Result<Dataset> small =
      load_csv(write_temp("small.csv", "0." + std::string(300, '0') + "1e-30,1,2\n"), 2, 1);
  ASSERT_TRUE(small.ok()) << small.status().message();
  EXPECT_EQ(small.value().x[0], 0.0);
}

// Issue 14: messages printed BOMs, NUL bytes and 10 MB fields raw. A BOM at the start is
// skipped; other bytes that are not printable are shown as \xNN; long fields are cut.
TEST(CsvTest, MessagesShowFieldsEscapedAndCut) {
  Result<Dataset> bom = load_csv(write_temp("bom.csv", "\xef\xbb\xbfx1,x2,y\n1,2,3\n"), 2, 1);
  ASSERT_TRUE(bom.ok()) << bom.status().message();
  EXPECT_EQ(bom.value().rows, 1);
  Result<Dataset> bom_data = load_csv(write_temp("bom_data.csv", "\xef\xbb\xbf" "1,2,3\n"), 2, 1);
  ASSERT_TRUE(bom_data.ok()) << bom_data.status().message();
  EXPECT_EQ(bom_data.value().x, (std::vector<double>{1, 2}));
  expect_csv_error("nul.csv", std::string("1,2,3\n1,\0\x7f,3\n", 14), ":2: ",
                   "column 2: '\\x00\\x7f' is not a number");
  expect_csv_error("bom_inside.csv", "1,2,3\n\xef\xbb\xbf" "1,2,3\n", ":2: ",
                   "column 1: '\\xef\\xbb\\xbf1' is not a number");
  // A 3000-byte field (under the field limit): its first 48 bytes and its length.
  const std::string long_field(3000, 'a');
  std::string path = write_temp("long_field.csv", "1,2,3\n1," + long_field + ",3\n");
  Result<Dataset> d = load_csv(path, 2, 1);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(),
            path + ":2: column 2: '" + std::string(48, 'a') + "'... (3000 bytes) is not a number");
}

// Issue 14: a 10 GB sparse CSV was read whole (56 s, then "read error"). The reader
// streams and stops at the first field too long to be a number; a line of endless
// commas stops once it has counted past its columns.
TEST(CsvTest, HugeFilesStopAtTheFirstError) {
  const std::string sparse = test_files::temp_path("sparse.csv");
  ASSERT_EQ(std::system(("rm -f " + sparse + " && truncate -s 10G " + sparse).c_str()), 0);
  Result<Dataset> d = load_csv(sparse, 2, 1);
  ASSERT_FALSE(d.ok());
  std::string nuls;
  for (int i = 0; i < 48; i++) nuls += "\\x00";
  EXPECT_EQ(d.status().message(), sparse + ":1: column 1: a field of more than 4096 bytes ('" +
                                      nuls + "'... (4096 bytes)) is not a number");
  ::unlink(sparse.c_str());
  std::string commas = write_temp("commas.csv", "1" + std::string(2000000, ',') + "\n");
  Result<Dataset> c = load_csv(commas, 2, 1);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            commas + ":1: expected 3 columns (2 inputs + 1 outputs), found more than 1003");
}

TEST(NpyPairTest, LoadsAndChecksShapes) {
  std::string x = write_temp("x.npy", npy_bytes("<f8", {3, 2}, raw<double>(std::vector<double>{1, 2, 3, 4, 5, 6})));
  std::string y = write_temp("y.npy", npy_bytes("<f4", {3, 1}, raw<float>(std::vector<double>{7, 8, 9})));
  std::string y1 = write_temp("y1.npy", npy_bytes("<f8", {3}, raw<double>(std::vector<double>{7, 8, 9})));
  std::string y4 = write_temp("y4.npy", npy_bytes("<f8", {4, 1}, raw<double>(std::vector<double>{7, 8, 9, 0})));

  Result<Dataset> d = load_npy_pair(x, y, 2, 1);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d.value().rows, 3);
  EXPECT_EQ(d.value().x, (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(d.value().y, (std::vector<double>{7, 8, 9}));
  EXPECT_TRUE(load_npy_pair(x, y1, 2, 1).ok());  // 1-D where one column is expected

  Result<Dataset> rows = load_npy_pair(x, y4, 2, 1);
  ASSERT_FALSE(rows.ok());
  EXPECT_NE(rows.status().message().find("has 3 rows but"), std::string::npos);
  Result<Dataset> cols = load_npy_pair(x, y, 3, 1);
  ASSERT_FALSE(cols.ok());
  EXPECT_NE(cols.status().message().find(x + ": expected a 2-D array [rows, 3], got shape (3, 2)"),
            std::string::npos)
      << cols.status().message();
  Result<Dataset> one_d = load_npy_pair(y1, y, 2, 1);
  ASSERT_FALSE(one_d.ok());
  EXPECT_NE(one_d.status().message().find("got shape (3,)"), std::string::npos);
  EXPECT_FALSE(load_npy_pair(x, test_files::temp_path("nope.npy"), 2, 1).ok());
}

TEST(DataFileTest, DispatchesOnSpec) {
  std::string csv = write_temp("spec.csv", "1,2,3\n");
  Result<Dataset> c = load_data_file(csv, 2, 1);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c.value().rows, 1);

  std::string x = write_temp("sx.npy", npy_bytes("<f8", {1, 2}, raw<double>(std::vector<double>{1, 2})));
  std::string y = write_temp("sy.npy", npy_bytes("<f8", {1, 1}, raw<double>(std::vector<double>{3})));
  Result<Dataset> n = load_data_file(x + "," + y, 2, 1);
  ASSERT_TRUE(n.ok()) << n.status().message();
  EXPECT_EQ(n.value().y, std::vector<double>{3});

  Result<Dataset> single = load_data_file(x, 2, 1);
  ASSERT_FALSE(single.ok());
  EXPECT_NE(single.status().message().find("expected file.csv or one .npy per input and target"),
            std::string::npos)
      << single.status().message();
  EXPECT_FALSE(load_data_file("data.txt", 2, 1).ok());
  EXPECT_FALSE(load_data_file("a.csv,b.csv", 2, 1).ok());
}

// One file per field: images [rows, 2, 2] (4 per row), ids [rows], labels [rows, 1];
// x gets the inputs' columns side by side, y the target's.
TEST(DataFileTest, OneNpyPerField) {
  std::string images = write_temp("fi.npy", npy_bytes("<f4", {2, 2, 2},
      raw<float>(std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8})));
  std::string ids = write_temp("fid.npy", npy_bytes("<i8", {2}, raw<int64_t>(std::vector<int64_t>{9, 10})));
  std::string labels = write_temp("fl.npy", npy_bytes("<i4", {2, 1}, raw<int32_t>(std::vector<int32_t>{0, 3})));
  Result<Dataset> d = load_data_file(images + "," + ids + "," + labels, 0, 0, {4, 1, 1}, 2);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d.value().rows, 2);
  EXPECT_EQ(d.value().in_features, 5);
  EXPECT_EQ(d.value().out_features, 1);
  EXPECT_EQ(d.value().x, (std::vector<double>{1, 2, 3, 4, 9, 5, 6, 7, 8, 10}));
  EXPECT_EQ(d.value().y, (std::vector<double>{0, 3}));

  Result<Dataset> count = load_data_file(images + "," + labels, 0, 0, {4, 1, 1}, 2);
  ASSERT_FALSE(count.ok());
  EXPECT_NE(count.status().message().find("expected 3 .npy files"), std::string::npos);
  Result<Dataset> shape = load_data_file(images + "," + ids + "," + labels, 0, 0, {3, 1, 1}, 2);
  ASSERT_FALSE(shape.ok());
  EXPECT_NE(shape.status().message().find(images + ": expected [rows, ...] with 3 element(s) "
                                          "per row, got shape (2, 2, 2)"),
            std::string::npos)
      << shape.status().message();
  std::string three = write_temp("f3.npy", npy_bytes("<i4", {3}, raw<int32_t>(std::vector<int32_t>{0, 1, 2})));
  Result<Dataset> rows = load_data_file(images + "," + ids + "," + three, 0, 0, {4, 1, 1}, 2);
  ASSERT_FALSE(rows.ok());
  EXPECT_NE(rows.status().message().find(three + " has 3 rows but " + images + " has 2"),
            std::string::npos)
      << rows.status().message();
  std::string inf = write_temp("finf.npy", npy_bytes("<f8", {2}, raw<double>(std::vector<double>{1, INFINITY})));
  Result<Dataset> nonfinite = load_data_file(images + "," + inf + "," + labels, 0, 0, {4, 1, 1}, 2);
  ASSERT_FALSE(nonfinite.ok());
  EXPECT_NE(nonfinite.status().message().find(inf + ": element 1 (row 1) is inf, not a finite "
                                                    "number"),
            std::string::npos)
      << nonfinite.status().message();
  // With the fields' names (as the executables pass them), the message names the field.
  Result<Dataset> named = load_data_file(images + "," + ids + "," + inf, 0, 0, {4, 1, 1}, 2,
                                         {"image", "id", "y"});
  ASSERT_FALSE(named.ok());
  EXPECT_EQ(named.status().message(),
            inf + ": field 'y', element 1 (row 1) is inf, not a finite number");
}

// Issue 14: the pair loader (x.npy,y.npy) checked no values; inf targets trained to
// loss=inf.
TEST(NpyPairTest, RefusesNonFiniteValues) {
  std::string x = write_temp("px.npy", npy_bytes("<f8", {2, 2}, raw<double>(std::vector<double>{1, 2, 3, 4})));
  std::string y = write_temp("py.npy", npy_bytes("<f4", {2, 1}, raw<float>(std::vector<double>{1, NAN})));
  Result<Dataset> d = load_npy_pair(x, y, 2, 1);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().message(), y + ": element 1 (row 1) is nan, not a finite number");
}

// Issue 14: a directory where a file is expected aborted with std::ios_failure.
TEST(DataFileTest, DirectoriesAreRefusedByName) {
  const std::string dir = test_files::temp_path("data_dir.npy");
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  std::string x = write_temp("dx.npy", npy_bytes("<f8", {1, 2}, raw<double>(std::vector<double>{1, 2})));
  Result<Dataset> npy = load_data_file(x + "," + dir, 2, 1);
  ASSERT_FALSE(npy.ok());
  EXPECT_EQ(npy.status().message(), dir + ": is a directory, not a file");
  const std::string csv_dir = test_files::temp_path("data_dir.csv");
  ASSERT_EQ(std::system(("mkdir -p " + csv_dir).c_str()), 0);
  Result<Dataset> csv = load_csv(csv_dir, 2, 1);
  ASSERT_FALSE(csv.ok());
  EXPECT_EQ(csv.status().message(), csv_dir + ": is a directory, not a file");
}

}  // namespace
}  // namespace vouch::rt
