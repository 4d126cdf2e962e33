//===- VouchAttrs.td - a model's clauses as typed attributes -*- tablegen -*-===//
//
// What a description says besides its computation: how each parameter
// starts (its initialiser), how the model trains (the train clause) and on
// what data (the data clause). Each kind of callee is one ODS enum whose
// cases carry their parameters as the language spells them, with defaults:
// the one table of initialisers, optimizers and data sources. The frontend
// binds calls against it (ir/ClauseTable.h, generated with the op table),
// the IR stores typed attributes built from it, codegen reads them back
// (codegen/ModelDescription.cpp), and a test checks that the runtime's enums
// (runtime/init.h, optim.h, model_api.h) have the same names and values.
//
//===----------------------------------------------------------------------===//
#ifndef VOUCH_ATTRS_TD
#define VOUCH_ATTRS_TD

include "VouchBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// The callees of clauses
//===----------------------------------------------------------------------===//

// One callee: `symbol` is the C++ enumerator (the runtime's as well),
// `name` what descriptions and the IR write, `params` its parameters in the
// language ("lo, hi"; "lr, beta1 = 0.9"), read by the frontend's binder.
class Vouch_ClauseCase<string symbol, int value, string name, string params_>
    : I32EnumAttrCase<symbol, value, name> {
  string params = params_;
}

// `clause` is the vouch::ClauseKind the enum's cases are callees of.
class Vouch_ClauseEnum<string name, string summary, string clause_,
                       list<Vouch_ClauseCase> cases>
    : I32EnumAttr<name, summary, cases> {
  let cppNamespace = "::vouch";
  let genSpecializedAttr = 0;
  string clause = clause_;
}

def Vouch_InitKind : Vouch_ClauseEnum<"InitKind",
    "how a parameter's elements start (runtime/init.h)", "Initializer", [
  Vouch_ClauseCase<"Zeros", 0, "zeros", "">,
  Vouch_ClauseCase<"Ones", 1, "ones", "">,
  Vouch_ClauseCase<"Uniform", 2, "uniform", "lo, hi">,
  Vouch_ClauseCase<"Normal", 3, "normal", "mean, std">,
  Vouch_ClauseCase<"XavierUniform", 4, "xavier_uniform", "">,
  Vouch_ClauseCase<"KaimingUniform", 5, "kaiming_uniform", "">,
]>;

def Vouch_OptimizerKind : Vouch_ClauseEnum<"OptimizerKind",
    "the optimizer of the train clause (runtime/optim.h)", "Optimizer", [
  Vouch_ClauseCase<"Sgd", 0, "sgd", "lr, momentum = 0, weight_decay = 0">,
  Vouch_ClauseCase<"Adam", 1, "adam",
      "lr, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0">,
  Vouch_ClauseCase<"AdamW", 2, "adamw",
      "lr, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.01, "
      "decay_min_rank = 0">,
  Vouch_ClauseCase<"RmsProp", 3, "rmsprop",
      "lr, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0">,
  Vouch_ClauseCase<"Adagrad", 4, "adagrad",
      "lr, lr_decay = 0, weight_decay = 0, eps = 1e-10">,
]>;

// `total` defaults to the clause's `steps` (the frontend fills it in).
def Vouch_ScheduleKind : Vouch_ClauseEnum<"ScheduleKind",
    "the learning-rate schedule of the train clause (runtime/optim.h lr_at)",
    "Schedule", [
  Vouch_ClauseCase<"Constant", 0, "constant", "">,
  Vouch_ClauseCase<"Step", 1, "step", "step_size, gamma = 0.1">,
  Vouch_ClauseCase<"Exponential", 2, "exponential", "gamma">,
  Vouch_ClauseCase<"WarmupCosine", 3, "warmup_cosine",
      "warmup, total = 0, min_lr = 0">,
]>;

