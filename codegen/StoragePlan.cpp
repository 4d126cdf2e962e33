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
  /// Its occupants' lifetimes, first step -> last step (disjoint).
  std::map<int32_t, int32_t> busy;
};

} // namespace

StoragePlan planStorage(const rt::Program &p) {
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
  pin(p.loss);
  pin(p.output);

  // A rank-0 value still takes one element.
  auto numelOf = [&](int32_t b) { return std::max<int64_t>(p.buffers[b].numel, 1); };
  const std::vector<Lifetime> life = lifetimes(p);
  std::vector<int32_t> candidates;
  for (int32_t b = 0; b < n; ++b) {
    const rt::BufferDesc &d = p.buffers[b];
    if (d.alias_of != -1)
      continue;
    plan.ownedBefore += numelOf(b);
    const Lifetime &l = life[static_cast<size_t>(b)];
    if (!pinned[static_cast<size_t>(b)] && !d.zero_init && l.first >= 0 && !l.firstReads)
      candidates.push_back(b);
  }
  std::vector<int64_t> change(static_cast<size_t>(p.num_steps) + 1, 0);
  int64_t sharable = 0;
  for (int32_t b : candidates) {
    const int64_t numel = numelOf(b);
    sharable += numel;
    change[static_cast<size_t>(life[static_cast<size_t>(b)].first)] += numel;
    change[static_cast<size_t>(life[static_cast<size_t>(b)].last) + 1] -= numel;
  }
  int64_t live = 0, mostLive = 0;
  for (int64_t c : change)
    mostLive = std::max(mostLive, live += c);
  plan.ownedAtLeast = plan.ownedBefore - sharable + mostLive;

  // Largest first: each buffer goes into the smallest slot none of whose
  // occupants is alive at any step it is (every slot holds a buffer at least
  // as large, so none grows), else into a new slot. Smaller buffers fill the
  // gaps in the lifetimes of larger ones.
  std::stable_sort(candidates.begin(), candidates.end(), [&](int32_t x, int32_t y) {
    if (numelOf(x) != numelOf(y))
      return numelOf(x) > numelOf(y);
    return life[static_cast<size_t>(x)].first < life[static_cast<size_t>(y)].first;
  });
  std::vector<Slot> slots;
  for (int32_t b : candidates) {
    const Lifetime &l = life[static_cast<size_t>(b)];
    int32_t best = -1;
    for (int32_t s = 0; s < static_cast<int32_t>(slots.size()); ++s) {
      if (best >= 0 && slots[s].numel >= slots[best].numel)
        continue;
      // The occupants, by first step: the one starting last before l.last
      // is the only one that can reach into [l.first, l.last].
      const std::map<int32_t, int32_t> &busy = slots[s].busy;
      auto next = busy.upper_bound(l.last);
      if (next != busy.begin() && std::prev(next)->second >= l.first)
        continue;
      best = s;
    }
    if (best < 0) {
      best = static_cast<int32_t>(slots.size());
      slots.push_back({numelOf(b), {}});
    }
    slots[best].busy.emplace(l.first, l.last);
    plan.slotOf[static_cast<size_t>(b)] = best;
  }

  // A slot of one occupant is just that buffer's own storage.
  std::vector<int32_t> renumber(slots.size(), -1);
  for (size_t s = 0; s < slots.size(); ++s)
    if (slots[s].busy.size() > 1) {
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
