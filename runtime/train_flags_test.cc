// Tests for train_flags.h: defaults from the model, both flag spellings, every error,
// and a --help that names every flag with its default.
#include "runtime/train_flags.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "runtime/train_main.h"

namespace vouch::rt {
namespace {

ModelDescription model() {
  ModelDescription m;
  m.name = "tiny";
  m.steps = 200;
  m.log_every = 25;
  return m;
}

Result<TrainOptions> parse(std::vector<std::string> args) {
  args.insert(args.begin(), "prog");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return parse_train_flags(int(argv.size()), argv.data(), model());
}

std::string error_of(std::vector<std::string> args) {
  Result<TrainOptions> r = parse(std::move(args));
  return r.ok() ? "<accepted>" : r.status().message();
}

TEST(TrainFlagsTest, Defaults) {
  Result<TrainOptions> r = parse({});
  ASSERT_TRUE(r.ok());
  const TrainOptions& o = r.value();
  EXPECT_EQ(o.device, Device::Auto);
  EXPECT_EQ(o.steps, 200);
  EXPECT_EQ(o.seed, 0u);
  EXPECT_FALSE(o.f32);
  EXPECT_FALSE(o.dtype_given);
  EXPECT_FALSE(run_in_f32(o, Device::Cpu));
  EXPECT_TRUE(run_in_f32(o, Device::Cuda));  // cuda trains in f32 unless told otherwise
  EXPECT_EQ(o.log_every, 25);
  EXPECT_TRUE(o.data.empty() && o.save_params.empty() && o.load_params.empty());
  EXPECT_FALSE(o.init_only || o.show_tape || o.help);
}

TEST(TrainFlagsTest, BothSpellings) {
  Result<TrainOptions> r =
      parse({"--device", "cuda", "--steps=2", "--seed", "18446744073709551615", "--dtype=f32",
             "--log-every", "3", "--data=a.csv", "--save-params", "out.st",
             "--load-params=in.st", "--init-only", "--show-tape", "--help"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  const TrainOptions& o = r.value();
  EXPECT_EQ(o.device, Device::Cuda);
  EXPECT_EQ(o.steps, 2);
  EXPECT_EQ(o.seed, 18446744073709551615ull);
  EXPECT_TRUE(o.f32);
  EXPECT_TRUE(o.dtype_given);
  EXPECT_TRUE(run_in_f32(o, Device::Cpu));
  EXPECT_EQ(o.log_every, 3);
  EXPECT_EQ(o.data, "a.csv");
  EXPECT_EQ(o.save_params, "out.st");
  EXPECT_EQ(o.load_params, "in.st");
  EXPECT_TRUE(o.init_only && o.show_tape && o.help);
}

TEST(TrainFlagsTest, ExplicitDtypeWinsOnEveryDevice) {
  Result<TrainOptions> f64 = parse({"--dtype", "f64"});
  ASSERT_TRUE(f64.ok());
  EXPECT_FALSE(run_in_f32(f64.value(), Device::Cuda));
  EXPECT_FALSE(run_in_f32(f64.value(), Device::Cpu));
  Result<TrainOptions> f32 = parse({"--dtype=f32"});
  ASSERT_TRUE(f32.ok());
  EXPECT_TRUE(run_in_f32(f32.value(), Device::Cpu));
  EXPECT_TRUE(run_in_f32(f32.value(), Device::Cuda));
}

TEST(TrainFlagsTest, Errors) {
  EXPECT_EQ(error_of({"--bogus"}), "unknown flag '--bogus'");
  EXPECT_EQ(error_of({"--bogus=1"}), "unknown flag '--bogus'");
  EXPECT_EQ(error_of({"steps"}), "unexpected argument 'steps'");
  EXPECT_EQ(error_of({"--steps"}), "--steps needs a value");
  EXPECT_EQ(error_of({"--steps", "--seed", "1"}), "--steps needs a value");
  EXPECT_EQ(error_of({"--data="}), "--data needs a value");
  EXPECT_EQ(error_of({"--steps", "abc"}), "--steps expects a non-negative integer, got 'abc'");
  EXPECT_EQ(error_of({"--steps=-1"}), "--steps expects a non-negative integer, got '-1'");
  EXPECT_EQ(error_of({"--steps=2x"}), "--steps expects a non-negative integer, got '2x'");
  EXPECT_EQ(error_of({"--seed", "-1"}), "--seed expects an unsigned 64-bit integer, got '-1'");
  EXPECT_EQ(error_of({"--seed=18446744073709551616"}),
            "--seed expects an unsigned 64-bit integer, got '18446744073709551616'");
  EXPECT_EQ(error_of({"--log-every=0"}), "--log-every expects a positive integer, got '0'");
  EXPECT_EQ(error_of({"--dtype", "bf16"}), "--dtype expects f64 or f32, got 'bf16'");
  EXPECT_EQ(error_of({"--init-only=yes"}), "--init-only takes no value");
  EXPECT_NE(error_of({"--device", "gpu"}).find("--device: unknown device `gpu` (known: auto"),
            std::string::npos);
}

Result<TrainOptions> parse_for(const ModelDescription& m, std::vector<std::string> args) {
  args.insert(args.begin(), "prog");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return parse_train_flags(int(argv.size()), argv.data(), m);
}

// The train clause's shuffle and eval_every and the eval clause give the defaults;
// --no-shuffle, --eval, --no-eval and --eval-every override them.
TEST(TrainFlagsTest, ShuffleAndEvalDefaultsComeFromTheModel) {
  ModelDescription m = model();
  m.shuffle = true;
  m.eval_every = 50;
  m.eval_fraction = 0.2;
  Result<TrainOptions> r = parse_for(m, {});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.value().shuffle);
  EXPECT_EQ(r.value().eval_fraction, 0.2);
  EXPECT_EQ(r.value().eval_every, 50);
  EXPECT_TRUE(r.value().eval.empty());
  r = parse_for(m, {"--no-shuffle", "--no-eval"});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.value().shuffle);
  EXPECT_EQ(r.value().eval_fraction, 0);
  EXPECT_EQ(r.value().eval_every, 0);
  r = parse_for(m, {"--eval", "e.npy,f.npy", "--eval-every", "7"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().eval, "e.npy,f.npy");
  EXPECT_EQ(r.value().eval_fraction, 0);
  EXPECT_EQ(r.value().eval_every, 7);
  m.eval_fraction = 0;
  m.eval_data.path = "held.npy,labels.npy";
  r = parse_for(m, {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().eval, "held.npy,labels.npy");
  EXPECT_TRUE(r.value().eval_from_clause);  // its errors name the clause, not --eval
  r = parse_for(m, {"--eval", "other.npy,labels.npy"});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.value().eval_from_clause);
  r = parse_for(m, {});
  EXPECT_NE(train_usage("./m", m).find("(default: held.npy,labels.npy)"), std::string::npos);
  EXPECT_NE(train_usage("./m", m).find("shuffled every epoch, seeded by --seed"),
            std::string::npos);

  auto error = [&](std::vector<std::string> args) {
    Result<TrainOptions> e = parse_for(m, std::move(args));
    return e.ok() ? std::string("<accepted>") : e.status().message();
  };
  EXPECT_EQ(error({"--eval", "x.npy", "--no-eval"}),
            "--eval and --no-eval contradict each other");
  EXPECT_EQ(error({"--no-eval", "--eval-every", "3"}),
            "--eval-every and --no-eval contradict each other");
  EXPECT_EQ(error_of({"--eval-every", "3"}),
            "--eval-every needs held-out data (--eval, or the model's eval clause)");
  EXPECT_EQ(error_of({"--progress=1"}), "--progress takes no value");
  Result<TrainOptions> p = parse({"--progress"});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.value().progress, TrainOptions::Progress::On);
  p = parse({"--no-progress"});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.value().progress, TrainOptions::Progress::Off);
  EXPECT_EQ(parse({}).value().progress, TrainOptions::Progress::Auto);
}

TEST(TrainFlagsTest, HelpNamesEveryFlagAndDefault) {
  std::string help = train_usage("./tiny", model());
  for (const char* flag : {"--device", "--steps", "--seed", "--dtype", "--log-every", "--data",
                           "--save-params", "--load-params", "--init-only", "--show-tape",
                           "--help", "--no-shuffle", "--no-eval", "--eval-every",
                           "--progress", "--no-progress", "--allow-nonfinite", "--profile",
                           "--profile-launches PATH"})
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
  EXPECT_NE(help.find("usage: ./tiny [flags]"), std::string::npos);
  EXPECT_NE(help.find("(default: 200)"), std::string::npos);
  EXPECT_NE(help.find("(default: 25)"), std::string::npos);
  EXPECT_NE(help.find("(default: f32 on cuda, f64 on\n                      cpu)"),
            std::string::npos);
  EXPECT_NE(help.find("(default: 0)"), std::string::npos);
  EXPECT_NE(help.find("regression_grid(-1, 1, 5)"), std::string::npos);
  EXPECT_NE(help.find("Exit status:\n  0  success\n"), std::string::npos) << help;
  EXPECT_NE(help.find("  6  the model does not fit in the memory available (host or device)\n"),
            std::string::npos)
      << help;
}

// --profile-launches PATH profiles (as --profile) and names where the launches go.
TEST(TrainFlagsTest, ProfileLaunches) {
  EXPECT_FALSE(parse({}).value().run.profile);
  EXPECT_TRUE(parse({"--profile"}).value().run.profile);
  EXPECT_EQ(parse({"--profile"}).value().profile_launches, "");
  Result<TrainOptions> r = parse({"--profile-launches", "step2.tsv"});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r.value().run.profile);
  EXPECT_EQ(r.value().profile_launches, "step2.tsv");
  EXPECT_EQ(error_of({"--profile-launches"}), "--profile-launches needs a value");
  EXPECT_EQ(error_of({"--profile-launches="}), "--profile-launches needs a value");
  EXPECT_EQ(error_of({"--profile=x"}), "--profile takes no value");
}

