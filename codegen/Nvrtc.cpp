//===- Nvrtc.cpp - CUDA C++ to cubin and PTX with NVRTC ---------*- C++ -*-===//
#include "codegen/Nvrtc.h"

#include <nvrtc.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <unistd.h>
#include <vector>

#include "capsules/Catalog.h"
#include "codegen/ContentHash.h"
#include "codegen/Parallel.h"
#include "codegen/RuntimeSources.h"

namespace vouch::codegen {
namespace {

/// NVRTC's log, with the source line each diagnostic points at quoted below
/// it, so an error in generated code can be read without --emit-dir.
std::string annotateLog(const std::string &log, const std::string &source,
                        const std::string &name) {
  std::vector<std::string> lines;
  std::istringstream in(source);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  std::regex located(std::regex_replace(name, std::regex(R"([.^$|()\[\]{}*+?\\])"),
                                        R"(\$&)") +
                     R"(\((\d+)\))");
  std::ostringstream out;
  std::istringstream logLines(log);
  for (std::string line; std::getline(logLines, line);) {
    out << line << "\n";
    std::smatch m;
    if (std::regex_search(line, m, located)) {
      size_t number = std::stoul(m[1]);
      if (number >= 1 && number <= lines.size())
        out << "    | " << lines[number - 1] << "\n";
    }
  }
  return out.str();
}

// No fast-math: the kernels' numeric policy is the capsules' (IEEE
// rounding; FMA contraction as capsules::kNativeCudaFmad says, which the
// native capsules state as contract=fma). ptxas, most of the compile time,
// assembles the kernels on every core: its code is the same as on one
// thread (only the cubin's toolkit note records the option).
const char *const kOptions[] = {"-std=c++17", "-default-device", "-lineinfo",
                                capsules::kNativeCudaFmadOption,
                                "--ptxas-options=--split-compile=0"};

/// Copies one output of a compiled `program` through its size and data
/// getters.
nvrtcResult getOutput(nvrtcProgram program,
                      nvrtcResult (*sizeOf)(nvrtcProgram, size_t *),
                      nvrtcResult (*get)(nvrtcProgram, char *),
                      std::string &bytes) {
  size_t size = 0;
  nvrtcResult r = sizeOf(program, &size);
  if (r != NVRTC_SUCCESS)
    return r;
  bytes.assign(size, '\0');
  return get(program, bytes.data());
}

} // namespace

// One compile for `arch` gives both binaries: NVRTC keeps the PTX it
// assembled the cubin from, byte for byte what a compile for compute_<arch>
// returns.
bool compileCuda(const std::string &source, const std::string &name,
                 const std::string &arch, const CudaHeaders &headers,
                 CudaBinary &out, std::string &error) {
  out.arch = arch;
  std::vector<const char *> headerTexts, headerNames;
  for (const auto &[include, text] : headers) {
    headerNames.push_back(include.c_str());
    headerTexts.push_back(text.c_str());
  }
  nvrtcProgram program;
  nvrtcResult r = nvrtcCreateProgram(
      &program, source.c_str(), name.c_str(), static_cast<int>(headers.size()),
      headerTexts.data(), headerNames.data());
  if (r != NVRTC_SUCCESS) {
    error = std::string("nvrtcCreateProgram failed: ") + nvrtcGetErrorString(r);
    return false;
  }
  std::string archOption = "-arch=" + arch;
  std::vector<const char *> options = {archOption.c_str()};
  options.insert(options.end(), std::begin(kOptions), std::end(kOptions));
  r = nvrtcCompileProgram(program, static_cast<int>(options.size()),
                          options.data());
  size_t logSize = 0;
  nvrtcGetProgramLogSize(program, &logSize);
  std::string log(logSize, '\0');
  if (logSize > 1)
    nvrtcGetProgramLog(program, log.data());
  if (r != NVRTC_SUCCESS) {
    error = "NVRTC could not compile the generated kernels (" + arch +
            "): " + nvrtcGetErrorString(r) + "\n" +
            annotateLog(log.c_str(), source, name);
    nvrtcDestroyProgram(&program);
    return false;
  }
  const char *failed = nullptr;
  if ((r = getOutput(program, nvrtcGetCUBINSize, nvrtcGetCUBIN, out.cubin)) !=
      NVRTC_SUCCESS)
    failed = "nvrtcGetCUBIN";
  else if ((r = getOutput(program, nvrtcGetPTXSize, nvrtcGetPTX, out.ptx)) !=
           NVRTC_SUCCESS)
    failed = "nvrtcGetPTX";
  nvrtcDestroyProgram(&program);
  if (failed) {
    error = std::string(failed) + " failed: " + nvrtcGetErrorString(r);
    return false;
  }
  return true;
}

const CudaHeaders &kernelLibraryHeaders() {
  static const CudaHeaders headers = [] {
    CudaHeaders h;
    for (int i = 0; i < kRuntimeSourceCount; ++i) {
      std::string path = kRuntimeSources[i].path;
      // By file name: the headers include each other that way.
      const std::string dir = "runtime/cuda/kernels/";
      if (path.rfind(dir, 0) == 0)
        h.push_back({path.substr(dir.size()), kRuntimeSources[i].text});
    }
    return h;
  }();
  return headers;
}

namespace {

bool readFile(const std::filesystem::path &path, std::string &text) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::ostringstream buffer;
  buffer << in.rdbuf();
  text = buffer.str();
  return static_cast<bool>(in);
}

} // namespace

