//===- Evidence.h - the one table of tests cited as evidence ---*- C++ -*-===//
//
// A test that does not exist, or does not run the capsule that cites it, is
// not evidence. Every test a capsule cites is named here, once, by a short
// key, together with what the test exercises; contracts take their
// references from this table only (the catalog test checks that), and
// tools/check_evidence.sh checks that every reference exists in the tree (a
// Bazel test target `//pkg:name`, a lit test file `tests/lit/...` or the GPU
// suite's runner) and exercises every capsule whose contract cites it.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CAPSULES_EVIDENCE_H
#define VOUCH_CAPSULES_EVIDENCE_H

#include <string>
#include <string_view>
#include <vector>

#include "capsules/Capsule.h"

namespace vouch::capsules {

/// What a cited test exercises, in one of two ways (exactly one is set):
///  - it plans models: each of `models` (space-separated paths from the
///    repository root; `*` matches within a file name) under each profile
///    of `profiles` (space-separated specs). It exercises the capsules the
///    models' reports list (`vouch report MODEL --profile P`). A test that
///    takes its models from here (nvrtc_kernels_test) runs exactly these.
///  - its sources name what it checks: it exercises a capsule when one of
///    `sources` (space-separated paths) contains `names` with `{op}`,
///    `{capsule}` and `{symbol}` replaced by the capsule's op, the capsule's
///    name and the citing contract's provenance symbol (its last `::` part,
///    without template arguments).
struct Exercises {
  std::string_view profiles, models;
  std::string_view sources, names;
};

/// A test that plans `models` under `profiles`.
constexpr Exercises plans(std::string_view profiles, std::string_view models) {
  return {profiles, models, "", ""};
}
/// A test whose `sources` contain `names` for each capsule it exercises.
constexpr Exercises names(std::string_view pattern, std::string_view sources) {
  return {"", "", sources, pattern};
}

struct Citation {
  std::string_view key;       ///< how catalogs name it
  std::string_view reference; ///< `//pkg:name`, `tests/lit/...`, `tests/gpu/run.sh`
  std::string_view covers;    ///< what the test establishes, one line
  Exercises exercises;        ///< which capsules it runs
};

/// The table, in file order.
const std::vector<Citation> &citations();

/// The citation with this key, or null.
const Citation *findCitation(std::string_view key);

/// The words of a space-separated list (`Exercises` fields).
std::vector<std::string_view> splitWords(std::string_view list);

/// `c`'s models, each `*` pattern replaced by the files it matches in
/// `root` (a directory ending in '/'; empty: the working directory), in
/// name order. Paths stay relative to `root`. A pattern matching nothing
/// stays as written, so that opening it fails loudly.
std::vector<std::string> citedModels(const Citation &c,
                                     const std::string &root = "");

/// Evidence of kind `kind` citing the table entry `key`. An unknown key is a
/// programming error: it aborts with the key's name.
Evidence citedEvidence(EvidenceKind kind, std::string_view key);

/// Evidence that cites no test: not-provided, not-applicable, or a trusted
/// boundary.
Evidence uncitedEvidence(EvidenceKind kind);

} // namespace vouch::capsules

#endif // VOUCH_CAPSULES_EVIDENCE_H
