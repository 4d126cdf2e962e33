// model_tables_test: a Program survives its blob field for field, and a damaged blob
// is refused with the reason (never decoded into wrong tables).
#include "runtime/model_tables.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "runtime/executor.h"
#include "runtime/test_program.h"

namespace vouch::rt {
namespace {

std::string text(const char* s) { return s ? s : "<null>"; }

void expect_same(const Program& a, const Program& b) {
  EXPECT_EQ(text(a.name), text(b.name));
  ASSERT_EQ(a.num_buffers, b.num_buffers);
  for (int32_t i = 0; i < a.num_buffers; i++) {
    EXPECT_EQ(a.buffers[i].numel, b.buffers[i].numel) << i;
    EXPECT_EQ(a.buffers[i].alias_of, b.buffers[i].alias_of) << i;
    EXPECT_EQ(text(a.buffers[i].name), text(b.buffers[i].name)) << i;
    EXPECT_EQ(text(a.buffers[i].shape), text(b.buffers[i].shape)) << i;
    EXPECT_EQ(a.buffers[i].dtype, b.buffers[i].dtype) << i;
    EXPECT_EQ(a.buffers[i].zero_init, b.buffers[i].zero_init) << i;
  }
  ASSERT_EQ(a.num_params, b.num_params);
  for (int32_t i = 0; i < a.num_params; i++) {
    EXPECT_EQ(a.params[i], b.params[i]);
    EXPECT_EQ(a.grads[i], b.grads[i]);
  }
  EXPECT_EQ(a.loss, b.loss);
  EXPECT_EQ(a.output, b.output);
  ASSERT_EQ(a.num_steps, b.num_steps);
  for (int32_t i = 0; i < a.num_steps; i++) {
    const StepDesc &x = a.steps[i], &y = b.steps[i];
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(x.kernel, y.kernel);
    EXPECT_EQ(x.first_arg, y.first_arg);
    EXPECT_EQ(x.num_args, y.num_args);
    EXPECT_EQ(x.grid_x, y.grid_x);
    EXPECT_EQ(x.block_x, y.block_x);
    EXPECT_EQ(x.block_y, y.block_y);
    EXPECT_EQ(x.trans_a, y.trans_a);
    EXPECT_EQ(x.trans_b, y.trans_b);
    EXPECT_EQ(x.batch, y.batch);
    EXPECT_EQ(x.m, y.m);
    EXPECT_EQ(x.n, y.n);
    EXPECT_EQ(x.k, y.k);
    EXPECT_EQ(x.stride_a, y.stride_a);
    EXPECT_EQ(x.stride_b, y.stride_b);
    EXPECT_EQ(x.a, y.a);
    EXPECT_EQ(x.b, y.b);
    EXPECT_EQ(x.c, y.c);
    EXPECT_EQ(x.bias, y.bias);
    EXPECT_EQ(text(x.what), text(y.what));
    EXPECT_EQ(text(x.capsule), text(y.capsule));
    EXPECT_EQ(x.shared_bytes, y.shared_bytes);
    EXPECT_EQ(x.blocks_per_sm, y.blocks_per_sm);
    EXPECT_EQ(x.shared_bytes_f64, y.shared_bytes_f64);
  }
  EXPECT_EQ(a.forward_end, b.forward_end);
  EXPECT_EQ(a.prologue_begin, b.prologue_begin);
  EXPECT_EQ(a.prologue_end, b.prologue_end);
  ASSERT_EQ(a.num_args, b.num_args);
  for (int32_t i = 0; i < a.num_args; i++) {
    EXPECT_EQ(a.args[i].kind, b.args[i].kind);
    EXPECT_EQ(a.args[i].value, b.args[i].value);
    EXPECT_EQ(a.args[i].count, b.args[i].count);
    // Bit for bit (a real argument is a constant of the model).
    EXPECT_EQ(0, std::memcmp(&a.args[i].real, &b.args[i].real, sizeof(double)));
  }
  ASSERT_EQ(a.num_ints, b.num_ints);
  for (int32_t i = 0; i < a.num_ints; i++) EXPECT_EQ(a.ints[i], b.ints[i]);
  ASSERT_EQ(a.num_nodes, b.num_nodes);
  for (int32_t i = 0; i < a.num_nodes; i++) {
    const NodeDesc &x = a.nodes[i], &y = b.nodes[i];
    EXPECT_EQ(x.id, y.id);
    EXPECT_EQ(text(x.op), text(y.op));
    EXPECT_EQ(text(x.capsule), text(y.capsule));
    EXPECT_EQ(text(x.kernel), text(y.kernel));
    EXPECT_EQ(x.after_step, y.after_step);
    EXPECT_EQ(x.vjp_begin, y.vjp_begin);
    EXPECT_EQ(x.vjp_end, y.vjp_end);
    ASSERT_EQ(x.num_saved, y.num_saved);
    for (int32_t k = 0; k < x.num_saved; k++) EXPECT_EQ(text(x.saved[k]), text(y.saved[k]));
    ASSERT_EQ(x.num_state, y.num_state);
    for (int32_t k = 0; k < x.num_state; k++) EXPECT_EQ(text(x.state[k]), text(y.state[k]));
  }
  ASSERT_EQ(a.num_kernels, b.num_kernels);
  for (int32_t i = 0; i < a.num_kernels; i++)
    EXPECT_EQ(text(a.kernel_names[i]), text(b.kernel_names[i]));
  EXPECT_EQ(text(a.schedule), text(b.schedule));
  EXPECT_EQ(text(a.batch_capsule), text(b.batch_capsule));
  EXPECT_EQ(text(a.optimizer_capsule), text(b.optimizer_capsule));
  ASSERT_EQ(a.num_fields, b.num_fields);
  for (int32_t i = 0; i < a.num_fields; i++) EXPECT_EQ(a.fields[i], b.fields[i]);
  EXPECT_EQ(text(a.clip_capsule), text(b.clip_capsule));
  ASSERT_EQ(a.num_states, b.num_states);
  for (int32_t i = 0; i < a.num_states; i++) EXPECT_EQ(a.states[i], b.states[i]);
  EXPECT_EQ(a.output_pitch, b.output_pitch);
  EXPECT_EQ(a.output_columns, b.output_columns);
}

// The hand-written MLP (every table feature: aliases, Linear and Gemm steps, every
// argument kind, a prologue, sparse node ids), with a state name and a clipping
// capsule added so that the optional fields travel too.
struct Fixture {
  test_program::MlpProgram mlp{2, 3, 4, 1};
  const char* state_names[1] = {"h_pre"};
  Program program;
  Fixture() {
    program = mlp.program;
    program.schedule = "one training step:\n  forward relu (relu) [reference.relu]\n";
    program.clip_capsule = "reference.clip";
    // The output as one padded row: its first element.
    program.output_pitch = program.buffers[program.output].numel;
    program.output_columns = 1;
    NodeDesc* nodes = const_cast<NodeDesc*>(program.nodes);
    nodes[1].state = state_names;
    nodes[1].num_state = 1;
  }
};

TEST(ModelTablesTest, AProgramReadsBackFieldForField) {
  Fixture f;
  ASSERT_TRUE(check_program(f.program).ok());
  std::string blob = encode_program_tables(f.program);
  Result<std::unique_ptr<ProgramTables>> decoded = decode_program_tables(blob.data(), blob.size());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  expect_same(f.program, decoded.value()->program());
  // The decoded tables own their storage: the blob may go.
  const Program& p = decoded.value()->program();
  blob.assign(blob.size(), '\0');
  EXPECT_STREQ(p.buffers[0].name, f.program.buffers[0].name);
  // Encoding the decoded Program again gives the same bytes.
  std::string again = encode_program_tables(p);
  EXPECT_EQ(again, encode_program_tables(f.program));
}

TEST(ModelTablesTest, StringsAreStoredOnce) {
  Fixture f;
  std::string blob = encode_program_tables(f.program);
  // "h_pre" is a buffer's name, a node's saved name and its state name: one copy.
  const std::string h_pre("\x05h_pre");  // its length, then its bytes
  size_t first = blob.find(h_pre);
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(blob.find(h_pre, first + 1), std::string::npos);
}

// A Bf16 buffer (a bf16 build's rounded product operand) reads back as Bf16; a dtype
// past the last DType is refused.
TEST(ModelTablesTest, ABf16BufferReadsBackAndAnUnknownDtypeIsRefused) {
  Fixture f;
  std::vector<BufferDesc> buffers(f.program.buffers, f.program.buffers + f.program.num_buffers);
  buffers[test_program::kH].dtype = DType::Bf16;  // linear2's x: a product's factor
  Program bf16 = f.program;
  bf16.buffers = buffers.data();
  ASSERT_TRUE(check_program(bf16).ok()) << check_program(bf16).message();
  std::string blob = encode_program_tables(bf16);
  Result<std::unique_ptr<ProgramTables>> decoded = decode_program_tables(blob.data(), blob.size());
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  expect_same(bf16, decoded.value()->program());
  EXPECT_EQ(decoded.value()->program().buffers[test_program::kH].dtype, DType::Bf16);

  buffers[test_program::kH].dtype = static_cast<DType>(3);
  blob = encode_program_tables(bf16);
  Result<std::unique_ptr<ProgramTables>> unknown = decode_program_tables(blob.data(), blob.size());
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("a buffer's dtype: 3 is not a DType"),
            std::string::npos)
      << unknown.status().message();
}

std::string refusal(const std::string& blob) {
  Result<std::unique_ptr<ProgramTables>> decoded = decode_program_tables(blob.data(), blob.size());
  return decoded.ok() ? "accepted" : decoded.status().message();
}

// Rewrites the header's payload length and checksum for `payload` (a blob damaged
// inside, past the checks that catch random damage).
std::string with_payload(const std::string& blob, const std::string& payload) {
  std::string out = blob.substr(0, kProgramTablesHeaderBytes) + payload;
  uint64_t size = payload.size(), h = 14695981039346656037ull;
  for (unsigned char c : payload) {
    h ^= c;
    h *= 1099511628211ull;
  }
  for (int i = 0; i < 8; i++) {
    out[12 + i] = static_cast<char>((size >> (8 * i)) & 0xff);
    out[20 + i] = static_cast<char>((h >> (8 * i)) & 0xff);
  }
  return out;
}

TEST(ModelTablesTest, ADamagedBlobIsRefusedWithTheReason) {
  Fixture f;
  const std::string blob = encode_program_tables(f.program);
  EXPECT_NE(refusal(blob.substr(0, 10)).find("fewer than the header's"), std::string::npos);
  std::string magic = blob;
  magic[0] = 'X';
  EXPECT_NE(refusal(magic).find("no VOUCHTBL header"), std::string::npos);
  std::string version = blob;
  version[8] = 99;
  EXPECT_NE(refusal(version).find("version 99, this runtime reads version 2"), std::string::npos);
  EXPECT_NE(refusal(blob.substr(0, blob.size() - 1)).find("the header says"), std::string::npos);
  // Any flipped byte of the tables: the checksum.
  for (size_t at = kProgramTablesHeaderBytes; at < blob.size(); at += 7) {
    std::string flipped = blob;
    flipped[at] ^= 0x20;
    EXPECT_NE(refusal(flipped).find("checksum mismatch"), std::string::npos) << at;
  }
  const std::string payload = blob.substr(kProgramTablesHeaderBytes);
  // Cut short, with a valid checksum: a read past the end.
  for (size_t keep : {size_t{0}, payload.size() / 3, payload.size() - 1}) {
    std::string reason = refusal(with_payload(blob, payload.substr(0, keep)));
    EXPECT_NE(reason.find("program tables: "), std::string::npos) << keep;
    EXPECT_NE(reason.find("(at payload byte "), std::string::npos) << keep << ": " << reason;
  }
  // Bytes after the tables.
  EXPECT_NE(refusal(with_payload(blob, payload + "x")).find("1 bytes after the tables"),
            std::string::npos);
  // A string count larger than the blob could hold: refused before anything is
  // allocated.
  EXPECT_NE(refusal(with_payload(blob, std::string("\xff\xff\xff\xff\x07", 5) + payload))
                .find("strings: a count of 2147483647, more than the blob's remaining"),
            std::string::npos);
}

// Tables that read back but break the Program's own rules are refused by
// check_program's reason.
TEST(ModelTablesTest, TablesCheckProgramRefusesAreRefused) {
  Fixture f;
  std::vector<BufferDesc> buffers(f.program.buffers, f.program.buffers + f.program.num_buffers);
  buffers[3].alias_of = 1000;
  Program broken = f.program;
  broken.buffers = buffers.data();
  std::string blob = encode_program_tables(broken);
  EXPECT_NE(refusal(blob).find("aliases buffer 1000, out of range"), std::string::npos)
      << refusal(blob);
}

}  // namespace
}  // namespace vouch::rt
