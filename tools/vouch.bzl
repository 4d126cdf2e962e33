"""vouch_model: a model description in the repo becomes a cc_binary (like
XLA's tf_library): `vouch build --emit=cpp` writes its C++, which is compiled
and linked against //runtime by Bazel."""

def vouch_model(name, src, target = "cpu", flags = [], visibility = None, testonly = False):
    """flags: more `vouch build` options (e.g. ["--attention", "fused"])."""
    native.genrule(
        name = name + "_cpp",
        # The driver is listed in srcs, not tools, so Bazel builds it once in
        # the target configuration instead of a second time for the host.
        srcs = [src, "//tools:vouch"],
        outs = [name + ".cpp"],
        cmd = "$(location //tools:vouch) build $(location %s) --target %s %s --emit=cpp -o $@" % (src, target, " ".join(flags)),
        testonly = testonly,
    )
    native.cc_binary(
        name = name,
        srcs = [name + ".cpp"],
        deps = ["//runtime"],
        copts = ["-O2"],
        visibility = visibility,
        testonly = testonly,
    )