bool compileCudaCached(const std::string &source, const std::string &name,
                       const std::string &arch, const CudaHeaders &headers,
                       const std::string &cacheDir, CudaBinary &out,
                       bool &hit, std::string &error) {
  namespace fs = std::filesystem;
  ContentHash hash;
  hash.add(source).add(arch).add(nvrtcVersionString());
  for (const char *option : kOptions)
    hash.add(option);
  for (const auto &[include, text] : headers)
    hash.add(include).add(text);
  const std::string key = hash.name("cubin-");
  fs::path dir = fs::path(cacheDir) / key;
  out.arch = arch;
  hit = readFile(dir / "kernels.cubin", out.cubin) &&
        readFile(dir / "kernels.ptx", out.ptx) && !out.cubin.empty();
  if (hit)
    return true;
  if (!compileCuda(source, name, arch, headers, out, error))
    return false;
  // Written to a private directory, then renamed into place: a reader never
  // sees half a cache entry. A failure to cache is not an error.
  std::error_code ec;
  fs::path staging = fs::path(cacheDir) /
                     (key + ".tmp." + std::to_string(getpid()));
  fs::create_directories(staging, ec);
  std::ofstream(staging / "kernels.cubin", std::ios::binary) << out.cubin;
  std::ofstream(staging / "kernels.ptx", std::ios::binary) << out.ptx;
  fs::rename(staging, dir, ec);
  if (ec)
    fs::remove_all(staging, ec);
  return true;
}

bool compileCudaUnits(const std::vector<CudaUnit> &units,
                      const std::string &arch, const CudaHeaders &headers,
                      const std::string &cacheDir, unsigned threads,
                      std::vector<CudaBinary> &out, size_t &hits,
                      std::string &error) {
  out.assign(units.size(), CudaBinary{});
  std::vector<std::string> errors(units.size());
  std::vector<char> ok(units.size(), false), hit(units.size(), false);
  parallelFor(units.size(), threads, [&](size_t i) {
    bool answered = false;
    ok[i] = compileCudaCached(units[i].source, units[i].name, arch, headers,
                              cacheDir, out[i], answered, errors[i]);
    hit[i] = answered;
  });
  hits = static_cast<size_t>(std::count(hit.begin(), hit.end(), true));
  for (size_t i = 0; i < units.size(); ++i)
    if (!ok[i]) {
      error = errors[i];
      return false;
    }
  return true;
}

std::string nvrtcVersionString() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

} // namespace vouch::codegen
