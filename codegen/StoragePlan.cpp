//===- StoragePlan.cpp - buffers with disjoint lifetimes share storage -===//
#include "codegen/StoragePlan.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "runtime/executor.h"

namespace vouch::codegen {

namespace {

/// Where each owner is first and last touched in the step's order, and
/// whether that first touch reads it (then its value comes from before the
/// step, or from its zeroed start: it keeps its storage).
struct Lifetime {
  int32_t first = -1, last = -1;
  bool firstReads = false;
};

std::vector<Lifetime> lifetimes(const rt::Program &p) {
  const int32_t n = p.num_buffers;
  const std::vector<rt::StepAccess> access = rt::step_access(p, n + 1);
  std::vector<Lifetime> life(static_cast<size_t>(n));
  const std::vector<int32_t> order = rt::training_step_order(p);
  for (int32_t at = 0; at < static_cast<int32_t>(order.size()); ++at) {
    const rt::StepAccess &a = access[static_cast<size_t>(order[at])];
    // Reads first: a step that reads and writes a buffer it is the first to
    // touch reads what was there before.
    for (const std::vector<int32_t> *list : {&a.reads, &a.writes})
      for (int32_t b : *list) {
        if (b < 0 || b >= n) // a pseudo-buffer (step counter, workspace)
          continue;
        Lifetime &l = life[static_cast<size_t>(b)];
        if (l.first < 0) {
          l.first = at;
          l.firstReads = list == &a.reads;
        }
        l.last = at;
      }
  }
  return life;
}

struct Slot {
  int64_t numel;
  /// Its occupants' lifetimes, first step -> last step (disjoint); an
  /// in-place chain is one of them.
  std::map<int32_t, int32_t> busy;
  /// The buffers in it (an in-place chain's every buffer).
  int32_t buffers = 0;
};

} // namespace

StoragePlan planStorage(const rt::Program &p, const std::vector<InPlaceStep> &inPlace,
                        bool outputReadAtForwardEnd) {
  const int32_t n = p.num_buffers;
  StoragePlan plan;
  plan.slotOf.assign(static_cast<size_t>(n), -1);
  std::vector<bool> pinned(static_cast<size_t>(n), false);
  auto pin = [&](int32_t b) { pinned[static_cast<size_t>(rt::storage_owner(p, b))] = true; };
  for (int32_t i = 0; i < p.num_params; ++i) {
    pin(p.params[i]);
    pin(p.grads[i]);
  }
  for (int32_t f = 0; f < p.num_fields; ++f)
    pin(p.fields[f]);
  for (int32_t i = 0; i < p.num_states; ++i) // persists from step to step
    pin(p.states[i]);
  pin(p.loss);
  // The output stays pinned unless the host reads it only at the forward
  // pass's end; then it may still only be an in-place step's operand.
  const int32_t output = rt::storage_owner(p, p.output);
  const bool outputPinned = pinned[static_cast<size_t>(output)] || !outputReadAtForwardEnd;
  pin(p.output);

  // A rank-0 value still takes one element.
  auto numelOf = [&](int32_t b) { return std::max<int64_t>(p.buffers[b].numel, 1); };
  const std::vector<Lifetime> life = lifetimes(p);
  auto at = [&](int32_t b) -> const Lifetime & { return life[static_cast<size_t>(b)]; };
  std::vector<bool> sharable(static_cast<size_t>(n), false);
  for (int32_t b = 0; b < n; ++b) {
    const rt::BufferDesc &d = p.buffers[b];
    if (d.alias_of != -1)
      continue;
    plan.ownedBefore += numelOf(b);
    sharable[static_cast<size_t>(b)] = !pinned[static_cast<size_t>(b)] && !d.zero_init &&
                                       at(b).first >= 0 && !at(b).firstReads;
  }

  // In-place pairs join their buffers into chains (each buffer at most one
  // chain's link in and one out) that occupy one slot as one lifetime.
  std::vector<int32_t> position(static_cast<size_t>(p.num_steps), -1);
  {
    const std::vector<int32_t> order = rt::training_step_order(p);
    for (int32_t i = 0; i < static_cast<int32_t>(order.size()); ++i)
      position[static_cast<size_t>(order[i])] = i;
  }
  const std::vector<rt::StepAccess> access = rt::step_access(p, n + 1);
  std::vector<int32_t> next(static_cast<size_t>(n), -1), prev(static_cast<size_t>(n), -1);
  for (const InPlaceStep &ip : inPlace) {
    if (ip.step < 0 || ip.step >= p.num_steps || ip.operand < 0 || ip.operand >= n ||
        ip.result < 0 || ip.result >= n)
      continue;
    const int32_t step = position[static_cast<size_t>(ip.step)];
    const int32_t o = rt::storage_owner(p, ip.operand), r = rt::storage_owner(p, ip.result);
    if (step < 0 || o == r || next[static_cast<size_t>(o)] >= 0 ||
        prev[static_cast<size_t>(r)] >= 0)
      continue;
    // The output, where the host reads it at the forward pass's end: by a
    // step after the forward pass (it is then the output's last reader, so
    // the chain keeps the slot from the output's writer on, past the end).
    const bool operandSharable =
        sharable[static_cast<size_t>(o)] ||
        (o == output && !outputPinned && step >= p.forward_end && !p.buffers[o].zero_init &&
         at(o).first >= 0 && !at(o).firstReads);
    if (!operandSharable || !sharable[static_cast<size_t>(r)])
      continue;
    // The operand's last touch and the result's first are this step.
    if (at(o).last != step || at(r).first != step)
      continue;
    const rt::StepAccess &a = access[static_cast<size_t>(ip.step)];
    if (std::count(a.reads.begin(), a.reads.end(), o) != 1 ||
        std::count(a.writes.begin(), a.writes.end(), o) != 0 ||
        std::count(a.writes.begin(), a.writes.end(), r) == 0 ||
        std::count(a.reads.begin(), a.reads.end(), r) != 0)
      continue;
    const rt::BufferDesc &od = p.buffers[ip.operand], &rd = p.buffers[ip.result];
    if (numelOf(o) != numelOf(r) || od.numel != rd.numel || od.numel != p.buffers[o].numel ||
        rd.numel != p.buffers[r].numel || od.dtype != rd.dtype ||
        p.buffers[o].dtype != p.buffers[r].dtype)
      continue;
    next[static_cast<size_t>(o)] = r;
    prev[static_cast<size_t>(r)] = o;
    sharable[static_cast<size_t>(o)] = true; // (the output: now it may)
    plan.inPlaceSteps.push_back(ip.step);
  }

  // The units the plan places: each sharable buffer that heads a chain (a
  // buffer in none heads its own), with the chain's lifetime.
  struct Unit {
    int32_t head;
    int64_t numel;
    Lifetime life;
    int32_t buffers;
  };
  std::vector<Unit> units;
  int64_t sharableNumel = 0;
  for (int32_t b = 0; b < n; ++b) {
    if (!sharable[static_cast<size_t>(b)] || prev[static_cast<size_t>(b)] >= 0)
      continue;
    Unit u{b, numelOf(b), at(b), 0};
    for (int32_t m = b; m >= 0; m = next[static_cast<size_t>(m)]) {
      u.life.last = std::max(u.life.last, at(m).last);
      u.buffers++;
      sharableNumel += numelOf(m);
    }
    units.push_back(u);
  }
  std::vector<int64_t> change(static_cast<size_t>(p.num_steps) + 1, 0);
  for (const Unit &u : units) {
    change[static_cast<size_t>(u.life.first)] += u.numel;
    change[static_cast<size_t>(u.life.last) + 1] -= u.numel;
  }
  int64_t live = 0, mostLive = 0;
  for (int64_t c : change)
    mostLive = std::max(mostLive, live += c);
  plan.ownedAtLeast = plan.ownedBefore - sharableNumel + mostLive;

  // Largest first: each unit goes into the smallest slot none of whose
  // occupants is alive at any step it is (every slot holds a buffer at least
  // as large, so none grows), else into a new slot. Smaller buffers fill the
  // gaps in the lifetimes of larger ones.
  std::stable_sort(units.begin(), units.end(), [&](const Unit &x, const Unit &y) {
    if (x.numel != y.numel)
      return x.numel > y.numel;
    return x.life.first < y.life.first;
  });
  std::vector<Slot> slots;
  for (const Unit &u : units) {
    const Lifetime &l = u.life;
    int32_t best = -1;
    for (int32_t s = 0; s < static_cast<int32_t>(slots.size()); ++s) {
      if (best >= 0 && slots[s].numel >= slots[best].numel)
        continue;
      // The occupants, by first step: the one starting last before l.last
      // is the only one that can reach into [l.first, l.last].
      const std::map<int32_t, int32_t> &busy = slots[s].busy;
      auto after = busy.upper_bound(l.last);
      if (after != busy.begin() && std::prev(after)->second >= l.first)
        continue;
      best = s;
    }
    if (best < 0) {
      best = static_cast<int32_t>(slots.size());
      slots.push_back({u.numel, {}, 0});
    }
    slots[best].busy.emplace(l.first, l.last);
    slots[best].buffers += u.buffers;
    for (int32_t m = u.head; m >= 0; m = next[static_cast<size_t>(m)])
      plan.slotOf[static_cast<size_t>(m)] = best;
  }

  // A slot of one occupant is just that buffer's own storage.
  std::vector<int32_t> renumber(slots.size(), -1);
  for (size_t s = 0; s < slots.size(); ++s)
    if (slots[s].buffers > 1) {
      renumber[s] = static_cast<int32_t>(plan.slotNumel.size());
      plan.slotNumel.push_back(slots[s].numel);
    }
  plan.ownedAfter = plan.ownedBefore;
  for (int32_t b = 0; b < n; ++b) {
    int32_t &slot = plan.slotOf[static_cast<size_t>(b)];
    if (slot < 0)
      continue;
    slot = renumber[static_cast<size_t>(slot)];
    if (slot >= 0) {
      plan.ownedAfter -= numelOf(b);
      plan.shared++;
    }
  }
  plan.ownedAfter += std::accumulate(plan.slotNumel.begin(), plan.slotNumel.end(), int64_t(0));
  return plan;
}

} // namespace vouch::codegen
