// tokens.h: a token stream for language-model training (`data tokens(file = ...)`).
//
// A file of N token ids is mapped read-only (mmap), never read whole into memory: each
// training step reads the windows it trains on (runtime/cuda/kernels/token_windows.h).
// Two formats:
//   * a 1-D .npy of <u2 (uint16) or <i4 (int32) token ids;
//   * llm.c's shard (.bin): a header of 256 little-endian int32 (header[0] the magic,
//     header[1] the version, header[2] the number of tokens), then the tokens: magic
//     20240520 version 1 holds uint16 tokens (GPT-2), magic 20240801 version 7 uint32
//     tokens (LLaMA 3; llm.c's dev/data/data_common.py); the file's size must be exactly
//     1024 + header[2] * the token's size.
// Anything else is refused with the file and the reason; a token that is not an id the
// model accepts (check_token_ids) with its position and value.
#ifndef VOUCH_RUNTIME_TOKENS_H_
#define VOUCH_RUNTIME_TOKENS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/model_api.h"
#include "runtime/status.h"

namespace vouch::rt {

class TokenFile {
 public:
  ~TokenFile();
  TokenFile(const TokenFile&) = delete;
  TokenFile& operator=(const TokenFile&) = delete;

  // Maps and checks `path` (format, size); the tokens' values are checked separately.
  static Result<std::shared_ptr<TokenFile>> open(const std::string& path);

  const std::string& path() const { return path_; }
  int64_t count() const { return count_; }
  int token_bytes() const { return token_bytes_; }  // 2 or 4
  const void* tokens() const { return tokens_; }    // inside the mapping
  // The whole mapping (cudaHostRegister registers it).
  const void* mapping() const { return map_; }
  size_t mapping_bytes() const { return map_bytes_; }
  // "llm.c shard, magic 20240520 (uint16)", "npy <u2": how the file was read.
  const std::string& format() const { return format_; }

  // Token i as an integer (0 <= i < count).
  int64_t at(int64_t i) const;

 private:
  TokenFile() = default;
  std::string path_, format_;
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
  const void* tokens_ = nullptr;
  int64_t count_ = 0;
  int token_bytes_ = 2;
  bool uint32_ = false;  // 4-byte tokens read as unsigned (llm.c's uint32)
};

// The model's token fields: exactly one input and one target, both I32 with the same
// row length T (the context); refused otherwise, naming what is expected.
Result<int64_t> token_context(const ModelDescription& m);

// Every token is an id both fields accept (FieldInfo::min_value..max_value, e.g. the
// rows of the embedding the input feeds, the classes of the cross_entropy the target
// is the labels of) and the file holds at least context + 1 tokens; else the file, the
// first offending position and value, and why.
Status check_token_ids(const TokenFile& file, const ModelDescription& m, int64_t context);

// Windows of a sequential pass: floor((count - 1) / context).
int64_t token_window_count(int64_t count, int64_t context);

// `rows` rows of input and target (int32, [rows, context] each): row j is the window at
// token_window_start(step, j, batch, ...), j < rows (rows <= batch: a batch's first rows).
void fill_token_batch(const TokenFile& file, int64_t context, int64_t step, int64_t batch,
                      int64_t rows, bool random, uint64_t seed, int32_t* input,
                      int32_t* target);

// The stream as a device-resident model reads it (model_api.h).
TokenStream token_stream(const std::shared_ptr<TokenFile>& file, int64_t context, bool random);

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_TOKENS_H_
