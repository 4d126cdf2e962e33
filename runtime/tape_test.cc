// Tests for tape.h: reverse-order VJP calls, nodes without a VJP, printing.
#include "runtime/tape.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace vouch::rt {
namespace {

struct Log {
  std::string calls;
};
// Each VJP logs its letter and the node id it was called for.
void log_call(void* ctx, const char* letter, int node_id) {
  static_cast<Log*>(ctx)->calls += letter + std::to_string(node_id) + " ";
}
void vjp_a(void* ctx, int node_id) { log_call(ctx, "a", node_id); }
void vjp_b(void* ctx, int node_id) { log_call(ctx, "b", node_id); }
void vjp_c(void* ctx, int node_id) { log_call(ctx, "c", node_id); }

// Saved buffers live in static arrays: a TapeNode only points at them.
const SavedBuffer kXW1[] = {{"x"}, {"W1"}};
const SavedBuffer kPredY[] = {{"pred"}, {"y"}};
const SavedBuffer kH[] = {{"h"}};

TEST(TapeTest, BackwardRunsVjpsLastToFirst) {
  Tape tape;
  tape.record({"matmul", "unassigned", 0, kXW1, vjp_a});
  tape.record({"reshape", "unassigned", 1, {}, nullptr});  // nothing to propagate
  tape.record({"add", "unassigned", 2, {}, vjp_b});
  tape.record({"mse_loss", "unassigned", 3, kPredY, vjp_c});
  ASSERT_EQ(tape.size(), 4u);
  Log log;
  tape.backward(&log);
  EXPECT_EQ(log.calls, "c3 b2 a0 ");
  tape.clear();
  EXPECT_EQ(tape.size(), 0u);
  tape.backward(&log);
  EXPECT_EQ(log.calls, "c3 b2 a0 ");
}

TEST(TapeTest, OneFunctionServesEveryNodeById) {
  Tape tape;
  tape.record({"linear", "unassigned", 7, {}, vjp_a});
  tape.record({"relu", "unassigned", 12, {}, vjp_a});
  tape.record({"linear", "unassigned", 9, {}, vjp_a});
  Log log;
  tape.backward(&log);
  EXPECT_EQ(log.calls, "a9 a12 a7 ");
}

TEST(TapeTest, PrintsOneLinePerNode) {
  Tape tape;
  tape.record({"matmul", "native_cpu.matmul", 4, kXW1, vjp_a});
  tape.record({"relu", "unassigned", 5, kH, vjp_b});
  std::ostringstream out;
  tape.print(out);
  EXPECT_EQ(out.str(),
            "  #0 matmul capsule=native_cpu.matmul node=4 saved=[x, W1]\n"
            "  #1 relu capsule=unassigned node=5 saved=[h]\n");
  EXPECT_EQ(tape.nodes()[1].node_id, 5);
}

TEST(TapeTest, PrintsWhatRanAndTheSavedShapesWhenKnown) {
  static const SavedBuffer saved[] = {{"x", "[1, 2]", "f32", 8}, {"w1", "[8, 2]", "f32", 64}};
  static const std::string vjp_ran = "vouch_small_product [native_cuda.matmul]";
  Tape tape;
  TapeNode node{"linear", "native_cuda.linear", 0, saved, vjp_a, "vouch_small_linear",
                &vjp_ran};
  tape.record(node);
  std::ostringstream out;
  tape.print(out);
  EXPECT_EQ(out.str(),
            "  #0 linear capsule=native_cuda.linear node=0 ran=vouch_small_linear "
            "saved=[x f32[1, 2] 8 B, w1 f32[8, 2] 64 B] "
            "vjp=[vouch_small_product [native_cuda.matmul]]\n");
}

TEST(TapeTest, DefaultCapsuleIsUnassigned) {
  TapeNode node;
  EXPECT_STREQ(node.capsule, "unassigned");
}

}  // namespace
}  // namespace vouch::rt
