//===- Evidence.h - the one table of tests cited as evidence ---*- C++ -*-===//
//
// A test that does not exist is not evidence. Every test a capsule cites is
// named here, once, by a short key; contracts take their references from
// this table only (the catalog test checks that), and tools/check_evidence.sh
// checks that every reference in the table exists in the tree: a Bazel test
// target `//pkg:name` or a lit test file `tests/lit/...`.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CAPSULES_EVIDENCE_H
#define VOUCH_CAPSULES_EVIDENCE_H

#include <string_view>
#include <vector>

#include "capsules/Capsule.h"

namespace vouch::capsules {

struct Citation {
  std::string_view key;       ///< how catalogs name it
  std::string_view reference; ///< `//pkg:name` or `tests/lit/....mlir`
  std::string_view covers;    ///< what the test establishes, one line
};

/// The table, in file order.
const std::vector<Citation> &citations();

/// The citation with this key, or null.
const Citation *findCitation(std::string_view key);

/// Evidence of kind `kind` citing the table entry `key`. An unknown key is a
/// programming error: it aborts with the key's name.
Evidence citedEvidence(EvidenceKind kind, std::string_view key);

/// Evidence that cites no test: not-provided, not-applicable, or a trusted
/// boundary.
Evidence uncitedEvidence(EvidenceKind kind);

} // namespace vouch::capsules

#endif // VOUCH_CAPSULES_EVIDENCE_H
