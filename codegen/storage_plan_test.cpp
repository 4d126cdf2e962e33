// Tests for StoragePlan.h on hand-written Programs whose lifetimes are known
// by construction: which buffers share, which must not, and what it saves.
// That sharing changes no result is checked end to end (tests/BUILD.bazel:
// storage_reuse_*_test, every model built with and without reuse, bitwise).
#include "codegen/StoragePlan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "runtime/executor.h"

namespace vouch::codegen {
namespace {

using rt::ArgDesc;
using rt::BufferDesc;
using rt::DType;

// A program of kernel steps, each reading some buffers and writing others,
// all forward steps but the last `vjp` ones, which are one node's VJP.
struct Steps {
  std::vector<BufferDesc> buffers;
  std::vector<rt::StepDesc> steps;
  std::vector<ArgDesc> args;
  std::vector<int32_t> params, grads, fields, states;
  int32_t loss = -1, output = -1;
  rt::NodeDesc node{};
  rt::Program program{};

  int32_t buffer(const char *name, int64_t numel, int32_t aliasOf = -1,
                 bool zeroed = false) {
    buffers.push_back({numel, aliasOf, name, "[]", DType::Real, zeroed});
    return static_cast<int32_t>(buffers.size() - 1);
  }
  void step(std::vector<int32_t> reads, std::vector<int32_t> writes) {
    rt::StepDesc s{};
    s.kind = rt::StepKind::Kernel;
    s.first_arg = static_cast<int32_t>(args.size());
    for (int32_t b : reads)
      args.push_back({ArgDesc::Buffer, b, 0, 0});
    for (int32_t b : writes)
      args.push_back({ArgDesc::Buffer, b, 1, 0});
    s.num_args = static_cast<int32_t>(reads.size() + writes.size());
    s.grid_x = s.block_x = s.block_y = 1;
    steps.push_back(s);
  }
  const rt::Program &finish(int32_t vjpSteps) {
    program.name = "plan";
    program.buffers = buffers.data();
    program.num_buffers = static_cast<int32_t>(buffers.size());
    program.params = params.data();
    program.grads = grads.data();
    program.num_params = static_cast<int32_t>(params.size());
    program.fields = fields.data();
    program.num_fields = static_cast<int32_t>(fields.size());
    program.states = states.data();
    program.num_states = static_cast<int32_t>(states.size());
    program.loss = loss;
    program.output = output;
    program.steps = steps.data();
    program.num_steps = static_cast<int32_t>(steps.size());
    program.forward_end = program.num_steps - vjpSteps;
    program.prologue_begin = program.prologue_end = program.num_steps;
    program.args = args.data();
    program.num_args = static_cast<int32_t>(args.size());
    node = {0, "op", "capsule", "kernel", 0, program.forward_end, program.num_steps,
            nullptr, 0};
    program.nodes = &node;
    program.num_nodes = 1;
    static const char *names[] = {"k"};
    program.kernel_names = names;
    program.num_kernels = 1;
    EXPECT_TRUE(rt::check_program(program).ok()) << rt::check_program(program).message();
    return program;
  }
};

// The chain of the two tests below: t1 lives over every step; t2 [1, 2] and
// t3 [2, 3] overlap at step 2; d is first written at step 4, after both died.
// With `view`, the VJP also reads t3 through a view at step 4.
struct Chain {
  int32_t w, gw, x, t1, t2, t3, loss, d, view = -1;
};
Chain buildChain(Steps &p, bool view) {
  Chain c;
  c.w = p.buffer("w", 4), c.gw = p.buffer("gw", 4), c.x = p.buffer("x", 4);
  c.t1 = p.buffer("t1", 4), c.t2 = p.buffer("t2", 8), c.t3 = p.buffer("t3", 4);
  c.loss = p.buffer("loss", 1), c.d = p.buffer("d", 4);
  if (view)
    c.view = p.buffer("t3_view", 4, c.t3);
  p.params = {c.w};
  p.grads = {c.gw};
  p.fields = {c.x};
  p.loss = p.output = c.loss;
  p.step({c.x, c.w}, {c.t1});  // 0
  p.step({c.t1}, {c.t2});      // 1
  p.step({c.t2}, {c.t3});      // 2
  p.step({c.t3}, {c.loss});    // 3
  if (view)                    // 4: the VJP
    p.step({c.loss, c.t1, c.view}, {c.d});
  else
    p.step({c.loss, c.t1}, {c.d});
  p.step({c.d, c.x}, {c.gw});  // 5
  p.finish(2);
  return c;
}

// The model's state (batch_norm's running statistics) persists from step to
// step: never shared, even where the step order would let it (here a step
// only writes it, after t3 died, so a plan reading lifetimes alone would put it
// in t3's slot).
TEST(StoragePlanTest, StateKeepsItsOwnStorage) {
  for (bool isState : {false, true}) {
    Steps p;
    int32_t w = p.buffer("w", 4), gw = p.buffer("gw", 4), x = p.buffer("x", 4);
    int32_t t1 = p.buffer("t1", 4), t3 = p.buffer("t3", 4), loss = p.buffer("loss", 1);
    int32_t state = p.buffer("bn.running_mean", 4);
    p.params = {w};
    p.grads = {gw};
    p.fields = {x};
    if (isState)
      p.states = {state};
    p.loss = p.output = loss;
    p.step({x, w}, {t1});       // 0
    p.step({t1}, {t3});         // 1
    p.step({t3}, {loss});       // 2
    p.step({x}, {state});       // 3: writes the state, t3 is dead
    p.step({loss, x}, {gw});    // 4: the VJP
    p.finish(1);
    StoragePlan plan = planStorage(p.program);
    if (isState)
      EXPECT_EQ(plan.slotOf[state], -1) << "state shares storage";
    else
      EXPECT_GE(plan.slotOf[state], 0) << "the case would not exercise the pin";
  }
}

// d takes the slot that fits best (t3's 4 elements, not t2's 8); t1 and t2
// keep their own storage.
TEST(StoragePlanTest, ADeadBuffersStorageGoesToTheBestFittingNewcomer) {
  Steps p;
  const Chain c = buildChain(p, /*view=*/false);
  StoragePlan plan = planStorage(p.program);
  ASSERT_EQ(plan.slotNumel.size(), 1u);
  EXPECT_EQ(plan.slotNumel[0], 4);
  EXPECT_EQ(plan.slotOf[c.t3], 0);
  EXPECT_EQ(plan.slotOf[c.d], 0);
  for (int32_t b : {c.w, c.gw, c.x, c.t1, c.t2, c.loss})
    EXPECT_EQ(plan.slotOf[b], -1) << p.buffers[b].name;
  EXPECT_EQ(plan.shared, 2);
  EXPECT_EQ(plan.ownedBefore, 4 + 4 + 4 + 4 + 8 + 4 + 1 + 4);
  EXPECT_EQ(plan.ownedAfter, plan.ownedBefore - 4);
  // At step 2, t1, t2 and t3 are alive: 16 sharable elements of 20.
  EXPECT_EQ(plan.ownedAtLeast, plan.ownedBefore - 20 + 16);
}

// A buffer no step touches (a fused chain's result its kernel never stores)
// holds no value: it rides in the smallest slot that fits it (t3 and d's),
// one too large for every slot keeps its own storage, and zero-initialised
// scratch keeps its own whatever touches it.
TEST(StoragePlanTest, AnUntouchedBufferRidesInASlotThatFitsIt) {
  Steps p;
  const int32_t small = p.buffer("unstored", 3);
  const int32_t large = p.buffer("unstored_large", 100);
  const int32_t zeroed = p.buffer("zeroed", 2, -1, /*zeroed=*/true);
  const Chain c = buildChain(p, /*view=*/false);
  StoragePlan plan = planStorage(p.program);
  // t3 and d share a slot of 4; the untouched buffer rides in a slot of 4
  // (that one, or t1's, whose storage then becomes a slot of two).
  ASSERT_GE(plan.slotOf[small], 0);
  EXPECT_EQ(plan.slotNumel[static_cast<size_t>(plan.slotOf[small])], 4);
  EXPECT_EQ(plan.slotOf[c.d], plan.slotOf[c.t3]);
  EXPECT_EQ(plan.slotOf[large], -1);
  EXPECT_EQ(plan.slotOf[zeroed], -1);
  EXPECT_EQ(plan.untouchedShared, 1);
  EXPECT_EQ(plan.ownedBefore, 3 + 100 + 2 + 4 + 4 + 4 + 4 + 8 + 4 + 1 + 4);
  EXPECT_EQ(plan.ownedAfter, plan.ownedBefore - 4 - 3);
  // The lower bound needs nothing for either untouched buffer.
  EXPECT_EQ(plan.ownedAtLeast, plan.ownedBefore - 20 + 16 - 3 - 100);
}

// A view read late keeps its source alive: t3 is read through its view at
// step 4, so d cannot have t3's storage and takes t2's (8 elements fit 4).
TEST(StoragePlanTest, AViewKeepsItsSourceAliveUntilItsLastReader) {
  Steps p;
  const Chain c = buildChain(p, /*view=*/true);
  StoragePlan plan = planStorage(p.program);
  EXPECT_EQ(plan.slotOf[c.view], -1);  // a view has no storage of its own
  EXPECT_EQ(plan.slotOf[c.t3], -1);
  ASSERT_GE(plan.slotOf[c.d], 0);
  EXPECT_EQ(plan.slotOf[c.d], plan.slotOf[c.t2]);
  EXPECT_EQ(plan.slotNumel[plan.slotOf[c.d]], 8);
}

// Every buffer below has a lifetime disjoint from the temporary `t`'s and
// the same size, yet none may take its storage: parameters and gradients
// (the optimizer reads them after the step), the data fields and the loss
// and output (the host reads them), zero-initialised scratch (its kernel
// expects zeros) and a buffer whose first touch reads it (its value crosses
// the step boundary). (One no step touches may: AnUntouchedBufferRides...)
TEST(StoragePlanTest, StateThatOutlivesTheStepNeverShares) {
  Steps p;
  int32_t w = p.buffer("w", 4), gw = p.buffer("gw", 4), x = p.buffer("x", 4);
  int32_t t = p.buffer("t", 4), out = p.buffer("out", 4), loss = p.buffer("loss", 1);
  int32_t state = p.buffer("state", 4), zeroed = p.buffer("counter", 4, -1, true);
  int32_t late = p.buffer("late", 4);
  p.params = {w};
  p.grads = {gw};
  p.fields = {x};
  p.loss = loss;
  p.output = out;
  p.step({x}, {t});               // 0: t lives over steps 0 and 1
  p.step({w, state, t}, {out});   // 1
  p.step({out}, {loss, state});   // 2
  p.step({zeroed}, {zeroed});     // 3: the VJP
  p.step({loss}, {gw});           // 4
  p.step({}, {late});             // 5: late may share t's storage
  p.step({late}, {gw});           // 6
  StoragePlan plan = planStorage(p.finish(4));
  ASSERT_EQ(plan.slotNumel.size(), 1u);
  EXPECT_EQ(plan.slotOf[t], 0);
  EXPECT_EQ(plan.slotOf[late], 0);
  for (int32_t b : {w, gw, x, out, loss, state, zeroed})
    EXPECT_EQ(plan.slotOf[b], -1) << p.buffers[b].name;
}

// The VJPs run after the forward pass, last node first: a forward temporary
// dead before the VJPs can give its storage to a VJP's temporary, but a
// buffer that two nodes' VJPs read lives until the later of them runs.
TEST(StoragePlanTest, LifetimesFollowTheTapesReverseOrder) {
  Steps p;
  int32_t w = p.buffer("w", 4), gw = p.buffer("gw", 4), x = p.buffer("x", 4);
  int32_t a = p.buffer("a", 4), b = p.buffer("b", 4), loss = p.buffer("loss", 1);
  int32_t da = p.buffer("da", 4), db = p.buffer("db", 4);
  p.params = {w};
  p.grads = {gw};
  p.fields = {x};
  p.loss = p.output = loss;
  p.step({x, w}, {a});     // 0: node 0
  p.step({a}, {b});        // 1: node 1
  p.step({b}, {loss});     // 2
  p.step({a, loss}, {da}); // 3: node 0's VJP, which runs last
  p.step({da, x}, {gw});   // 4
  p.step({b, loss}, {db}); // 5: node 1's VJP, which runs first
  p.step({db}, {gw});      // 6
  p.finish(4);
  rt::NodeDesc nodes[] = {{0, "a", "c", "k", 0, 3, 5, nullptr, 0},
                          {1, "b", "c", "k", 1, 5, 7, nullptr, 0}};
  p.program.nodes = nodes;
  p.program.num_nodes = 2;
  // Order: 0 1 2 5 6 3 4. db [5, 6] is dead when da is first written (3).
  const std::vector<int32_t> order = rt::training_step_order(p.program);
  ASSERT_EQ(order, (std::vector<int32_t>{0, 1, 2, 5, 6, 3, 4}));
  StoragePlan plan = planStorage(p.program);
  ASSERT_GE(plan.slotOf[da], 0);
  EXPECT_TRUE(plan.slotOf[da] == plan.slotOf[db] || plan.slotOf[da] == plan.slotOf[b])
      << "da may take db's or b's storage";
  EXPECT_EQ(plan.slotOf[a], -1);  // read by the VJP that runs last
}

// In place (InPlaceStep): the classifier's shape. Forward: z = f(x, w) (0),
// loss = g(z) (1); the VJP: dz = h(z, loss) (2), z's last reader, dz the
// same size; gw = k(dz, x) (3). z [0, 2] and dz [2, 3] overlap at step 2.
struct Classifier {
  int32_t w, gw, x, z, out, loss, dz, zView = -1;
};
Classifier buildClassifier(Steps &p, bool zIsOutput, bool zReadLater = false,
                           bool viaView = false, int64_t dzNumel = 6) {
  Classifier c;
  c.w = p.buffer("w", 4), c.gw = p.buffer("gw", 4), c.x = p.buffer("x", 4);
  c.z = p.buffer("z", 6), c.out = p.buffer("out", 1), c.loss = p.buffer("loss", 1);
  c.dz = p.buffer("dz", dzNumel);
  if (viaView)
    c.zView = p.buffer("z_view", 6, c.z);
  p.params = {c.w};
  p.grads = {c.gw};
  p.fields = {c.x};
  p.loss = c.loss;
  p.output = zIsOutput ? c.z : c.out;
  p.step({c.x, c.w}, {c.z});         // 0
  p.step({c.z}, {c.loss, c.out});    // 1
  p.step({c.z, c.loss}, {c.dz});     // 2: the VJP
  if (zReadLater)                    // 3
    p.step({c.dz, viaView ? c.zView : c.z}, {c.gw});
  else
    p.step({c.dz, c.x}, {c.gw});
  p.finish(2);
  return c;
}

// Allowed in place, dz takes z's storage at the step that reads z last: one
// slot of 6 holds both, and the bound counts the pair once at step 2. Not
// allowed (an op without inPlaceOperand), they overlap there and keep their
// own storage.
TEST(StoragePlanTest, AnInPlaceStepWritesItsResultOverItsOperand) {
  Steps p;
  const Classifier c = buildClassifier(p, /*zIsOutput=*/false);
  StoragePlan plain = planStorage(p.program);
  EXPECT_EQ(plain.slotOf[c.z], -1);
  EXPECT_EQ(plain.slotOf[c.dz], -1);
  EXPECT_TRUE(plain.inPlaceSteps.empty());
  EXPECT_EQ(plain.ownedAfter, plain.ownedBefore);
  // z and dz both alive at step 2: 12 sharable elements, all of them needed.
  EXPECT_EQ(plain.ownedAtLeast, plain.ownedBefore);

  StoragePlan plan = planStorage(p.program, {{2, c.z, c.dz}});
  ASSERT_GE(plan.slotOf[c.z], 0);
  EXPECT_EQ(plan.slotOf[c.dz], plan.slotOf[c.z]);
  ASSERT_EQ(plan.slotNumel.size(), 1u);
  EXPECT_EQ(plan.slotNumel[0], 6);
  EXPECT_EQ(plan.inPlaceSteps, std::vector<int32_t>{2});
  EXPECT_EQ(plan.shared, 2);
  EXPECT_EQ(plan.ownedAfter, plan.ownedBefore - 6);
  EXPECT_EQ(plan.ownedAtLeast, plan.ownedBefore - 6);
  for (int32_t b : {c.w, c.gw, c.x, c.out, c.loss})
    EXPECT_EQ(plan.slotOf[b], -1) << p.buffers[b].name;
}

// Not z's last reader (step 3 reads z too, directly or through a view): dz
// must not overwrite it.
TEST(StoragePlanTest, AStepThatIsNotTheOperandsLastReaderIsNotInPlace) {
  for (bool viaView : {false, true}) {
    Steps p;
    const Classifier c = buildClassifier(p, false, /*zReadLater=*/true, viaView);
    StoragePlan plan = planStorage(p.program, {{2, c.z, c.dz}}, true);
    EXPECT_TRUE(plan.inPlaceSteps.empty()) << "view " << viaView;
    EXPECT_EQ(plan.slotOf[c.z], -1);
    EXPECT_EQ(plan.slotOf[c.dz], -1);
  }
}

// Another size, or pinned state as the operand (a param: w read last by a
// VJP step writing a buffer of its size) or as the result (a gradient): not
// in place. A pair naming a step that does not read / write them: ignored.
TEST(StoragePlanTest, OnlySharableBuffersOfOneSizeGoInPlace) {
  {
    Steps p;
    const Classifier c = buildClassifier(p, false, false, false, /*dzNumel=*/5);
    EXPECT_TRUE(planStorage(p.program, {{2, c.z, c.dz}}).inPlaceSteps.empty());
  }
  Steps p;
  int32_t w = p.buffer("w", 4), gw = p.buffer("gw", 4), x = p.buffer("x", 4);
  int32_t loss = p.buffer("loss", 1), t = p.buffer("t", 4), u = p.buffer("u", 4);
  p.params = {w};
  p.grads = {gw};
  p.fields = {x};
  p.loss = p.output = loss;
  p.step({x, w}, {loss});  // 0
  p.step({loss, x}, {t});  // 1: the VJP
  p.step({t, w}, {u});     // 2: w's last reader
  p.step({u}, {gw});       // 3: u's last reader, writing a gradient
  StoragePlan plan =
      planStorage(p.finish(3), {{2, w, u}, {3, u, gw}, {1, x, t}, {0, t, u}}, true);
  EXPECT_TRUE(plan.inPlaceSteps.empty());
  for (int32_t b : {w, gw, x, loss})
    EXPECT_EQ(plan.slotOf[b], -1) << p.buffers[b].name;
}

// The output (every classifier's logits) as the operand: the host reads it
// at the end of the forward pass on cuda (outputReadAtForwardEnd), so a VJP
// step may write over it there; on cpu (prediction() is the buffer) never.
TEST(StoragePlanTest, TheOutputGoesInPlaceOnlyWhereTheHostReadsItAtTheForwardsEnd) {
  Steps p;
  const Classifier c = buildClassifier(p, /*zIsOutput=*/true);
  StoragePlan cpu = planStorage(p.program, {{2, c.z, c.dz}}, false);
  EXPECT_TRUE(cpu.inPlaceSteps.empty());
  EXPECT_EQ(cpu.slotOf[c.z], -1);
  StoragePlan cuda = planStorage(p.program, {{2, c.z, c.dz}}, true);
  EXPECT_EQ(cuda.inPlaceSteps, std::vector<int32_t>{2});
  ASSERT_GE(cuda.slotOf[c.z], 0);
  EXPECT_EQ(cuda.slotOf[c.dz], cuda.slotOf[c.z]);
  EXPECT_EQ(cuda.ownedAfter, cuda.ownedBefore - 6);

  // Written over by a forward step, it would be gone when the forward ends.
  Steps f;
  int32_t w = f.buffer("w", 4), gw = f.buffer("gw", 4), x = f.buffer("x", 4);
  int32_t z = f.buffer("z", 4), y = f.buffer("y", 4), loss = f.buffer("loss", 1);
  f.params = {w};
  f.grads = {gw};
  f.fields = {x};
  f.loss = loss;
  f.output = z;
  f.step({x, w}, {z});     // 0
  f.step({z}, {y});        // 1: z's last reader, in the forward pass
  f.step({y}, {loss});     // 2
  f.step({loss, x}, {gw}); // 3: the VJP
  EXPECT_TRUE(planStorage(f.finish(1), {{1, z, y}}, true).inPlaceSteps.empty());
}

// A chain of in-place steps (a -> b -> c, each its operand's last reader)
// is one lifetime in one slot; the bound counts it once at every step.
TEST(StoragePlanTest, InPlaceStepsChain) {
  Steps p;
  int32_t w = p.buffer("w", 4), gw = p.buffer("gw", 4), x = p.buffer("x", 4);
  int32_t loss = p.buffer("loss", 1);
  int32_t a = p.buffer("a", 4), b = p.buffer("b", 4), c = p.buffer("c", 4);
  p.params = {w};
  p.grads = {gw};
  p.fields = {x};
  p.loss = p.output = loss;
  p.step({x, w}, {loss}); // 0
  p.step({loss, x}, {a}); // 1: the VJP
  p.step({a}, {b});       // 2
  p.step({b}, {c});       // 3
  p.step({c}, {gw});      // 4
  StoragePlan plan = planStorage(p.finish(4), {{3, b, c}, {2, a, b}});
  EXPECT_EQ(plan.inPlaceSteps, (std::vector<int32_t>{3, 2}));
  ASSERT_EQ(plan.slotNumel.size(), 1u);
  for (int32_t m : {a, b, c})
    EXPECT_EQ(plan.slotOf[m], 0) << p.buffers[m].name;
  EXPECT_EQ(plan.ownedAfter, plan.ownedBefore - 8);
  EXPECT_EQ(plan.ownedAtLeast, plan.ownedAfter);
}


// The packing rule as first written (every slot tried for every unit, which
// is quadratic): the reference placeStorageUnits must agree with exactly,
// slot for slot, since the slots' numbering shows in the tables and in
// `vouch build -v`.
std::vector<int32_t> placeByScanningEverySlot(const std::vector<StorageUnit> &units,
                                              std::vector<int64_t> &slotNumel) {
  std::vector<std::vector<std::pair<int32_t, int32_t>>> busy; // per slot
  std::vector<int32_t> slotOf;
  for (const StorageUnit &u : units) {
    int32_t best = -1;
    for (int32_t s = 0; s < static_cast<int32_t>(busy.size()); ++s) {
      if (best >= 0 && slotNumel[s] >= slotNumel[best])
        continue;
      bool free = true;
      for (auto [first, last] : busy[s])
        free &= last < u.first || first > u.last;
      if (free)
        best = s;
    }
    if (best < 0) {
      best = static_cast<int32_t>(busy.size());
      busy.emplace_back();
      slotNumel.push_back(u.numel);
    }
    busy[best].push_back({u.first, u.last});
    slotOf.push_back(best);
  }
  return slotOf;
}

// Random units (a few sizes, lifetimes short and long, many starting at one
// position) placed both ways: the same slot for every unit.
TEST(StoragePlanTest, FastPackingPlacesEveryUnitAsScanningEverySlotDoes) {
  uint64_t state = 12345;
  auto next = [&](uint64_t bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int64_t>((state >> 33) % bound);
  };
  int checked = 0, reused = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int32_t positions = 1 + static_cast<int32_t>(next(60));
    const int64_t sizes = 1 + next(5);
    std::vector<StorageUnit> units(static_cast<size_t>(1 + next(120)));
    for (StorageUnit &u : units) {
      u.numel = 1 + next(sizes) * 8;
      u.first = static_cast<int32_t>(next(positions));
      u.last = u.first + static_cast<int32_t>(next(4) == 0 ? next(positions) : next(3));
    }
    std::stable_sort(units.begin(), units.end(), [](const StorageUnit &x, const StorageUnit &y) {
      return x.numel != y.numel ? x.numel > y.numel : x.first < y.first;
    });
    std::vector<int64_t> fastNumel, slowNumel;
    std::vector<int32_t> fast = placeStorageUnits(units, fastNumel);
    std::vector<int32_t> slow = placeByScanningEverySlot(units, slowNumel);
    ASSERT_EQ(fast, slow) << "trial " << trial;
    ASSERT_EQ(fastNumel, slowNumel) << "trial " << trial;
    checked += static_cast<int>(units.size());
    reused += static_cast<int>(units.size() - slowNumel.size());
  }
  // The cases exercise sharing, not only fresh slots.
  EXPECT_GT(reused, checked / 4);
}

// A model of 100,000 ops has ~230,000 buffers in ~33,000 slots of one size:
// placing them must be fast (it took 45 s when every slot was tried for
// every unit; the test's size is small, so a quadratic placement times out).
TEST(StoragePlanTest, ManyUnitsOfOneSizePlaceFast) {
  std::vector<StorageUnit> units;
  // A chain: forward values live until their VJP (nested), backward
  // temporaries for a step or two.
  const int32_t n = 100000;
  for (int32_t i = 0; i < n; ++i)
    units.push_back({80, i, 2 * n - i});
  for (int32_t i = 0; i < 2 * n; ++i)
    units.push_back({80, 2 * n + i, 2 * n + i + 1});
  std::stable_sort(units.begin(), units.end(), [](const StorageUnit &x, const StorageUnit &y) {
    return x.first < y.first;
  });
  std::vector<int64_t> slotNumel;
  std::vector<int32_t> slotOf = placeStorageUnits(units, slotNumel);
  // The nested forward values need a slot each; the backward ones reuse two.
  EXPECT_EQ(slotNumel.size(), static_cast<size_t>(n));
  // slot 0 frees at 2n (its unit [0, 2n]), slot 1 one position earlier:
  // the temporaries alternate between them, the last (odd) one in slot 0.
  EXPECT_EQ(slotOf[n], 1);
  EXPECT_EQ(slotOf.back(), 0);
}

} // namespace
} // namespace vouch::codegen
