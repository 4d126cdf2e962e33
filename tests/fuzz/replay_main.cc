// replay_main.cc: a main() for the fuzz targets where libFuzzer is not linked (g++
// builds: `bazel test //...`, --config=asan). It runs LLVMFuzzerTestOneInput once on
// every file named, or on every file of every directory named, in sorted order, so
// the committed seed corpora and reproducers are regression tests of every build.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  std::vector<std::string> files;
  for (int i = 1; i < argc; i++) {
    std::filesystem::path arg = argv[i];
    if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg))
        if (entry.is_regular_file()) files.push_back(entry.path().string());
    } else {
      files.push_back(arg.string());
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "%s: no inputs (give files or directories of them)\n", argv[0]);
    return 2;
  }
  for (const std::string& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "%s: cannot read %s\n", argv[0], file.c_str());
      return 2;
    }
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // A copy of exactly size bytes, as libFuzzer passes: reads past it are caught.
    std::vector<uint8_t> input(bytes.begin(), bytes.end());
    std::fprintf(stderr, "running %s (%zu bytes)\n", file.c_str(), input.size());
    LLVMFuzzerTestOneInput(input.data(), input.size());
  }
  std::fprintf(stderr, "%zu inputs ran without a crash\n", files.size());
  return 0;
}
