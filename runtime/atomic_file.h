// atomic_file.h: replacing a file whole or not at all (checkpoints, predictions,
// reports, executables).
//
// The new contents go to a temporary file beside the target, under a short name of its
// own (".vouch-XXXXXX" in the same directory: a target whose name is as long as the
// file system allows, 255 bytes, still has one, which `name.tmp.<pid>` would not), are
// flushed to disk, then renamed over the target: a reader sees the old file or the new
// one, never half of one. An existing target that is not a regular file (a directory,
// device, FIFO or socket, which the rename would replace) is refused.
#ifndef VOUCH_RUNTIME_ATOMIC_FILE_H_
#define VOUCH_RUNTIME_ATOMIC_FILE_H_

#include <sys/types.h>

#include <string>
#include <string_view>

#include "runtime/status.h"

namespace vouch::rt {

// Writes `bytes` to `path` as above, the file's permissions `mode` less the umask. On
// failure the temporary file is removed and `path` is untouched; the error names
// `path` and the reason.
Status replace_file(const std::string& path, std::string_view bytes, mode_t mode = 0666);

// Creates an empty temporary file beside `path` (as replace_file's) and returns its
// name, for a writer that is another program (the linker); the caller renames it over
// `path` (rename_over) or removes it. Refused like replace_file when `path` is not a
// regular file, or when its directory is missing or not writable.
Result<std::string> temp_file_beside(const std::string& path);

// Renames `temp` over `path`, giving it `mode` less the umask; on failure removes `temp`.
Status rename_over(const std::string& temp, const std::string& path, mode_t mode);

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_ATOMIC_FILE_H_
