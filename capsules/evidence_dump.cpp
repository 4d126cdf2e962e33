//===- evidence_dump.cpp - the citation table and every cited contract ---===//
//
// Prints, for tools/check_evidence.sh, the citation table and every
// contract of every capsule of the default registry (whatever the catalogs
// ship), one record a line, fields separated by '|' (no field holds one:
// //capsules:catalog_test checks it):
//
//   citation|KEY|REFERENCE|PROFILES|MODELS|SOURCES|NAMES
//   contract|CAPSULE|OP|CONTRACT|EVIDENCE KIND|REFERENCE|PROVENANCE SYMBOL
//
// Citation fields are capsules/Evidence.h's; a contract's reference is empty
// when it cites no test.
//
//===----------------------------------------------------------------------===//
#include <iostream>

#include "capsules/Evidence.h"
#include "capsules/Registry.h"

using namespace vouch::capsules;

int main() {
  for (const Citation &c : citations()) {
    const Exercises &e = c.exercises;
    std::cout << "citation|" << c.key << "|" << c.reference << "|"
              << e.profiles << "|" << e.models << "|" << e.sources << "|"
              << e.names << "\n";
  }
  for (const KernelCapsule &c : defaultRegistry().all()) {
    const std::pair<const char *, const ContractDescriptor *> contracts[] = {
        {"shape", &c.shape},
        {"layout", &c.layout},
        {"value", &c.value},
        {"vjp", &c.vjp}};
    for (const auto &[name, d] : contracts)
      std::cout << "contract|" << c.name << "|" << c.op << "|" << name << "|"
                << toString(d->evidence.kind) << "|" << d->evidence.reference
                << "|" << d->provenance.nativeSymbol << "\n";
  }
  return std::cout.good() ? 0 : 1;
}