def Vouch_DataKind : Vouch_ClauseEnum<"DataKind",
    "the source of the data clause (runtime/model_api.h DataSpec)",
    "DataSource", [
  Vouch_ClauseCase<"RegressionGrid", 0, "regression_grid",
      "lo = -1.0, hi = 1.0, n = 5">,
  Vouch_ClauseCase<"Csv", 1, "csv", "path">,
  Vouch_ClauseCase<"Npy", 2, "npy", "files">,
  Vouch_ClauseCase<"Tokens", 3, "tokens", "file, order = sequential">,
]>;

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class Vouch_Attr<string name, string attrMnemonic>
    : AttrDef<Vouch_Dialect, name> {
  let mnemonic = attrMnemonic;
}

// The initialiser of a vouch.param, printed there as its bare name
// (`= xavier_uniform`); `#vouch.init<xavier_uniform>` elsewhere.
def Vouch_InitKindAttr : EnumAttr<Vouch_Dialect, Vouch_InitKind, "init">;

// A float parameter, printed as MLIR prints floats (exact round trip).
class Vouch_F64Parameter<string desc>
    : AttrOrTypeParameter<"::llvm::APFloat", desc> {
  let comparator = "$_lhs.bitwiseIsEqual($_rhs)";
  let parser = [{ [&]() -> ::mlir::FailureOr<::llvm::APFloat> {
    double value;
    if ($_parser.parseFloat(value))
      return ::mlir::failure();
    return ::llvm::APFloat(value);
  }() }];
  let printer = "$_printer << $_self";
}

// A float parameter only some callees take: absent for the others.
class Vouch_OptionalF64Parameter<string desc>
    : OptionalParameter<"std::optional<::llvm::APFloat>", desc> {
  let comparator = "$_lhs.has_value() == $_rhs.has_value() && "
                   "(!$_lhs || $_lhs->bitwiseIsEqual(*$_rhs))";
  let parser = [{ [&]() -> ::mlir::FailureOr<std::optional<::llvm::APFloat>> {
    double value;
    if ($_parser.parseFloat(value))
      return ::mlir::failure();
    return std::optional<::llvm::APFloat>(::llvm::APFloat(value));
  }() }];
  let printer = "$_printer << *$_self";
}

class Vouch_OptionalI64Parameter<string desc>
    : OptionalParameter<"std::optional<int64_t>", desc> {
  let printer = "$_printer << *$_self";
}

class Vouch_OptionalStringParameter<string desc>
    : OptionalParameter<"::mlir::StringAttr", desc>;

