#!/usr/bin/env python3
"""Fails when libhisteq.so exports anything but the public API: the C++ names of histeq::api
(include/histeq/histeq.hpp) and the C functions histeq_* (include/histeq/histeq.h). The core's
static libraries and the static CUDA runtime are linked in; core/api/libhisteq.map and hidden
visibility keep them local, and this check keeps it so.

  check_exports.py LIB [REQUIRED ...]   REQUIRED: demangled names that must be among the exports
  check_exports.py --self-test          the rule on made-up symbol lists
"""
import subprocess
import sys


def exported(lib):
    """The demangled names of the defined dynamic symbols of `lib`."""
    nm = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True, text=True).stdout
    names = [line.split(None, 2)[-1] for line in nm.splitlines() if line.strip()]
    return subprocess.run(["c++filt"], input="\n".join(names), check=True, capture_output=True, text=True).stdout.splitlines()


def public(name):
    return name.startswith("histeq::api::") or name.startswith("histeq_")


def problems(names, required):
    bad = ["not public: " + n for n in names if not public(n)]
    present = set(n.split("(")[0] for n in names)
    return bad + ["missing: " + r for r in required if r not in present]


def self_test():
    ok = ["histeq::api::version()", "histeq_version"]
    assert problems(ok, ["histeq::api::version", "histeq_version"]) == []
    assert problems(ok + ["histeq::eq::controls()"], []) == ["not public: histeq::eq::controls()"]
    assert problems(ok + ["cudaMalloc"], []) == ["not public: cudaMalloc"]
    assert problems(ok, ["histeq_equalizer_process"]) == ["missing: histeq_equalizer_process"]
    print("check_exports self-test: ok")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    names = exported(argv[1])
    found = problems(names, argv[2:])
    for p in found:
        print(argv[1] + ": " + p)
    if not found:
        print("%s: %d symbols, all public" % (argv[1], len(names)))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
