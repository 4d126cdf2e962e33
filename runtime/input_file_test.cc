// Tests for input_file.h: every way an input file can be wrong is a Status naming the
// path (a directory: issue 14's std::ios_failure abort), never an exception.
#include "runtime/input_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include "runtime/test_files.h"

namespace vouch::rt {
namespace {

using test_files::temp_path;
using test_files::write_temp;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(InputFileTest, ADirectoryIsRefusedByName) {
  const std::string dir = temp_path("a_dir.npy");
  ::mkdir(dir.c_str(), 0755);
  Result<InputFile> f = InputFile::open(dir);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().message(), dir + ": is a directory, not a file");
  Result<std::string> text = read_small_file(dir, 100, "a vocabulary");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().message(), dir + ": is a directory, not a file");
}

TEST(InputFileTest, AMissingFileSaysWhy) {
  Result<InputFile> f = InputFile::open(temp_path("no_such_file"));
  ASSERT_FALSE(f.ok());
  EXPECT_TRUE(contains(f.status().message(), "no_such_file: cannot open file (No such file"))
      << f.status().message();
}

TEST(InputFileTest, ReadsAndSaysWhereItEnded) {
  const std::string path = write_temp("five.bin", "abcde");
  Result<InputFile> f = InputFile::open(path);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f.value().size(), 5);
  char buf[8];
  ASSERT_TRUE(f.value().read_exact(buf, 3, "the head").ok());
  EXPECT_EQ(std::string(buf, 3), "abc");
  Status st = f.value().read_exact(buf, 4, "the body");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), path + ": truncated: the body needs 4 bytes at byte offset 3, the "
                                 "file ends after 5");
}

TEST(InputFileTest, SmallFilesAreBounded) {
  const std::string path = write_temp("ten.txt", "0123456789");
  Result<std::string> ok = read_small_file(path, 10, "a vocabulary");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.value(), "0123456789");
  Result<std::string> big = read_small_file(path, 9, "a vocabulary");
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().message(), path + ": more than 9 bytes; a vocabulary is not that large");
}

// A pipe has no size: it is read to its end, still bounded.
TEST(InputFileTest, PipesAreReadToTheirEnd) {
  const std::string fifo = temp_path("pipe.fifo");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(std::system(("(printf 'hello' > " + fifo + ") &").c_str()), 0);
  Result<std::string> text = read_small_file(fifo, 100, "text");
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(text.value(), "hello");
}

}  // namespace
}  // namespace vouch::rt
