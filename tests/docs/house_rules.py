"""What the house-rule checks of tests/docs/ share: the scratch tree of their self-tests, the
command line, and the self-test's verdict."""
import contextlib
import os
import sys
import tempfile


@contextlib.contextmanager
def planted_tree(planted):
    """A scratch folder holding `planted` ({relative path: text}), removed afterwards."""
    with tempfile.TemporaryDirectory() as d:
        for rel, text in planted.items():
            os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
            with open(os.path.join(d, rel), "w") as f:
                f.write(text)
        yield d


def usage_ok(argv, doc, options, max_args=2):
    """Whether argv is ROOT [OPTION [VALUE]] with OPTION in `options`; prints `doc` when it is not."""
    ok = 1 <= len(argv) <= max_args and (len(argv) == 1 or argv[1] in options)
    if not ok:
        print(doc, file=sys.stderr)
    return ok


def verdict(ok, passed, failed):
    """The self-test's exit status, with its line (`failed` on stderr)."""
    print(passed if ok else "self-test failed: " + failed, file=sys.stdout if ok else sys.stderr)
    return 0 if ok else 1
