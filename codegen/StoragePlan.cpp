//===- StoragePlan.cpp - buffers with disjoint lifetimes share storage -===//
#include "codegen/StoragePlan.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <queue>

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

/// The slots of one size, in the order they were opened, with a max tree
/// over each slot's `reach` (see placeStorageUnits): the lowest-numbered slot
/// whose reach passes a position is found in O(log S).
struct SizeGroup {
  int64_t numel;
  std::vector<int32_t> slots;
  std::vector<int32_t> tree; // 1-based heap of maxima, leaves at [capacity, 2·capacity)
  int32_t capacity = 0;

  void set(int32_t position, int32_t reach) {
    int32_t i = capacity + position;
    tree[static_cast<size_t>(i)] = reach;
    for (i /= 2; i >= 1; i /= 2)
      tree[static_cast<size_t>(i)] =
          std::max(tree[static_cast<size_t>(2 * i)], tree[static_cast<size_t>(2 * i + 1)]);
  }
  /// A new slot at the end; the tree doubles when full (its leaves copied).
  int32_t append(int32_t slot) {
    int32_t position = static_cast<int32_t>(slots.size());
    slots.push_back(slot);
    if (position >= capacity) {
      int32_t grown = std::max(1, capacity * 2);
      std::vector<int32_t> leaves(tree.begin() + capacity, tree.begin() + 2 * capacity);
      tree.assign(static_cast<size_t>(2 * grown), INT32_MIN);
      std::copy(leaves.begin(), leaves.end(), tree.begin() + grown);
      capacity = grown;
      for (int32_t i = capacity - 1; i >= 1; --i)
        tree[static_cast<size_t>(i)] =
            std::max(tree[static_cast<size_t>(2 * i)], tree[static_cast<size_t>(2 * i + 1)]);
    }
    return position;
  }
  /// The lowest position whose reach is greater than `last`, or -1.
  int32_t firstBeyond(int32_t last) const {
    if (capacity == 0 || tree[1] <= last)
      return -1;
    int32_t i = 1;
    while (i < capacity)
      i = tree[static_cast<size_t>(2 * i)] > last ? 2 * i : 2 * i + 1;
    return i - capacity;
  }
};

} // namespace

