// test_run.h: running the executable driver (train_main) inside a test, the way a user
// runs an executable: argv in, exit code and the printed text out.
#ifndef VOUCH_RUNTIME_TEST_RUN_H_
#define VOUCH_RUNTIME_TEST_RUN_H_

#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace vouch::rt::test_run {

struct RunOutput {
  int code;
  std::string out, err;
};

// Calls main(argc, argv) with argv = {program, args...}, stdout and stderr captured.
template <class Main>
RunOutput run_captured(const std::string& program, std::vector<std::string> args, Main main) {
  args.insert(args.begin(), program);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  int code = main(int(argv.size()), argv.data());
  std::string out = ::testing::internal::GetCapturedStdout();
  std::string err = ::testing::internal::GetCapturedStderr();
  return {code, out, err};
}

inline bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// The numbers of the `mean_loss(before) = ` and `mean_loss(after) = ` lines; false when
// either is missing.
inline bool read_mean_losses(const std::string& out, double& before, double& after) {
  size_t at = out.find("mean_loss(after) = ");
  return std::sscanf(out.c_str(), "mean_loss(before) = %lf", &before) == 1 &&
         at != std::string::npos &&
         std::sscanf(out.c_str() + at, "mean_loss(after) = %lf", &after) == 1;
}

}  // namespace vouch::rt::test_run

#endif  // VOUCH_RUNTIME_TEST_RUN_H_
