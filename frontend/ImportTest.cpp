//===- ImportTest.cpp - descriptions that lower, and what they lower to ---===//
//
// Each test imports a description (an example or a snippet) and checks the
// ops, attributes, shapes, parameter names and locations it lowers to.
//
//===----------------------------------------------------------------------===//
#include <string>
#include <vector>

#include "frontend/TestSupport.h"
#include "gtest/gtest.h"
#include "llvm/ADT/STLExtras.h"
#include "mlir/IR/BuiltinOps.h"

using namespace vouch;
using namespace vouch::frontend;
using namespace vouch::frontend::testing;

namespace {

class ImportTest : public ::testing::Test {
protected:
  /// Imports `source` and expects success.
  ModelOp lower(const std::string &source, const ImportOptions &options = {},
                llvm::StringRef fileName = "test.vouch") {
    result = importSource(context, source, fileName, options);
    EXPECT_TRUE(result.module) << result.dump();
    EXPECT_TRUE(result.diagnostics.empty()) << result.dump();
    return result.model();
  }

  template <typename OpT>
  std::vector<OpT> opsOf(ModelOp model) {
    auto ops = model.getBlock().getOps<OpT>();
    return std::vector<OpT>(ops.begin(), ops.end());
  }

  std::vector<std::string> paramNames(ModelOp model) {
    std::vector<std::string> names;
    for (ParamOp param : opsOf<ParamOp>(model))
      names.push_back(param.getName().str());
    return names;
  }

  /// "line:col" of an op's location.
  static std::string position(mlir::Operation *op) {
    auto loc = llvm::dyn_cast<mlir::FileLineColLoc>(op->getLoc());
    if (!loc)
      return "not a FileLineColLoc";
    return std::to_string(loc.getLine()) + ":" +
           std::to_string(loc.getColumn());
  }

  static std::vector<int64_t> shape(mlir::Value value) {
    llvm::ArrayRef<int64_t> dims =
        llvm::cast<mlir::RankedTensorType>(value.getType()).getShape();
    return std::vector<int64_t>(dims.begin(), dims.end());
  }

  /// A number of a train or data attribute, by its name in the clause.
  static double number(mlir::Attribute clause, llvm::StringRef key) {
    std::optional<double> value;
    if (auto train = llvm::dyn_cast_or_null<TrainAttr>(clause)) {
      if (key == "steps")
        value = train.getSteps();
      else if (key == "log_every")
        value = train.getLogEvery();
      else
        value = train.getHyperParameter(key);
    } else if (auto data = llvm::dyn_cast_or_null<DataAttr>(clause)) {
      if (key == "lo" && data.getLo())
        value = data.getLo()->convertToDouble();
      else if (key == "hi" && data.getHi())
        value = data.getHi()->convertToDouble();
      else if (key == "n" && data.getN())
        value = static_cast<double>(*data.getN());
    }
    if (!value)
      ADD_FAILURE() << "no number '" << key.str() << "'";
    return value.value_or(0);
  }

  /// The callee or a file of a train or data attribute.
  static std::string string(mlir::Attribute clause, llvm::StringRef key) {
    if (auto train = llvm::dyn_cast_or_null<TrainAttr>(clause))
      if (key == "optimizer")
        return stringifyOptimizerKind(train.getOptimizer()).str();
    if (auto data = llvm::dyn_cast_or_null<DataAttr>(clause)) {
      if (key == "kind")
        return stringifyDataKind(data.getKind()).str();
      mlir::StringAttr file =
          key == "path" ? data.getPath()
          : data.getFiles() ? data.getFiles().getAs<mlir::StringAttr>(key)
                            : mlir::StringAttr();
      if (file)
        return file.str();
    }
    return "<missing>";
  }