std::vector<int32_t> placeStorageUnits(const std::vector<StorageUnit> &units,
                                       std::vector<int64_t> &slotNumel) {
  // A slot's occupants are disjoint intervals, so by first position they are
  // also by last. For a unit [first, last], the one occupant that can decide
  // is the earliest whose last position is at or after `first`: the slot is
  // free over the unit iff that occupant starts after `last` (or there is
  // none). That occupant's start is the slot's `reach` at `first`
  // (INT32_MAX: none). Units of one size come by first position, so while
  // one size is placed `first` only grows, and a slot's reach changes only
  // when `first` passes its deciding occupant's end (an event, kept in a
  // heap) or when a unit joins it. A new size starts every slot over.
  struct SlotState {
    std::map<int32_t, int32_t> busy; // first -> last
    int32_t group, position;
    int32_t eventAt = -1; // when the reach changes next (-1: never)
  };
  std::vector<SlotState> slots;
  std::vector<SizeGroup> groups; // by size, largest first
  using Event = std::pair<int32_t, int32_t>; // (position, slot)
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
  auto setReach = [&](int32_t s, int32_t at) {
    SlotState &slot = slots[static_cast<size_t>(s)];
    auto it = slot.busy.upper_bound(at);
    if (it != slot.busy.begin() && std::prev(it)->second >= at)
      --it;
    int32_t reach = INT32_MAX;
    slot.eventAt = -1;
    if (it != slot.busy.end()) {
      reach = it->first;
      slot.eventAt = it->second + 1;
      events.push({slot.eventAt, s});
    }
    groups[static_cast<size_t>(slot.group)].set(slot.position, reach);
  };

  std::vector<int32_t> slotOf(units.size(), -1);
  int64_t size = -1;
  for (size_t u = 0; u < units.size(); ++u) {
    const StorageUnit &unit = units[u];
    if (unit.numel != size) { // a new size: every slot's reach from the start
      size = unit.numel;
      events = {};
      for (int32_t s = 0; s < static_cast<int32_t>(slots.size()); ++s)
        setReach(s, INT32_MIN);
    }
    while (!events.empty() && events.top().first <= unit.first) {
      auto [at, s] = events.top();
      events.pop();
      if (slots[static_cast<size_t>(s)].eventAt == at) // else superseded
        setReach(s, unit.first);
    }
    // The smallest size with a free slot (the last groups are the smallest).
    int32_t chosen = -1;
    for (auto g = groups.rbegin(); g != groups.rend() && chosen < 0; ++g)
      if (int32_t position = g->firstBeyond(unit.last); position >= 0)
        chosen = g->slots[static_cast<size_t>(position)];
    if (chosen < 0) {
      chosen = static_cast<int32_t>(slots.size());
      if (groups.empty() || groups.back().numel != unit.numel)
        groups.push_back({unit.numel, {}, {}, 0});
      SizeGroup &group = groups.back();
      slots.push_back({{}, static_cast<int32_t>(groups.size() - 1), group.append(chosen)});
      slotNumel.push_back(unit.numel);
    }
    SlotState &slot = slots[static_cast<size_t>(chosen)];
    slot.busy.emplace(unit.first, unit.last);
    setReach(chosen, unit.first); // the unit itself decides now
    slotOf[u] = chosen;
  }
  return slotOf;
}

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

  // A buffer's size in the slots' elements (Real, 4 or 8 bytes): a rank-0
  // value still takes one element; a bf16 one (2 bytes an element) half its
  // count, rounded up.
  auto numelOf = [&](int32_t b) {
    const rt::BufferDesc &d = p.buffers[b];
    const int64_t n = std::max<int64_t>(d.numel, 1);
    return d.dtype == rt::DType::Bf16 ? (n + 1) / 2 : n;
  };
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
  // as large, so none grows), else into a new slot (placeStorageUnits).
  // Smaller buffers fill the gaps in the lifetimes of larger ones.
  std::stable_sort(units.begin(), units.end(), [&](const Unit &x, const Unit &y) {
    if (x.numel != y.numel)
      return x.numel > y.numel;
    return x.life.first < y.life.first;
  });
  std::vector<StorageUnit> placing;
  placing.reserve(units.size());
  for (const Unit &u : units)
    placing.push_back({u.numel, u.life.first, u.life.last});
  std::vector<int64_t> slotNumel;
  const std::vector<int32_t> slotOfUnit = placeStorageUnits(placing, slotNumel);
  std::vector<int32_t> slotBuffers(slotNumel.size(), 0);
  for (size_t i = 0; i < units.size(); ++i) {
    slotBuffers[static_cast<size_t>(slotOfUnit[i])] += units[i].buffers;
    for (int32_t m = units[i].head; m >= 0; m = next[static_cast<size_t>(m)])
      plan.slotOf[static_cast<size_t>(m)] = slotOfUnit[i];
  }

  // A buffer no step of the program touches (a fused chain's result that its
  // kernel does not store: only the chain read it) holds no value. It goes
  // into the smallest slot that fits it, whoever else lives there, rather
  // than keep storage of its own; where no slot fits, it keeps its own.
  std::vector<bool> touched(static_cast<size_t>(n), false);
  for (const rt::StepAccess &a : access)
    for (const std::vector<int32_t> *list : {&a.reads, &a.writes})
      for (int32_t b : *list)
        if (b >= 0 && b < n)
          touched[static_cast<size_t>(b)] = true;
  // The slots by size (then number): the smallest that fits is one binary
  // search away, not a scan of every slot per buffer.
  std::vector<std::pair<int64_t, int32_t>> bySize;
  bySize.reserve(slotNumel.size());
  for (size_t s = 0; s < slotNumel.size(); ++s)
    bySize.emplace_back(slotNumel[s], static_cast<int32_t>(s));
  std::sort(bySize.begin(), bySize.end());
  for (int32_t b = 0; b < n; ++b) {
    const rt::BufferDesc &d = p.buffers[b];
    if (d.alias_of != -1 || pinned[static_cast<size_t>(b)] || d.zero_init ||
        touched[static_cast<size_t>(b)])
      continue;
    plan.ownedAtLeast -= numelOf(b); // it needs none
    auto slot = std::lower_bound(bySize.begin(), bySize.end(),
                                 std::pair<int64_t, int32_t>{numelOf(b), -1});
    if (slot == bySize.end())
      continue;
    const int32_t fits = slot->second;
    plan.slotOf[static_cast<size_t>(b)] = fits;
    slotBuffers[static_cast<size_t>(fits)]++;
    plan.untouchedShared++;
  }

  // A slot of one occupant is just that buffer's own storage.
  std::vector<int32_t> renumber(slotNumel.size(), -1);
  for (size_t s = 0; s < slotNumel.size(); ++s)
    if (slotBuffers[s] > 1) {
      renumber[s] = static_cast<int32_t>(plan.slotNumel.size());
      plan.slotNumel.push_back(slotNumel[s]);
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
