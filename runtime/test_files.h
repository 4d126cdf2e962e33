// test_files.h (tests only): writing fixture files under $TEST_TMPDIR, including NPY
// files byte for byte as numpy.save lays them out, so loader tests need no Python.
#ifndef VOUCH_RUNTIME_TEST_FILES_H_
#define VOUCH_RUNTIME_TEST_FILES_H_

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace vouch::rt::test_files {

inline std::string temp_path(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

inline std::string write_temp(const std::string& name, const std::string& bytes) {
  std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Raw little-endian bytes of values stored as S.
template <class S, class V>
std::string raw(const std::vector<V>& values) {
  std::string out;
  for (V v : values) {
    S s = static_cast<S>(v);
    char buf[sizeof(S)];
    std::memcpy(buf, &s, sizeof(S));
    out.append(buf, sizeof(S));
  }
  return out;
}

// An NPY file: magic, version, header dict padded with spaces and '\n' to a multiple
// of 64 bytes, then data. `dict` overrides the generated header text when non-empty.
inline std::string npy_bytes(const std::string& descr, const std::vector<int64_t>& shape,
                             const std::string& data, bool fortran = false, int major = 1,
                             const std::string& dict = "") {
  std::string header = dict;
  if (header.empty()) {
    header = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
             ", 'shape': (";
    for (size_t i = 0; i < shape.size(); i++) header += (i ? ", " : "") + std::to_string(shape[i]);
    header += shape.size() == 1 ? ",), }" : "), }";
  }
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(major);
  out += char(0);
  uint32_t len = uint32_t(header.size());
  for (size_t i = 0; i < (major == 1 ? 2u : 4u); i++) out += char((len >> (8 * i)) & 0xFF);
  return out + header + data;
}

}  // namespace vouch::rt::test_files

#endif  // VOUCH_RUNTIME_TEST_FILES_H_