  mlir::MLIRContext context;
  ImportResult result;
};

/// A model around `body`, with x : f32[batch, 3] and batch 4.
std::string withInput(const std::string &body) {
  return "model m {\n  input x : f32[batch, 3]\n" + body +
         "\n  train sgd(lr = 0.1) batch 4\n  loss = reduce_sum(x)\n}\n";
}

//===----------------------------------------------------------------------===//
// The examples
//===----------------------------------------------------------------------===//

TEST_F(ImportTest, QuickstartExample) {
  ModelOp model = lower(readRunfile("examples/quickstart_mlp.vouch"), {},
                        "examples/quickstart_mlp.vouch");
  ASSERT_TRUE(model);
  EXPECT_EQ(model.getSymName(), "quickstart_mlp");
  EXPECT_EQ(model.getBatch(), 1u);

  TrainAttr train = model.getTrainAttr();
  ASSERT_TRUE(train);
  EXPECT_EQ(train.getOptimizer(), OptimizerKind::Adam);
  EXPECT_DOUBLE_EQ(number(train, "lr"), 0.03);
  EXPECT_DOUBLE_EQ(number(train, "beta1"), 0.9);
  EXPECT_DOUBLE_EQ(number(train, "beta2"), 0.999);
  EXPECT_DOUBLE_EQ(number(train, "eps"), 1e-8);
  EXPECT_DOUBLE_EQ(number(train, "weight_decay"), 0);
  // Exactly the optimizer's hyper-parameters are written out.
  EXPECT_FALSE(train.getMomentum());
  EXPECT_EQ(train.getSteps(), 200);
  EXPECT_EQ(train.getLogEvery(), 25);

  DataAttr data = model.getDataAttr();
  ASSERT_TRUE(data);
  EXPECT_EQ(data.getKind(), DataKind::RegressionGrid);
  EXPECT_DOUBLE_EQ(number(data, "lo"), -1.0);
  EXPECT_DOUBLE_EQ(number(data, "hi"), 1.0);
  EXPECT_EQ(data.getN(), 5);
  EXPECT_FALSE(data.getPath());

  // The params in program order: their index selects their seed.
  EXPECT_EQ(paramNames(model),
            (std::vector<std::string>{"w1", "b1", "w2", "b2"}));
  std::vector<ParamOp> params = opsOf<ParamOp>(model);
  EXPECT_EQ(params[0].getInit(), InitKind::XavierUniform);
  EXPECT_EQ(params[1].getInit(), InitKind::Zeros);
  EXPECT_EQ(shape(params[0]), (std::vector<int64_t>{8, 2}));
  EXPECT_EQ(shape(params[1]), (std::vector<int64_t>{8}));
  EXPECT_EQ(shape(params[2]), (std::vector<int64_t>{1, 8}));
  EXPECT_EQ(shape(params[3]), (std::vector<int64_t>{1}));

  InputOp x = opsOf<InputOp>(model).front();
  TargetOp y = opsOf<TargetOp>(model).front();
  EXPECT_EQ(x.getName(), "x");
  EXPECT_EQ(shape(x), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(shape(y), (std::vector<int64_t>{1, 1}));

  std::vector<LinearOp> linears = opsOf<LinearOp>(model);
  ASSERT_EQ(linears.size(), 2u);
  EXPECT_EQ(linears[0].getInput(), x.getResult());
  EXPECT_EQ(linears[0].getWeight(), params[0].getResult());
  EXPECT_EQ(linears[0].getBias(), params[1].getResult());
  auto relu = linears[1].getInput().getDefiningOp<ReluOp>();
  ASSERT_TRUE(relu);
  EXPECT_EQ(relu.getInput(), linears[0].getResult());

  OutputOp output = opsOf<OutputOp>(model).front();
  EXPECT_EQ(output.getName(), "pred");
  EXPECT_EQ(output.getValue(), linears[1].getResult());
  LossOp loss = opsOf<LossOp>(model).front();
  auto mse = loss.getValue().getDefiningOp<MseLossOp>();
  ASSERT_TRUE(mse);
  EXPECT_EQ(mse.getPrediction(), linears[1].getResult());
  EXPECT_EQ(mse.getTarget(), y.getResult());

  // Every op carries the location of the construct it comes from.
  EXPECT_EQ(position(x), "7:9");
  EXPECT_EQ(position(params[0]), "12:9");
  EXPECT_EQ(position(linears[0]), "17:12");
  EXPECT_EQ(position(relu), "17:7");
  EXPECT_EQ(position(output), "19:10");
  EXPECT_EQ(position(loss), "21:3");
  EXPECT_EQ(llvm::cast<mlir::FileLineColLoc>(x->getLoc()).getFilename(),
            "examples/quickstart_mlp.vouch");
}

TEST_F(ImportTest, ResidualExample) {
  ModelOp model = lower(readRunfile("examples/residual_mlp.vouch"));
  ASSERT_TRUE(model);
  EXPECT_EQ(model.getBatch(), 5u);
  EXPECT_DOUBLE_EQ(number(model.getTrainAttr(), "lr"), 0.01);
  EXPECT_EQ(paramNames(model),
            (std::vector<std::string>{
                "w_in", "b_in", "residual.0.w1", "residual.0.b1",
                "residual.1.w1", "residual.1.b1", "residual.2.w1",
                "residual.2.b1", "w_out", "b_out"}));
  for (ParamOp param : opsOf<ParamOp>(model)) {
    if (llvm::StringRef(param.getName()).starts_with("residual")) {
      EXPECT_EQ(shape(param).front(), 16);
    }
  }

  // h is carried through the repeat: each block reads the previous block's
  // sum, and the output layer reads the last one.
  std::vector<LinearOp> linears = opsOf<LinearOp>(model);
  std::vector<AddOp> adds = opsOf<AddOp>(model);
  ASSERT_EQ(linears.size(), 5u);
  ASSERT_EQ(adds.size(), 3u);
  EXPECT_EQ(adds[0].getLhs(), linears[0].getResult());
  EXPECT_EQ(linears[2].getInput(), adds[0].getResult());
  EXPECT_EQ(adds[1].getLhs(), adds[0].getResult());
  EXPECT_EQ(adds[2].getLhs(), adds[1].getResult());
  EXPECT_EQ(linears[4].getInput(), adds[2].getResult());
  EXPECT_EQ(shape(linears[4]), (std::vector<int64_t>{5, 1}));
}

TEST_F(ImportTest, TourOfTheLanguage) {
  // frontend/testdata/tour.vouch uses every statement, builtin and clause.
  ModelOp model = lower(readRunfile("frontend/testdata/tour.vouch"), {},
                        "frontend/testdata/tour.vouch");
  ASSERT_TRUE(model);
  EXPECT_EQ(model.getBatch(), 8u);
  EXPECT_EQ(string(model.getDataAttr(), "path"),
            "frontend/testdata/data/tour.csv");
  EXPECT_EQ(string(model.getTrainAttr(), "optimizer"), "adamw");
  EXPECT_DOUBLE_EQ(number(model.getTrainAttr(), "beta1"), 0.8);
  std::vector<std::string> names = paramNames(model);
  ASSERT_EQ(names.size(), 14u);
  EXPECT_EQ(names[0], "k");
  EXPECT_EQ(names[1], "bias");
  EXPECT_EQ(names[2], "stack.0.mlp.0.w");
  EXPECT_EQ(names[5], "stack.0.mlp.1.b");
  EXPECT_EQ(names[13], "stack.2.mlp.1.b");
  EXPECT_EQ(opsOf<MatmulOp>(model).size(), 1u);
  EXPECT_EQ(opsOf<PermuteOp>(model).size(), 1u);
  EXPECT_EQ(opsOf<LossOp>(model).size(), 1u);
  EXPECT_EQ(opsOf<OutputOp>(model).size(), 3u);
}

//===----------------------------------------------------------------------===//
// Declarations, configs, batch
//===----------------------------------------------------------------------===//

TEST_F(ImportTest, BatchFromOptionsReplacesTrainClause) {
  ImportOptions options;
  options.batch = 7;
  ModelOp model = lower(readRunfile("examples/quickstart_mlp.vouch"), options);
  ASSERT_TRUE(model);
  EXPECT_EQ(model.getBatch(), 7u);
  EXPECT_EQ(shape(opsOf<InputOp>(model).front()),
            (std::vector<int64_t>{7, 2}));
  EXPECT_EQ(shape(opsOf<LinearOp>(model).back()),
            (std::vector<int64_t>{7, 1}));
}

TEST_F(ImportTest, BatchDefaultsToOneWithoutTrainClause) {
  ModelOp model = lower("model m {\n  input x : f32[batch, 2]\n}\n");
  ASSERT_TRUE(model);
  EXPECT_EQ(model.getBatch(), 1u);
  EXPECT_FALSE(model.getTrainAttr());
  EXPECT_FALSE(model.getDataAttr());
  EXPECT_TRUE(opsOf<LossOp>(model).empty());
}

TEST_F(ImportTest, ConfigsInShapesAndArguments) {
  ModelOp model = lower(R"(
config H = 4
model m {
  config H2 = H * 2 + 1 - 1
  config LO = -0.5 / 2
  input x : f32[batch, H2]
  param w : f32[H, H2] = uniform(LO, -LO)
  param v : f32[H2 / 2] = zeros
  h = linear(x, w)
  output h
  train sgd(lr = LO * -4) batch H steps H * 10
  loss = reduce_mean(h)
}
)");
  ASSERT_TRUE(model);
  EXPECT_EQ(model.getBatch(), 4u);
  std::vector<ParamOp> params = opsOf<ParamOp>(model);
  EXPECT_EQ(shape(params[0]), (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(shape(params[1]), (std::vector<int64_t>{4}));
  EXPECT_EQ(params[0].getInitArgs(), (llvm::ArrayRef<double>{-0.25, 0.25}));
  EXPECT_DOUBLE_EQ(number(model.getTrainAttr(), "lr"), 1.0);
  EXPECT_EQ(number(model.getTrainAttr(), "steps"), 40);
  EXPECT_EQ(shape(opsOf<InputOp>(model).front()),
            (std::vector<int64_t>{4, 8}));
}

TEST_F(ImportTest, Initialisers) {
  ModelOp model = lower(R"(model m {
  param a : f32[2, 3] = zeros
  param b : f32[2, 3] = ones()
  param c : f64[2, 3] = uniform(-0.1, 0.1)
  param d : f32[2, 3] = uniform(hi = 2, lo = 1)
  param e : f32[2, 3] = normal(0, 0.02)
  param f : f32[2, 3] = normal(std = 1, mean = -1)
  param g : f32[2, 3] = xavier_uniform
  param h : f32[2, 3, 4] = kaiming_uniform()
  param s : f32[] = zeros
})");
  ASSERT_TRUE(model);
  std::vector<ParamOp> params = opsOf<ParamOp>(model);
  ASSERT_EQ(params.size(), 9u);
  std::vector<std::string> inits;
  for (ParamOp p : params)
    inits.push_back(stringifyInitKind(p.getInit()).str());
  EXPECT_EQ(inits, (std::vector<std::string>{
                       "zeros", "ones", "uniform", "uniform", "normal",
                       "normal", "xavier_uniform", "kaiming_uniform", "zeros"}));
  EXPECT_EQ(params[2].getInitArgs(), (llvm::ArrayRef<double>{-0.1, 0.1}));
  EXPECT_EQ(params[3].getInitArgs(), (llvm::ArrayRef<double>{1, 2}));
  EXPECT_EQ(params[4].getInitArgs(), (llvm::ArrayRef<double>{0, 0.02}));
  EXPECT_EQ(params[5].getInitArgs(), (llvm::ArrayRef<double>{-1, 1}));
  EXPECT_TRUE(params[6].getInitArgs().empty());
  EXPECT_TRUE(llvm::cast<mlir::RankedTensorType>(params[2].getType())
                  .getElementType()
                  .isF64());
  EXPECT_EQ(shape(params[8]), std::vector<int64_t>{});
}

TEST_F(ImportTest, ElementTypesOfInputs) {
  ModelOp model = lower(R"(model m {
  input tokens : i32[batch, 8]
  input mask : i1[8, 8]
  input x : f64[batch]
  target t : f32[]
})");
  ASSERT_TRUE(model);
  std::vector<InputOp> inputs = opsOf<InputOp>(model);
  auto element = [](mlir::Value v) {
    return llvm::cast<mlir::RankedTensorType>(v.getType()).getElementType();
  };
  EXPECT_TRUE(element(inputs[0]).isInteger(32));
  EXPECT_TRUE(element(inputs[1]).isInteger(1));
  EXPECT_TRUE(element(inputs[2]).isF64());
  EXPECT_EQ(shape(opsOf<TargetOp>(model).front()), std::vector<int64_t>{});
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

TEST_F(ImportTest, InfixBroadcastingInsertsBroadcasts) {
  ModelOp model = lower(withInput(R"(
  param b : f32[3] = zeros
  param col : f32[batch, 1] = zeros
  param row : f32[1, 5] = zeros
  param s : f32[] = zeros
  y1 = x + b
  y2 = col * row
  y3 = s - x
  y4 = x + x
  output y1, y2, y3, y4)"));
  ASSERT_TRUE(model);
  std::vector<BroadcastOp> broadcasts = opsOf<BroadcastOp>(model);
  ASSERT_EQ(broadcasts.size(), 4u);
  // b : [3] → [4, 3] along the trailing axis.
  EXPECT_EQ(broadcasts[0].getDims(), (llvm::ArrayRef<int64_t>{1}));
  EXPECT_EQ(shape(broadcasts[0]), (std::vector<int64_t>{4, 3}));
  // [4, 1] * [1, 5]: both sides stretch to [4, 5].
  EXPECT_EQ(broadcasts[1].getDims(), (llvm::ArrayRef<int64_t>{0, 1}));
  EXPECT_EQ(shape(broadcasts[1]), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(shape(broadcasts[2]), (std::vector<int64_t>{4, 5}));
  // A rank-0 tensor broadcasts with no dims.
  EXPECT_TRUE(broadcasts[3].getDims().empty());
  std::vector<AddOp> adds = opsOf<AddOp>(model);
  ASSERT_EQ(adds.size(), 2u);
  EXPECT_EQ(adds[0].getRhs(), broadcasts[0].getResult());
  EXPECT_EQ(adds[1].getLhs(), adds[1].getRhs()); // x + x: nothing to broadcast
  std::vector<SubOp> subs = opsOf<SubOp>(model);
  ASSERT_EQ(subs.size(), 1u);
  EXPECT_EQ(subs[0].getLhs(), broadcasts[3].getResult());
  EXPECT_EQ(shape(opsOf<MulOp>(model).front()), (std::vector<int64_t>{4, 5}));
}

TEST_F(ImportTest, NumbersMeetTensorsAsScaleAndFill) {
  ModelOp model = lower(withInput(R"(
  a = x * 2
  b = 0.5 * x
  c = x / 4
  d = -x
  e = x + 1
  f = 1 - x
  g = add(x, 3)
  output a, b, c, d, e, f, g)"));
  ASSERT_TRUE(model);
  std::vector<double> factors;
  for (ScaleOp scale : opsOf<ScaleOp>(model))
    factors.push_back(scale.getFactor().convertToDouble());
  EXPECT_EQ(factors, (std::vector<double>{2, 0.5, 0.25, -1}));
  std::vector<FillOp> fills = opsOf<FillOp>(model);
  ASSERT_EQ(fills.size(), 3u);
  EXPECT_EQ(fills[0].getValue().convertToDouble(), 1);
  EXPECT_EQ(fills[0].getType(), opsOf<InputOp>(model).front().getType());
  // x + 1 has the fill on the right, 1 - x on the left.
  std::vector<AddOp> adds = opsOf<AddOp>(model);
  EXPECT_EQ(adds[0].getRhs(), fills[0].getResult());
  EXPECT_EQ(opsOf<SubOp>(model).front().getLhs(), fills[1].getResult());
  EXPECT_EQ(fills[2].getValue().convertToDouble(), 3);
}

TEST_F(ImportTest, PrecedenceAndParentheses) {
  ModelOp model = lower(withInput(R"(
  a = x + x * x
  b = (x + x) * x
  c = x - x - x
  output a, b, c)"));
  ASSERT_TRUE(model);
  std::vector<AddOp> adds = opsOf<AddOp>(model);
  std::vector<MulOp> muls = opsOf<MulOp>(model);
  ASSERT_EQ(adds.size(), 2u);
  ASSERT_EQ(muls.size(), 2u);
  // a: the product is computed first and added.
  EXPECT_EQ(adds[0].getRhs(), muls[0].getResult());
  // b: the sum is computed first and multiplied.
  EXPECT_EQ(muls[1].getLhs(), adds[1].getResult());
  // c: left-associative, (x - x) - x.
  std::vector<SubOp> subs = opsOf<SubOp>(model);
  ASSERT_EQ(subs.size(), 2u);
  EXPECT_EQ(subs[1].getLhs(), subs[0].getResult());
}

TEST_F(ImportTest, ConstantsFold) {
  ModelOp model = lower(withInput(R"(
  a = x * (2 + 3 * 4 - -1)
  b = scale(x, 1 / 8)
  output a, b)"));
  ASSERT_TRUE(model);
  std::vector<ScaleOp> scales = opsOf<ScaleOp>(model);
  ASSERT_EQ(scales.size(), 2u);
  EXPECT_EQ(scales[0].getFactor().convertToDouble(), 15);
  EXPECT_EQ(scales[1].getFactor().convertToDouble(), 0.125);
}

//===----------------------------------------------------------------------===//
// Builtins
//===----------------------------------------------------------------------===//

TEST_F(ImportTest, MatmulFlagsAndBatches) {
  ModelOp model = lower(R"(model m {
  input a : f32[4, 3]
  input b : f32[5, 3]
  input c : f32[3, 4]
  input q : f32[2, 4, 3]
  input k : f32[2, 6, 3]
  ab = matmul(a, b, transpose_rhs = true)
  ca = matmul(c, a, true, true)
  ac = matmul(a, c)
  qk = matmul(q, k, transpose_rhs = true)
  output ab, ca, ac, qk
})");
  ASSERT_TRUE(model);
  std::vector<MatmulOp> matmuls = opsOf<MatmulOp>(model);
  ASSERT_EQ(matmuls.size(), 4u);
  EXPECT_FALSE(matmuls[0].getTransposeLhs());
  EXPECT_TRUE(matmuls[0].getTransposeRhs());
  EXPECT_EQ(shape(matmuls[0]), (std::vector<int64_t>{4, 5}));
  EXPECT_TRUE(matmuls[1].getTransposeLhs());
  EXPECT_EQ(shape(matmuls[1]), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(shape(matmuls[2]), (std::vector<int64_t>{4, 4}));
  EXPECT_EQ(shape(matmuls[3]), (std::vector<int64_t>{2, 4, 6}));
}

TEST_F(ImportTest, ShapeBuiltins) {
  ModelOp model = lower(R"(model m {
  input x : f32[2, 3, 4]
  input v : f32[4]
  r = reshape(x, [6, -1])
  same = reshape(x, [2, 3, 4])
  p = permute(x, [2, 0, -2])
  bv = broadcast(v, [5, 3, 4])
  s = reduce_sum(x, axes = [-1, 0])
  m1 = reduce_mean(x)
  m2 = reduce_mean(x, 1)
  output r, same, p, bv, s, m1, m2
})");
  ASSERT_TRUE(model);
  std::vector<ReshapeOp> reshapes = opsOf<ReshapeOp>(model);
  ASSERT_EQ(reshapes.size(), 1u); // reshaping to the same shape is no op
  EXPECT_EQ(shape(reshapes[0]), (std::vector<int64_t>{6, 4}));
  PermuteOp permute = opsOf<PermuteOp>(model).front();
  EXPECT_EQ(permute.getPerm(), (llvm::ArrayRef<int64_t>{2, 0, 1}));
  EXPECT_EQ(shape(permute), (std::vector<int64_t>{4, 2, 3}));
  BroadcastOp broadcast = opsOf<BroadcastOp>(model).front();
  EXPECT_EQ(broadcast.getDims(), (llvm::ArrayRef<int64_t>{2}));
  EXPECT_EQ(shape(broadcast), (std::vector<int64_t>{5, 3, 4}));
  ReduceSumOp sum = opsOf<ReduceSumOp>(model).front();
  EXPECT_EQ(sum.getAxes(), (llvm::ArrayRef<int64_t>{0, 2}));
  EXPECT_EQ(shape(sum), (std::vector<int64_t>{3}));
  std::vector<ReduceMeanOp> means = opsOf<ReduceMeanOp>(model);
  EXPECT_EQ(means[0].getAxes(), (llvm::ArrayRef<int64_t>{0, 1, 2}));
  EXPECT_EQ(shape(means[0]), std::vector<int64_t>{});
  EXPECT_EQ(means[1].getAxes(), (llvm::ArrayRef<int64_t>{1}));
}

TEST_F(ImportTest, KeywordArgumentsOfBuiltins) {
  ModelOp model = lower(R"(model m {
  input x : f32[2, 3]
  param w : f32[4, 3] = zeros
  param b : f32[4] = zeros
  y = linear(weight = w, input = x, bias = b)
  z = linear(x, w)
  output y, z
})");
  ASSERT_TRUE(model);
  std::vector<LinearOp> linears = opsOf<LinearOp>(model);
  EXPECT_TRUE(linears[0].getBias());
  EXPECT_FALSE(linears[1].getBias());
}

//===----------------------------------------------------------------------===//
// Blocks and repeat
//===----------------------------------------------------------------------===//

TEST_F(ImportTest, NestedBlocksNameTheirParams) {
  ModelOp model = lower(R"(
block outer(x : f32[2]) {
  param w : f32[2] = zeros
  return inner(inner(x * w))
}
model m {
  input x : f32[2]
  a = outer(x)
  b = inner(outer(a))
  output b
}
// Declared after its first use: blocks are known everywhere.
block inner(x : f32[2]) {
  param w : f32[2] = ones
  return x * w
}
)");
  ASSERT_TRUE(model);
  EXPECT_EQ(paramNames(model),
            (std::vector<std::string>{
                "outer.0.w", "outer.0.inner.0.w", "outer.0.inner.1.w",
                "outer.1.w", "outer.1.inner.0.w", "outer.1.inner.1.w",
                "inner.0.w"}));
  // Ops of a block carry the block's locations.
  std::vector<ParamOp> params = opsOf<ParamOp>(model);
  EXPECT_EQ(position(params[0]), "3:9");
  EXPECT_EQ(position(params[1]), "14:9");
}

TEST_F(ImportTest, BlockArgumentsByKeywordAndSeveralArguments) {
  ModelOp model = lower(R"(
config D = 3
block affine(x : f32[batch, D], shift : f32[D]) {
  return x + shift
}
model m {
  input x : f32[batch, D]
  param s : f32[D] = zeros
  y = affine(shift = s, x = x)
  output y
})");
  ASSERT_TRUE(model);
  EXPECT_EQ(opsOf<AddOp>(model).size(), 1u);
}

TEST_F(ImportTest, RepeatCarriesValuesAndNests) {
  ModelOp model = lower(R"(
block step(h : f32[2]) {
  param w : f32[2] = ones
  return h * w
}
model m {
  input x : f32[2]
  h = x
  g = x
  repeat 2 {
    t = relu(h)
    repeat 2 { h = step(t) ; t = h }
    g = g + h
  }
  output h, g
})");
  ASSERT_TRUE(model);
  EXPECT_EQ(paramNames(model),
            (std::vector<std::string>{"step.0.w", "step.1.w", "step.2.w",
                                      "step.3.w"}));
  // The final h is the fourth block's product; g sums the two h's.
  std::vector<MulOp> muls = opsOf<MulOp>(model);
  ASSERT_EQ(muls.size(), 4u);
  std::vector<OutputOp> outputs = opsOf<OutputOp>(model);
  EXPECT_EQ(outputs[0].getValue(), muls[3].getResult());
  std::vector<AddOp> adds = opsOf<AddOp>(model);
  ASSERT_EQ(adds.size(), 2u);
  EXPECT_EQ(adds[0].getRhs(), muls[1].getResult());
  EXPECT_EQ(adds[1].getLhs(), adds[0].getResult());
  EXPECT_EQ(adds[1].getRhs(), muls[3].getResult());
  EXPECT_EQ(outputs[1].getValue(), adds[1].getResult());
  // The inner loop's t is carried too: the second step reads the first's h.
  std::vector<ReluOp> relus = opsOf<ReluOp>(model);
  EXPECT_EQ(relus[1].getInput(), muls[1].getResult());
}

TEST_F(ImportTest, RepeatInsideBlock) {
  ModelOp model = lower(R"(
config H = 4
block layer(x : f32[H]) {
  param w : f32[H, H] = xavier_uniform
  return relu(linear(x, w))
}
block tower(x : f32[H]) {
  repeat 3 { x = layer(x) }
  return x
}
model m {
  input x : f32[H]
  y = tower(tower(x))
  output y
})");
  ASSERT_TRUE(model);
  std::vector<std::string> names = paramNames(model);
  ASSERT_EQ(names.size(), 6u);
  EXPECT_EQ(names[0], "tower.0.layer.0.w");
  EXPECT_EQ(names[2], "tower.0.layer.2.w");
  EXPECT_EQ(names[5], "tower.1.layer.2.w");
}

//===----------------------------------------------------------------------===//
// Clauses
//===----------------------------------------------------------------------===//

TEST_F(ImportTest, TrainDefaultsPerOptimizer) {
  ModelOp sgd = lower(withInput("") );
  ASSERT_TRUE(sgd);
  TrainAttr train = sgd.getTrainAttr();
  EXPECT_EQ(string(train, "optimizer"), "sgd");
  EXPECT_DOUBLE_EQ(number(train, "lr"), 0.1);
  EXPECT_DOUBLE_EQ(number(train, "momentum"), 0);
  EXPECT_DOUBLE_EQ(number(train, "weight_decay"), 0);
  EXPECT_FALSE(train.getBeta1()) << "sgd takes no beta1";
  EXPECT_EQ(number(train, "steps"), 100);
  EXPECT_EQ(number(train, "log_every"), 10);
  EXPECT_EQ(sgd.getBatch(), 4u);

  ModelOp adamw = lower(R"(model m {
  input x : f32[2]
  loss = reduce_sum(x)
  train adamw(lr = 1e-3, beta2 = 0.95) log_every = 5 steps 7
})");
  ASSERT_TRUE(adamw);
  train = adamw.getTrainAttr();
  EXPECT_EQ(string(train, "optimizer"), "adamw");
  EXPECT_DOUBLE_EQ(number(train, "weight_decay"), 0.01);
  EXPECT_DOUBLE_EQ(number(train, "beta2"), 0.95);
  EXPECT_DOUBLE_EQ(number(train, "eps"), 1e-8);
  EXPECT_FALSE(train.getMomentum());
  EXPECT_EQ(number(train, "steps"), 7);
  EXPECT_EQ(number(train, "log_every"), 5);

  ModelOp momentum = lower(R"(model m {
  input x : f32[2]
  loss = reduce_sum(x)
  train sgd(0.5, momentum = 0.9, weight_decay = 1e-4)
})");
  ASSERT_TRUE(momentum);
  train = momentum.getTrainAttr();
  EXPECT_DOUBLE_EQ(number(train, "lr"), 0.5);
  EXPECT_DOUBLE_EQ(number(train, "momentum"), 0.9);
  EXPECT_DOUBLE_EQ(number(train, "weight_decay"), 1e-4);
}

TEST_F(ImportTest, DataPathsAreRelativeToTheDescription) {
  ModelOp csv = lower("model m {\n  data csv(\"data/train.csv\")\n}\n", {},
                      "models/demo/m.vouch");
  ASSERT_TRUE(csv);
  EXPECT_EQ(string(csv.getDataAttr(), "kind"), "csv");
  EXPECT_EQ(string(csv.getDataAttr(), "path"), "models/demo/data/train.csv");

  ModelOp npy = lower("model m {\n  input x : f32[1, 2]\n  target labels : "
                      "i32[1]\n  data npy(x = \"x.npy\", labels = "
                      "\"/abs/y.npy\")\n}\n",
                      {}, "m.vouch");
  ASSERT_TRUE(npy);
  EXPECT_EQ(string(npy.getDataAttr(), "kind"), "npy");
  EXPECT_EQ(string(npy.getDataAttr(), "x"), "x.npy");
  EXPECT_EQ(string(npy.getDataAttr(), "labels"), "/abs/y.npy");
  // Positional: the inputs, then the targets, in declaration order.
  ModelOp positional =
      lower("model m {\n  target y : f32[1, 1]\n  input a : f32[1, 2]\n  "
            "data npy(\"a.npy\", \"y.npy\")\n}\n");
  ASSERT_TRUE(positional);
  EXPECT_EQ(string(positional.getDataAttr(), "a"), "a.npy");
  EXPECT_EQ(string(positional.getDataAttr(), "y"), "y.npy");

  ModelOp grid = lower("model m {\n  data regression_grid(n = 3)\n}\n");
  ASSERT_TRUE(grid);
  EXPECT_DOUBLE_EQ(number(grid.getDataAttr(), "lo"), -1);
  EXPECT_DOUBLE_EQ(number(grid.getDataAttr(), "hi"), 1);
  EXPECT_EQ(number(grid.getDataAttr(), "n"), 3);
}

//===----------------------------------------------------------------------===//
// Syntax details
//===----------------------------------------------------------------------===//

TEST_F(ImportTest, CommentsSemicolonsAndLineBreaks) {
  ModelOp model = lower(R"(// leading comment
model m { // trailing comment
  input x : f32[2] ; param w : f32[3, 2] = xavier_uniform
  // a call may span lines inside its parentheses
  y = linear(
    x,
    w,   // trailing commas are fine
  )
  z = y *
      2
  output y, z;
}
)");
  ASSERT_TRUE(model);
  EXPECT_EQ(opsOf<LinearOp>(model).size(), 1u);
  EXPECT_EQ(opsOf<ScaleOp>(model).size(), 1u);
  EXPECT_EQ(opsOf<OutputOp>(model).size(), 2u);
}

TEST_F(ImportTest, LossCanBeAnOutput) {
  ModelOp model = lower(R"(model m {
  input x : f32[batch, 2]
  target y : f32[batch, 2]
  loss = mse_loss(x, y)
  output loss
})");
  ASSERT_TRUE(model);
  EXPECT_EQ(opsOf<OutputOp>(model).front().getValue(),
            opsOf<LossOp>(model).front().getValue());
}

} // namespace
