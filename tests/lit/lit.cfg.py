# lit configuration for vouch's FileCheck tests. The tools come from Bazel's
# output tree (or VOUCH_BIN_DIR, e.g. inside the packaged GPU suite).
import os
import lit.formats

config.name = "vouch"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".vouch", ".test"]
config.excludes = ["Inputs", "lit.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
repo = os.path.abspath(os.path.join(config.test_source_root, "..", ".."))
bin_dir = os.environ.get("VOUCH_BIN_DIR", os.path.join(repo, "bazel-bin", "tools"))
llvm_bin = "/usr/lib/llvm-19/bin"

config.substitutions.append(("%vouch-opt", os.path.join(bin_dir, "vouch-opt")))
config.substitutions.append(("%vouch", os.path.join(bin_dir, "vouch")))
config.substitutions.append(("%examples", os.path.join(repo, "examples")))
config.substitutions.append(("%gpu-models", os.path.join(repo, "tests", "gpu")))
config.substitutions.append(("%python", "/usr/bin/python3"))
config.environment["PATH"] = os.pathsep.join([llvm_bin, os.environ.get("PATH", "")])
for var in ["HOME", "TMPDIR", "CUDA_VISIBLE_DEVICES", "VOUCH_CACHE_DIR"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]
