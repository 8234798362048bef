"""Mutation score of the security- and correctness-critical modules (mutmut's mutation operators).

Each module is paired with the fast tests that exercise it; a seeded sample of its mutants is applied one at a
time in place, the module's tests run (``-x``, slow tests excluded), and the source is restored. A mutant is
killed when the tests fail (or time out, counted as killed), survived when they pass. Prints a markdown table
per module, the total, and every survivor as ``file:line: before -> after`` for judging.

    scripts/bench mutation [--per-module N] [--seed S] [--only PATH ...]
    scripts/bench mutation --recheck server/base.py#N tests/server/test_ratelimit.py   # one survivor, other tests
"""

from __future__ import annotations

import argparse
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import pytest
from mutmut import ALL, Context, RelativeMutationID, list_mutations, mutate  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parent.parent
NOT_MONGO = ["-k", "not mongomock"]
# Module -> the tests that exercise it (sqlite only where a test runs once per store backend: the module under
# mutation is the same code whichever store serves the request).
TARGETS: dict[str, list[str]] = {
    "server/base.py": ["tests/server/test_auth.py", "tests/server/test_tier_access.py", *NOT_MONGO],
    "server/ratelimit.py": ["tests/server/test_ratelimit.py", *NOT_MONGO],
    "server/tokens.py": ["tests/server/test_tokens.py", *NOT_MONGO],
    "config/tiers.py": ["tests/server/test_tier_access.py", *NOT_MONGO],
    "server/windows.py": ["tests/server/test_windows.py", "tests/server/test_tier_windows.py", *NOT_MONGO],
    "store/apikeys.py": ["tests/server/test_auth.py", *NOT_MONGO],
    "web/csrf.py": ["tests/web/test_csrf.py", *NOT_MONGO],
    "exporters/stix.py": ["tests/exporters/test_stix.py", "tests/exporters/test_ioctype_table.py"],
    "exporters/misp.py": ["tests/exporters/test_misp.py", "tests/exporters/test_ioctype_table.py"],
    "exporters/cef.py": ["tests/exporters/test_cef.py", "tests/exporters/test_ioctype_table.py"],
    "exporters/openioc.py": ["tests/exporters/test_openioc.py", "tests/exporters/test_ioctype_table.py"],
    "exporters/sigma.py": ["tests/exporters/test_sigma.py", "tests/exporters/test_ioctype_table.py"],
}
PYTEST = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "not slow"]


@dataclass
class Score:
    module: str
    mutants: int = 0
    sampled: int = 0
    killed: int = 0
    timeouts: int = 0
    survivors: list[str] = field(default_factory=list)

    @property
    def percent(self) -> float:
        tried = self.killed + self.timeouts + len(self.survivors)
        return 100.0 * (self.killed + self.timeouts) / tried if tried else 0.0


