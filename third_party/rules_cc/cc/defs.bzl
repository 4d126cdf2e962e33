"""Forwards to Bazel 4.2.3's native C++ rules (Debian's rules_cc is too new)."""
def cc_library(**kw):
    native.cc_library(**kw)
def cc_binary(**kw):
    native.cc_binary(**kw)
def cc_test(**kw):
    native.cc_test(**kw)
def cc_import(**kw):
    native.cc_import(**kw)
def cc_toolchain(**kw):
    native.cc_toolchain(**kw)
def cc_toolchain_suite(**kw):
    native.cc_toolchain_suite(**kw)
def cc_proto_library(**kw):
    native.cc_proto_library(**kw)
def objc_library(**kw):
    native.objc_library(**kw)
