//===- StoragePlan.h - buffers with disjoint lifetimes share storage -*- C++ -*-===//
//
// A Program's buffers are SSA: each value has its own buffer for the whole
// step. Most are dead long before the step ends (a forward temporary once its
// last reader ran, an activation gradient once the VJP that consumes it ran),
// so codegen lets buffers whose lifetimes are disjoint share one storage slot.
//
// Lifetimes are read off the order one training step runs its steps
// (rt::training_step_order, the executors' order): a buffer lives from the
// first step that touches it to the last (both included; a view's reads
// count as its source's). Only a buffer that every step writes before it
// reads, within the step, may share: its value never crosses a step
// boundary. Never shared: parameters, gradients (the optimizer reads them
// after the step), the model's state (batch_norm's running statistics,
// which persist), the data fields, the loss and the output (read by the
// host) and zero-initialised scratch (its kernel relies on finding zeros).
// A buffer no step of the program touches at all (a fused pointwise chain's
// result that only the chain read, which its kernel therefore never stores)
// holds no value: it rides in the smallest slot that fits it, where one does,
// instead of taking storage of its own.
//
// In place: a step's operand and its result overlap at that step, so they
// never share by lifetime alone. An op whose kernels may write the result
// over an operand (the op table's inPlaceOperand, ir/VouchBase.td) names
// that pair to the plan (InPlaceStep, from ProgramEmitter), and the plan
// puts the result in the operand's storage when: the step is the operand's
// last touch in the order (no later step, and no view read later, reads
// it), the step reads the operand's storage through that one argument, does
// not write it and is the result's first touch; both may share (neither is
// pinned state; with `outputReadAtForwardEnd`, the output may still be the
// operand of a step after the forward pass, below); and they have one numel
// and dtype. The pair (and a chain of such pairs) then occupies one slot as
// one lifetime, from the operand's first step to the result's last. The
// kernel reads and writes the one slot in that launch, which the executors
// allow: cpu runs it as any step; cuda's rt::step_access lists the slot
// among the step's reads and its writes, so the launch follows the slot's
// last writer and its readers since, and later readers follow it.
//
// The output as an in-place operand (`outputReadAtForwardEnd`, the cuda
// Program): the cuda executor copies the prediction to the host at the end
// of every forward pass (runtime/cuda/executor.cc, forward_fields) and reads
// the device buffer nowhere else, so a VJP step may write its result over
// the output (every classifier's dlogits over its logits, the output of
// every model in examples/). The cpu executor's prediction() is the buffer
// itself, so its Program keeps the output pinned.
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
  /// Per slot: its elements of the run's real type (the most any occupant
  /// needs; a bf16 occupant needs half its element count). Every slot has at
  /// least two occupants.
  std::vector<int64_t> slotNumel;
  /// Elements of storage before and after the plan (every owner's numel; a
  /// slot counts once).
  int64_t ownedBefore = 0, ownedAfter = 0;
  /// Buffers that share a slot.
  int32_t shared = 0;
  /// Of those, buffers no step touches (a slot's passengers: they hold no
  /// value, so any slot that fits them will do).
  int32_t untouchedShared = 0;
  /// The least any plan in this step order could own: the storage no
  /// buffer may share, plus the most elements of sharable buffers alive at
  /// one step, an in-place pair (or chain) counted once at the step where
  /// both are alive (by design they share there).
  int64_t ownedAtLeast = 0;
  /// The in-place steps the plan took (a result in its operand's slot), in
  /// the order given.
  std::vector<int32_t> inPlaceSteps;
};

/// A step whose result may be written over one operand's storage (the op
/// table's inPlaceOperand): the step, and the buffers of that operand and
/// of the result as the step's arguments name them.
struct InPlaceStep {
  int32_t step, operand, result;
};

/// A unit the plan places: a sharable buffer, or an in-place chain of them,
/// with its elements and its lifetime: the positions, in the step order, of
/// its first and last touch (both included).
struct StorageUnit {
  int64_t numel;
  int32_t first, last;
};

/// The plan's packing rule. `units` come largest first and, among equal
/// sizes, by first touch; each goes into the smallest slot none of whose
/// occupants is alive at any position it is (the lowest-numbered of equal
/// size; every slot is at least as large as it, so none grows), else into a
/// new slot of its size. Returns each unit's slot and fills `slotNumel` with
/// the slots' sizes, in the order they were opened. Time O(C·S log S + U·C·log S)
/// for U units, S slots and C distinct sizes (planStorage's first form tried
/// every slot for every unit: quadratic, 45 s for a model of 100,000 ops).
std::vector<int32_t> placeStorageUnits(const std::vector<StorageUnit> &units,
                                       std::vector<int64_t> &slotNumel);

/// The storage plan of `program`. `inPlace`: the steps that may write a
/// result over an operand (taken where the conditions above hold, ignored
/// elsewhere). `outputReadAtForwardEnd`: the host reads the output only at
/// the end of the forward pass (the cuda executor), so it may be the operand
/// of an in-place step after the forward pass.
/// Precondition: rt::check_program(program).ok().
StoragePlan planStorage(const rt::Program &program,
                        const std::vector<InPlaceStep> &inPlace = {},
                        bool outputReadAtForwardEnd = false);

} // namespace vouch::codegen

#endif // VOUCH_CODEGEN_STORAGEPLAN_H
