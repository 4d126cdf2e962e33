//===- StoragePlan.h - buffers with disjoint lifetimes share storage -*- C++ -*-===//
//
// A Program's buffers are SSA: each value has its own buffer for the whole
// step. Most are dead long before the step ends (a forward temporary once its
// last reader ran, an activation gradient once the VJP that consumes it ran),
// so codegen lets buffers whose lifetimes are disjoint share one storage slot.
//
// Lifetimes are read off the order one training step runs its steps
// (rt::training_step_order, the executors' order): a buffer lives from the
// first step that touches it to the last. Only a buffer that every step
// writes before it reads, within the step, may share: its value never
// crosses a step boundary. Never shared: parameters, gradients (the
// optimizer reads them after the step), the data fields, the loss and the
// output (read by the host), zero-initialised scratch (its kernel relies on
// finding zeros), and buffers no step touches.
//
// Sharing changes no value: a step reads only what an earlier step of the
// same pass wrote. On cuda the launches of a captured step are ordered by the
// storage they read and write (rt::step_access), so a buffer's writer also
// waits for the readers of the slot's previous occupant.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_CODEGEN_STORAGEPLAN_H
#define VOUCH_CODEGEN_STORAGEPLAN_H

#include <cstdint>
#include <vector>

#include "runtime/program.h"

namespace vouch::codegen {

struct StoragePlan {
  /// Per buffer of the program: the slot it shares, or -1 (it keeps its own
  /// storage, or is a view).
  std::vector<int32_t> slotOf;
  /// Per slot: its elements (the most any occupant has). Every slot has at
  /// least two occupants.
  std::vector<int64_t> slotNumel;
  /// Elements of storage before and after the plan (every owner's numel; a
  /// slot counts once).
  int64_t ownedBefore = 0, ownedAfter = 0;
  /// Buffers that share a slot.
  int32_t shared = 0;
  /// The least any plan in this step order could own: the storage no
  /// buffer may share, plus the most elements of sharable buffers alive at
  /// one step.
  int64_t ownedAtLeast = 0;
};

/// The storage plan of `program`. Precondition: rt::check_program(program).ok().
StoragePlan planStorage(const rt::Program &program);

} // namespace vouch::codegen

#endif // VOUCH_CODEGEN_STORAGEPLAN_H
