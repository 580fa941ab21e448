"""Issue 48's catalogue of bad inputs, counted: how each case fares on a version of skanchors.

``tests/test_validation.py`` holds the cases; the test suite asserts that each one works (its
result checked) or raises the named error. This script runs every case the way a user would
meet it and sorts the outcome into five kinds, so that two versions can be compared::

    git worktree add /tmp/before 332870d            # the code before the fixes
    cp tests/test_validation.py /tmp/before/tests/
    PYTHONPATH=/tmp/before python bench/catalogue.py /tmp/before/tests/test_validation.py \\
        --json bench/results_catalogue_before.json
    PYTHONPATH=. python bench/catalogue.py tests/test_validation.py \\
        --json bench/results_catalogue_after.json
    python bench/catalogue.py --report bench/results_catalogue_before.json \\
        bench/results_catalogue_after.json > bench/results_catalogue.md

Each case runs in a forked process with a time limit (``--timeout``, 30 s) and an 8 GiB
address-space limit. The test models' call budgets (which in the test suite turn a parameter
checked too late into an immediate failure) are lifted: a loop runs until the time limit.

- *works*: a case expected to work did, and its check passed;
- *clear*: the expected exception class, with a message matching the case's pattern (the
  argument at fault and what was expected); ``--lenient`` also counts a parameter error whose
  message names the parameter in other words than scikit-learn's;
- *unclear*: another exception (an internal error, a MemoryError, a message that does not
  name the argument);
- *wrong*: no error where one was expected (the bad value was used), or a working case whose
  result failed its check (an error or a warning it expects did not come);
- *hang*: still running at the time limit, or killed.
"""

from __future__ import annotations

import argparse
import collections
import importlib.util
import json
import os
import re
import signal
import sys
import time
import warnings

KINDS = ("works", "clear", "unclear", "wrong", "hang")


def load(path):
    """The catalogue module at ``path``, its models' call budgets lifted."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec = importlib.util.spec_from_file_location("test_catalogue", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["test_catalogue"] = module  # (pickled models refer to it)
    spec.loader.exec_module(module)
    call = module.Model.__call__

    def unbudgeted(self, X):
        self.budget = None
        return call(self, X)

    module.Model.__call__ = unbudgeted
    return module


def classify(module, name):
    fn, expect, match = module.CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn()
        except AssertionError as error:
            kind = "wrong" if expect is None else "unclear"
            return kind, f"AssertionError: {str(error)[:200]}"
        except BaseException as error:  # noqa: BLE001 - every outcome is recorded
            message = f"{type(error).__name__}: {str(error)[:300]}"
            if expect is not None and isinstance(error, expect) and re.search(match, str(error)):
                return "clear", message
            if expect is None and message.startswith("Failed: DID NOT"):
                return "wrong", message  # (a check of pytest.raises or pytest.warns)
            return "unclear", message
    return ("works", "") if expect is None else ("wrong", "no error raised")


def run(module, name, timeout):
    """One case in a forked child: (kind, message, seconds)."""
    read, write = os.pipe()
    start = time.time()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read)
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
        try:
            result = classify(module, name)
        except BaseException as error:  # noqa: BLE001
            result = ("unclear", repr(error))
        os.write(write, json.dumps(result).encode())
        os._exit(0)
    os.close(write)
    status = None
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.time() - start > timeout:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            status = None
            break
        time.sleep(0.02)
    data = os.read(read, 1 << 16)
    os.close(read)
    if status is None:
        result = ("hang", f"still running after {timeout:g} s")
    elif not data:
        result = ("hang", f"the process died (status {status})")
    else:
        result = tuple(json.loads(data))
    return (*result, round(time.time() - start, 2))


def lenient(module, results):
    """Count a parameter error as clear when its class is the expected one and its message
    names the parameter, whatever the wording."""
    out = {}
    for name, (kind, message, seconds) in results.items():
        _, expect, match = module.CASES[name]
        param = re.search(r"The '(\w+)' parameter", match or "")
        if kind == "unclear" and param and expect is not None:
            names = {c.__name__ for c in expect.__mro__} | {"InvalidParameterError"}
            if message.split(":")[0] in names and re.search(rf"\b{param[1]}\b", message):
                kind = "clear"
        out[name] = (kind, message, seconds)
    return out


def counts(results):
    c = collections.Counter(kind for kind, _, _ in results.values())
    return {kind: c.get(kind, 0) for kind in KINDS}


def report(before_path, after_path):
    before, after = json.load(open(before_path)), json.load(open(after_path))
    lines = [
        "# Issue 48's catalogue of bad inputs (`bench/catalogue.py`)",
        "",
        f"{len(after['results'])} cases of `tests/test_validation.py`, each in a fresh process "
        f"(time limit {after['timeout']:g} s, 8 GiB of address space). *before*: "
        f"{before['version']}; *after*: {after['version']}.",
        "",
        "| | " + " | ".join(KINDS) + " |",
        "|---|" + "---|" * len(KINDS),
    ]
    for label, data in (("before", before), ("before, lenient", before), ("after", after)):
        key = "lenient" if "lenient" in label else "strict"
        row = data[key]
        lines.append(f"| {label} | " + " | ".join(str(row[k]) for k in KINDS) + " |")
    lines += [
        "",
        "*lenient*: a parameter error counts as clear when the message names the parameter in "
        "other words than scikit-learn's (`k must be a positive integer, got 0.`).",
        "",
        "## The cases that were not clear or working before",
        "",
        "| case | before | message before |",
        "|---|---|---|",
    ]
    for name, (kind, message, _) in before["results"].items():
        if kind in ("unclear", "wrong", "hang"):
            text = message.replace("|", "\\|").replace("\n", " ")[:140]
            lines.append(f"| `{name}` | {kind} | {text} |")
    left = [n for n, (k, _, _) in after["results"].items() if k not in ("works", "clear")]
    lines += ["", f"After: {len(left)} case(s) not clear or working: {left or 'none'}."]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("catalogue", nargs="?", help="path of test_catalogue.py")
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--json", help="write the outcomes here")
    parser.add_argument("--report", nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.report:
        print(report(*args.report))
        return
    module = load(args.catalogue)
    import skanchors

    results = {}
    for name in module.CASES:
        results[name] = run(module, name, args.timeout)
        kind, message, seconds = results[name]
        print(f"{kind:8s} {name:55s} {seconds:6.2f}s  {message[:160]}", flush=True)
    strict, loose = counts(results), counts(lenient(module, results))
    print("strict ", strict, "\nlenient", loose)
    if args.json:
        version = os.popen(
            f"git -C {os.path.dirname(os.path.abspath(skanchors.__file__))} rev-parse --short HEAD"
        ).read()
        data = dict(
            version=version.strip(),
            timeout=args.timeout,
            strict=strict,
            lenient=loose,
            results=results,
        )
        with open(args.json, "w") as fh:
            json.dump(data, fh, indent=1)


if __name__ == "__main__":
    main()
