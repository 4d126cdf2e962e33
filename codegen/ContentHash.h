//===- ContentHash.h - the key of vouch's build caches ----------*- C++ -*-===//
//
// FNV-1a over a sequence of fields, each closed by a separator so that
// ("ab", "c") and ("a", "bc") hash apart. It keys the runtime archive
// (NativeBuild) and the compiled kernels (Nvrtc) in $VOUCH_CACHE_DIR: equal
// inputs give the same entry, any changed byte a new one.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CODEGEN_CONTENTHASH_H
#define VOUCH_CODEGEN_CONTENTHASH_H

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace vouch::codegen {

class ContentHash {
public:
  ContentHash &add(std::string_view field) {
    for (unsigned char c : field)
      mix(c);
    mix(0xff);
    return *this;
  }
  /// `prefix` followed by the hash as 16 hex digits: a cache entry's name.
  std::string name(std::string_view prefix) const {
    char hex[17];
    std::snprintf(hex, sizeof(hex), "%016llx",
                  static_cast<unsigned long long>(value));
    return std::string(prefix) + hex;
  }

private:
  void mix(unsigned char c) {
    value ^= c;
    value *= 0x100000001b3ULL;
  }
  uint64_t value = 0xcbf29ce484222325ULL;
};

} // namespace vouch::codegen

#endif // VOUCH_CODEGEN_CONTENTHASH_H
