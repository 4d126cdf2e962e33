// Tests for atomic_file.h: a file replaced whole or not at all, under a temporary name
// short enough for any target name (issue 14: names of 242-255 bytes failed with the
// old `.tmp.<pid>` suffix), nothing left behind, special files refused.
#include "runtime/atomic_file.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "runtime/test_files.h"

namespace vouch::rt {
namespace {

using test_files::read_file;
using test_files::temp_path;

// A fresh directory under the test's temp dir.
std::string fresh_dir(const std::string& name) {
  const std::string dir = temp_path(name);
  EXPECT_EQ(std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  return dir;
}

int entries(const std::string& dir) {
  int n = 0;
  DIR* d = opendir(dir.c_str());
  while (dirent* e = readdir(d)) n += std::string(e->d_name) != "." && std::string(e->d_name) != "..";
  closedir(d);
  return n;
}

TEST(AtomicFileTest, ReplacesAndLeavesNothingElse) {
  const std::string dir = fresh_dir("replace");
  const std::string path = dir + "/out.bin";
  ASSERT_TRUE(replace_file(path, "first").ok());
  ASSERT_TRUE(replace_file(path, "second").ok());
  EXPECT_EQ(read_file(path), "second");
  EXPECT_EQ(entries(dir), 1);
}

TEST(AtomicFileTest, TheLongestNameFits) {
  const std::string dir = fresh_dir("long");
  const std::string path = dir + "/" + std::string(255, 'n');
  Status st = replace_file(path, "x");
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(read_file(path), "x");
  Result<std::string> temp = temp_file_beside(path);
  ASSERT_TRUE(temp.ok()) << temp.status().message();
  ASSERT_TRUE(rename_over(temp.value(), path, 0777).ok());
  EXPECT_EQ(entries(dir), 1);
}

TEST(AtomicFileTest, ModesFollowTheUmask) {
  const std::string dir = fresh_dir("modes");
  const mode_t old = ::umask(022);
  ASSERT_TRUE(replace_file(dir + "/data", "x").ok());
  Result<std::string> temp = temp_file_beside(dir + "/exe");
  ASSERT_TRUE(temp.ok());
  ASSERT_TRUE(rename_over(temp.value(), dir + "/exe", 0777).ok());
  ::umask(old);
  struct stat st;
  ASSERT_EQ(::stat((dir + "/data").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  ASSERT_EQ(::stat((dir + "/exe").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
}

TEST(AtomicFileTest, RefusesWhatItWouldDestroy) {
  const std::string dir = fresh_dir("refuse");
  ASSERT_EQ(::mkdir((dir + "/sub").c_str(), 0755), 0);
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0600), 0);
  Status to_dir = replace_file(dir + "/sub", "x");
  ASSERT_FALSE(to_dir.ok());
  EXPECT_EQ(to_dir.message(), "cannot write " + dir + "/sub: it is a directory");
  Status to_fifo = replace_file(dir + "/fifo", "x");
  ASSERT_FALSE(to_fifo.ok());
  EXPECT_NE(to_fifo.message().find("it exists and is not a regular file"), std::string::npos);
  Status no_dir = replace_file(dir + "/missing/out", "x");
  ASSERT_FALSE(no_dir.ok());
  EXPECT_EQ(no_dir.message().rfind("cannot write " + dir + "/missing/out: its directory " + dir +
                                       "/missing does not exist", 0),
            0u)
      << no_dir.message();
  EXPECT_EQ(entries(dir), 2);  // sub and fifo, nothing else
}

}  // namespace
}  // namespace vouch::rt