def run_tests(tests: list[str], timeout: float) -> str:
    """'killed', 'survived' or 'timeout' for the module's tests against the current source."""
    try:
        done = subprocess.run([*PYTEST, *tests], cwd=ROOT, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout"
    if done.returncode == pytest.ExitCode.NO_TESTS_COLLECTED:  # a test selection that kills nothing
        raise SystemExit(f"no test selected by {' '.join(tests)}")
    return "survived" if done.returncode == 0 else "killed"


def mutant_source(path: Path, source: str, mutant: RelativeMutationID) -> str:
    mutated: str = mutate(Context(source=source, mutation_id=mutant, filename=str(path)))[0]
    return mutated


def changed_line(original: str, mutated: str) -> str:
    """``line: before -> after`` of the first line the mutant changed."""
    for number, (old, new) in enumerate(zip(original.splitlines(), mutated.splitlines(), strict=False), 1):
        if old != new:
            return f"{number}: `{old.strip()}` -> `{new.strip()}`"
    return "?: (a line removed)"


def all_mutants(module: str) -> tuple[str, list[RelativeMutationID]]:
    original = (ROOT / module).read_text()
    return original, list_mutations(Context(source=original, mutation_id=ALL, filename=str(ROOT / module)))


def try_mutant(module: str, original: str, mutant: RelativeMutationID, tests: list[str], timeout: float) -> str:
    """Apply one mutant in place, run ``tests``, restore the source whatever happens."""
    path = ROOT / module
    path.write_text(mutant_source(path, original, mutant))
    try:
        return run_tests(tests, timeout)
    finally:
        path.write_text(original)


def score_module(module: str, per_module: int, seed: int) -> Score:
    original, mutants = all_mutants(module)
    rng = random.Random(f"{seed}:{module}")  # per module: --only draws the same sample
    sample = sorted(rng.sample(range(len(mutants)), min(per_module, len(mutants))))
    score = Score(module, len(mutants), len(sample))
    started = time.monotonic()
    if run_tests(TARGETS[module], 3600) != "survived":
        raise SystemExit(f"{module}: its tests fail without any mutant")
    timeout = 3 * (time.monotonic() - started) + 30
    for number in sample:
        outcome = try_mutant(module, original, mutants[number], TARGETS[module], timeout)
        if outcome == "survived":
            mutated = mutant_source(ROOT / module, original, mutants[number])
            score.survivors.append(f"{module}#{number} line {changed_line(original, mutated)}")
        elif outcome == "timeout":
            score.timeouts += 1
        else:
            score.killed += 1
        print(f"  {module}#{number}: {outcome}", file=sys.stderr, flush=True)
    return score


def recheck(mutant_id: str, tests: list[str]) -> None:
    """``MODULE#N``, one survivor, against other tests (a wider folder, or a test written to kill it)."""
    module, _, number = mutant_id.partition("#")
    original, mutants = all_mutants(module)
    print(f"{mutant_id}: {try_mutant(module, original, mutants[int(number)], tests, 3600)} by {' '.join(tests)}")


def report(scores: list[Score], argv: list[str]) -> None:
    print("| module | mutants | sampled | killed | timeouts | survived | score |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    total = Score("**total**")
    for s in scores:
        print(f"| {s.module} | {s.mutants} | {s.sampled} | {s.killed} | {s.timeouts} | {len(s.survivors)} "
              f"| {s.percent:.0f}% |")
        total.mutants += s.mutants
        total.sampled += s.sampled
        total.killed += s.killed
        total.timeouts += s.timeouts
        total.survivors += s.survivors
    print(f"| {total.module} | {total.mutants} | {total.sampled} | {total.killed} | {total.timeouts} "
          f"| {len(total.survivors)} | {total.percent:.1f}% |")
    print("\nSurvivors:")
    for survivor in total.survivors:
        print(f"- {survivor}")
    print(f"\nCommand: scripts/bench mutation {' '.join(argv)}".rstrip())


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds through score_module's finally: the source is restored


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-module", type=int, default=7,
                        help="mutants sampled per module (default 7: under 30 minutes on 2 busy cores)")
    parser.add_argument("--seed", type=int, default=7, help="sampling seed (default 7)")
    parser.add_argument("--only", nargs="*", choices=sorted(TARGETS), help="these modules only")
    parser.add_argument("--recheck", metavar="MODULE#N", help="run one mutant against the tests given after it")
    parser.add_argument("tests", nargs="*", help="with --recheck: the tests (pytest arguments)")
    args, pytest_options = parser.parse_known_args(argv)  # e.g. -k after --recheck's tests
    signal.signal(signal.SIGTERM, _terminate)
    if args.recheck:
        recheck(args.recheck, [*args.tests, *pytest_options])
        return
    if pytest_options:
        parser.error(f"unrecognized arguments: {' '.join(pytest_options)}")
    scores = [score_module(module, args.per_module, args.seed) for module in (args.only or TARGETS)]
    report(scores, sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    main()