def Vouch_ScheduleAttr : Vouch_Attr<"Schedule", "schedule"> {
  let summary = "The learning-rate schedule of the train clause";
  let description = [{
    Exactly the arguments of the schedule's signature are present, defaults
    filled in (`total` of warmup_cosine is the clause's steps unless given).
    A constant schedule is no attribute at all.

    ```mlir
    #vouch.schedule<kind = warmup_cosine, warmup = 100, total = 1000,
                    min_lr = 0.000000e+00>
    ```
  }];
  let parameters = (ins
    EnumParameter<Vouch_ScheduleKind>:$kind,
    Vouch_OptionalI64Parameter<"step: decay period">:$step_size,
    Vouch_OptionalF64Parameter<"step, exponential: decay factor">:$gamma,
    Vouch_OptionalI64Parameter<"warmup_cosine: warmup steps">:$warmup,
    Vouch_OptionalI64Parameter<"warmup_cosine: the step of min_lr">:$total,
    Vouch_OptionalF64Parameter<"warmup_cosine: the final lr">:$min_lr
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Vouch_TrainAttr : Vouch_Attr<"Train", "train"> {
  let summary = "The train clause: optimizer, hyper-parameters, steps";
  let description = [{
    Every hyper-parameter the optimizer takes is written out (the defaults
    of its signature filled in by the frontend) and no other: `beta1`,
    `beta2`, `eps` for adam and adamw, `momentum` for sgd, `alpha`, `eps`,
    `momentum` for rmsprop, `lr_decay`, `eps` for adagrad, `decay_min_rank`
    for adamw. A schedule other
    than constant and gradient clipping appear only when the clause asks.

    ```mlir
    train = #vouch.train<optimizer = adam, lr = 3.000000e-02,
        beta1 = 9.000000e-01, beta2 = 0.99899999999999999,
        eps = 1.000000e-08, weight_decay = 0.000000e+00, steps = 200,
        log_every = 25>
    ```
  }];
  let parameters = (ins
    EnumParameter<Vouch_OptimizerKind>:$optimizer,
    Vouch_F64Parameter<"learning rate">:$lr,
    Vouch_OptionalF64Parameter<"adam(w): first moment decay">:$beta1,
    Vouch_OptionalF64Parameter<"adam(w): second moment decay">:$beta2,
    Vouch_OptionalF64Parameter<"adam(w): denominator term">:$eps,
    Vouch_F64Parameter<"weight decay">:$weight_decay,
    Vouch_OptionalF64Parameter<"sgd, rmsprop: momentum">:$momentum,
    Vouch_OptionalF64Parameter<"rmsprop: square average decay">:$alpha,
    Vouch_OptionalF64Parameter<"adagrad: lr decay">:$lr_decay,
    Vouch_OptionalF64Parameter<"adamw: decay only params of at least this rank">:$decay_min_rank,
    "int64_t":$steps,
    "int64_t":$log_every,
    OptionalParameter<"ScheduleAttr", "the lr schedule; absent: constant">:$schedule,
    Vouch_OptionalF64Parameter<"max global gradient norm; absent: no clipping">:$clip_grad_norm,
    DefaultValuedParameter<"bool", "false",
        "shuffle the rows every epoch (seeded by the run seed)">:$shuffle,
    Vouch_OptionalI64Parameter<"evaluate the held-out data every N steps">:$eval_every
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The hyper-parameter named as in the clause table ("beta1"), if the
    /// attribute has it.
    std::optional<double> getHyperParameter(::llvm::StringRef name) const;
  }];
}

def Vouch_DataAttr : Vouch_Attr<"Data", "data"> {
  let summary = "The data clause: a source and its arguments";
  let description = [{
    Exactly the arguments of the source's signature are present: `lo`,
    `hi`, `n` for regression_grid, `path` for csv, `files` for npy (one file
    per input and target, by the field's name: the language's
    `npy(x = "x.npy", labels = "y.npy")`), `path` (the language's `file`)
    and `order` ("random" or "sequential") for tokens, a stream of token ids
    cut into windows (docs/language.md). Paths are resolved against the
    description's directory.

    ```mlir
    data = #vouch.data<kind = regression_grid, lo = -1.000000e+00,
                       hi = 1.000000e+00, n = 5>
    data = #vouch.data<kind = npy, files = {labels = "data/y.npy", x = "data/x.npy"}>
    data = #vouch.data<kind = tokens, path = "data/train.bin", order = "random">
    ```
  }];
  let parameters = (ins
    EnumParameter<Vouch_DataKind>:$kind,
    Vouch_OptionalF64Parameter<"regression_grid: lower end">:$lo,
    Vouch_OptionalF64Parameter<"regression_grid: upper end">:$hi,
    Vouch_OptionalI64Parameter<"regression_grid: points per axis">:$n,
    Vouch_OptionalStringParameter<"csv, tokens: the file">:$path,
    OptionalParameter<"::mlir::DictionaryAttr",
        "npy: each input's and target's file, by name">:$files,
    Vouch_OptionalStringParameter<
        "tokens: the windows' order, \"random\" or \"sequential\"">:$order
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Vouch_EvalAttr : Vouch_Attr<"Eval", "eval"> {
  let summary = "The eval clause: the held-out data";
  let description = [{
    Either a fraction of the data clause's rows (the last ones, see
    docs/language.md) or a data source of its own (npy, csv or tokens with
    order = "sequential", as the data clause's). The train clause's `eval_every` says how often it is
    evaluated besides after training.

    ```mlir
    eval = #vouch.eval<fraction = 2.000000e-01>
    eval = #vouch.eval<data = #vouch.data<kind = npy, files = {...}>>
    ```
  }];
  let parameters = (ins
    Vouch_OptionalF64Parameter<"the held-out fraction of the data, in (0, 1)">:$fraction,
    OptionalParameter<"DataAttr", "held-out data of its own">:$data
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // VOUCH_ATTRS_TD
