//===- Nvrtc.cpp - CUDA C++ to cubin and PTX with NVRTC ---------*- C++ -*-===//
#include "codegen/Nvrtc.h"

#include <nvrtc.h>

#include <regex>
#include <sstream>
#include <vector>

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

bool compileOnce(const std::string &source, const std::string &name,
                 const std::string &archOption, bool wantCubin,
                 std::string &binary, std::string &error) {
  nvrtcProgram program;
  nvrtcResult r = nvrtcCreateProgram(&program, source.c_str(), name.c_str(), 0,
                                     nullptr, nullptr);
  if (r != NVRTC_SUCCESS) {
    error = std::string("nvrtcCreateProgram failed: ") + nvrtcGetErrorString(r);
    return false;
  }
  std::string arch = "-arch=" + archOption;
  // No fast-math: the kernels' numeric policy is the capsules' (IEEE
  // rounding; FMA contraction is implementation-defined and says so).
  const char *options[] = {arch.c_str(), "-std=c++17", "-default-device",
                           "-lineinfo"};
  r = nvrtcCompileProgram(program, 4, options);
  size_t logSize = 0;
  nvrtcGetProgramLogSize(program, &logSize);
  std::string log(logSize, '\0');
  if (logSize > 1)
    nvrtcGetProgramLog(program, log.data());
  if (r != NVRTC_SUCCESS) {
    error = "NVRTC could not compile the generated kernels (" + archOption +
            "): " + nvrtcGetErrorString(r) + "\n" +
            annotateLog(log.c_str(), source, name);
    nvrtcDestroyProgram(&program);
    return false;
  }
  size_t size = 0;
  r = wantCubin ? nvrtcGetCUBINSize(program, &size)
                : nvrtcGetPTXSize(program, &size);
  if (r == NVRTC_SUCCESS) {
    binary.assign(size, '\0');
    r = wantCubin ? nvrtcGetCUBIN(program, binary.data())
                  : nvrtcGetPTX(program, binary.data());
  }
  nvrtcDestroyProgram(&program);
  if (r != NVRTC_SUCCESS) {
    error = std::string(wantCubin ? "nvrtcGetCUBIN" : "nvrtcGetPTX") +
            " failed: " + nvrtcGetErrorString(r);
    return false;
  }
  return true;
}

} // namespace

bool compileCuda(const std::string &source, const std::string &name,
                 const std::string &arch, CudaBinary &out, std::string &error) {
  out.arch = arch;
  std::string compute = "compute_" + arch.substr(arch.find('_') + 1);
  return compileOnce(source, name, arch, /*wantCubin=*/true, out.cubin,
                     error) &&
         compileOnce(source, name, compute, /*wantCubin=*/false, out.ptx,
                     error);
}

std::string nvrtcVersionString() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

} // namespace vouch::codegen