TEST(TrainFlagsTest, AllowNonfinite) {
  EXPECT_FALSE(parse({}).value().allow_nonfinite);
  EXPECT_TRUE(parse({"--allow-nonfinite"}).value().allow_nonfinite);
  EXPECT_EQ(error_of({"--allow-nonfinite=1"}), "--allow-nonfinite takes no value");
}

// One table of exit statuses: the one --help prints is the executables' table of
// docs/language.md ("Exit statuses"), row for row, and every status is distinct.
TEST(TrainFlagsTest, TheDocsListTheExitStatusesHelpPrints) {
  std::ifstream in("docs/language.md");
  ASSERT_TRUE(in) << "docs/language.md is a data dependency of this test";
  std::string docs((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t section = docs.find("\n## Exit statuses\n");
  ASSERT_NE(section, std::string::npos);
  const size_t table = docs.find("A generated executable", section);
  ASSERT_NE(table, std::string::npos);
  std::string rows;
  for (const ExitStatusInfo& e : kTrainExitStatuses)
    rows += "| " + std::to_string(e.code) + " | " + e.meaning + " |\n";
  EXPECT_NE(docs.find("|---|---|\n" + rows, table), std::string::npos)
      << "docs/language.md should list, after \"A generated executable\":\n" << rows;
  for (size_t i = 0; i < std::size(kTrainExitStatuses); i++)
    EXPECT_EQ(kTrainExitStatuses[i].code, int(i));
}

}  // namespace
}  // namespace vouch::rt
