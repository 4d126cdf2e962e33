// quoted.h: how runtime messages show text read from a file (a CSV field, a header
// key, a tensor name).
//
// A file is not trusted to hold printable text: a byte that is not printable ASCII is
// shown as \xNN (a UTF-8 BOM as \xef\xbb\xbf, a NUL as \x00), and a long text is cut,
// with its length said, so a 10 MB field never reaches the terminal whole.
#ifndef VOUCH_RUNTIME_QUOTED_H_
#define VOUCH_RUNTIME_QUOTED_H_

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>

namespace vouch::rt {

// 'text' in single quotes, escaped; at most `max_bytes` of the text are shown, then
// "... (N bytes)" says how long it is.
inline std::string quoted(std::string_view text, size_t max_bytes = 48) {
  std::string out = "'";
  const size_t shown = text.size() > max_bytes ? max_bytes : text.size();
  for (size_t i = 0; i < shown; i++) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += char(c);
    } else if (c == '\\') {
      out += "\\\\";
    } else {
      char esc[5];
      std::snprintf(esc, sizeof esc, "\\x%02x", c);
      out += esc;
    }
  }
  out += "'";
  if (shown < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace vouch::rt

#endif  // VOUCH_RUNTIME_QUOTED_H_
