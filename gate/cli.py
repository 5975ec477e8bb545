"""The command line: ``python -m gate`` / ``schema-gate``.

argparse -> Settings -> engine.run -> a renderer -> an exit code. Every problem
the user can fix (bad flag, bad ref, bad contract) is one line on stderr and
exit code 2, never a traceback: the gate fails closed.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import threading
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from gate import __version__, _dataclass_code

if TYPE_CHECKING:
    from gate.engine import Settings
    from gate.model import ContractErrors
    from gate.report import Report

# The engine, sqlglot and the renderers are imported when a run needs them, not
# at start-up: --help, --version and ``rules`` cost what Python's start-up costs.

#: The --format choices: ``sorted(gate.report.RENDERERS)``, spelled out so that
#: --help need not import the renderers (tests/e2e/test_lazy_imports.py checks they agree).
FORMATS = ("github", "gitlab", "json", "junit", "markdown", "sarif", "text")

#: gate.report.EXIT_ERROR (checked equal by the same test).
EXIT_ERROR = 2


def escape_line(line: str) -> str:
    """gate.report.text.escape_line, imported only when there is an error to print."""
    from gate.report.text import escape_line as escape

    return escape(line)


PROG = "schema-gate"

DESCRIPTION = """\
Stop pull requests from silently breaking the consumers of your data contracts.

Reads every changed contract (Soda, Data Contract Specification, ODCS, dbt) at
the merge-base with --base and at HEAD (your working tree by default), and
classifies each change as breaking (column removed, type narrowed, dataset
removed or renamed, ...) or additive (new column, widened type, ...).
"""

EPILOG = """\
examples:
  schema-gate --base origin/main
      compare your working tree with where your branch left main
  schema-gate --base origin/main --head HEAD --format markdown
      compare what is committed (uncommitted edits left out), as a PR comment
  schema-gate --base origin/main --pr-body-file body.md --format json
      honour acknowledgements written in the PR description
  schema-gate --accept shop.orders
      acknowledge an intended break of dataset shop.orders
  schema-gate rules
      list every rule id with its default severity

acknowledging a breaking change:
  put a line "accept-breaking-change: <dataset>" in the PR body (or use
  --accept, or ACCEPT_BREAKING_CHANGE=a,b). The change stays in the report,
  marked ACKED. Tokens that match nothing are reported so typos never pass.
  A consumer_broken the gate misread is vouched for per consumer file:
  "accept-consumer-break: <path>" (or --accept-consumer-break, ACCEPT_CONSUMER_BREAK).

exit codes:
  0  no breaking change, or all of them acknowledged
  1  at least one unacknowledged breaking change (or a failed smoke test)
  2  the gate could not run: bad flag or ref, git failure, invalid contract
     (every refused contract file is listed, one line each, then a count)

docs: README.md, docs/rules.md (the rule catalogue), docs/configuration.md
"""


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line and exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(escape_line(f"{self.prog}: error: {message} (see --help)") + "\n")
        raise SystemExit(EXIT_ERROR)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    where = parser.add_argument_group("what to compare")
    where.add_argument(
        "--base",
        default="origin/main",
        metavar="REF",
        help="the target branch or commit (default: origin/main); the merge-base with HEAD is used",
    )
    where.add_argument(
        "--no-merge-base",
        dest="merge_base",
        action="store_false",
        help="compare with the tip of --base instead of the merge-base (reports changes made "
        "on the base branch since you branched as if you had reverted them)",
    )
    where.add_argument(
        "--head",
        metavar="REF",
        help="compare this commit instead of the working tree (default: working tree, "
        "including uncommitted and untracked contracts)",
    )
    where.add_argument(
        "--repo", default=".", metavar="DIR", help="the git repository (default: current directory)"
    )
    where.add_argument(
        "--contracts",
        action="append",
        metavar="GLOB",
        help="where contracts live, as a git glob (repeatable; replaces the defaults, "
        "e.g. --contracts 'soda/contracts/**/*.yaml')",
    )
    where.add_argument(
        "--config",
        metavar="PATH",
        help="config file, read from the HEAD side, relative to the repository root "
        "like git show HEAD:PATH, or absolute (default: .schema-gate.yml, "
        "else [tool.schema-gate] in pyproject.toml)",
    )
    how = parser.add_argument_group("how to judge")
    how.add_argument(
        "--dialect",
        metavar="NAME",
        help="SQL dialect of the data_type values, as sqlglot names it (default: the "
        "config's dialect:, else the base side's dbt profiles.yml or SQLMesh config, "
        "else spark)",
    )
    how.add_argument(
        "--fail-on",
        choices=["error", "warning"],
        help="lowest severity that fails the run (default: error)",
    )
    how.add_argument("--list-rules", action="store_true", help="print the rule catalogue and exit")
    ack = parser.add_argument_group("acknowledging intended breaks")
    ack.add_argument(
        "--pr-body-file",
        metavar="FILE",
        help="file holding the PR description, scanned for accept-breaking-change and "
        "accept-consumer-break lines "
        "('-' reads standard input)",
    )
    ack.add_argument(
        "--accept",
        action="append",
        default=[],
        metavar="DATASETS",
        help="comma-separated dataset ids whose breaking changes are intended "
        "(merged with the PR body and $ACCEPT_BREAKING_CHANGE)",
    )
    ack.add_argument(
        "--accept-consumer-break",
        action="append",
        default=[],
        metavar="PATHS",
        help="comma-separated consumer files (exact repository paths) whose consumer_broken "
        "findings the gate misread: the reader still works (merged with the PR body's "
        "accept-consumer-break lines and $ACCEPT_CONSUMER_BREAK)",
    )
    ack.add_argument(
        "--approved-by",
        action="append",
        default=[],
        metavar="HANDLES",
        help="comma-separated GitHub handles (alice, @org/team) that approved the breaks, for "
        "an approval policy in the base config (merged with $APPROVED_BY; see README)",
    )
    out = parser.add_argument_group("output")
    out.add_argument(
        "--format",
        choices=FORMATS,
        default="text",
        help="report format (default: text; github prints workflow annotations; sarif is for "
        "code scanning, junit and gitlab (Code Quality) for other CI systems)",
    )
    out.add_argument("--output", metavar="FILE", help="also write the report to FILE (in --format)")
    run = parser.add_argument_group("running")
    run.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="processes that parse contracts and consumers, this one included "
        "(default: the usable CPUs, at most 8, for large batches; 1: no worker process)",
    )
    run.add_argument("--debug", action="store_true", help="show tracebacks for internal errors")
    smoke = parser.add_argument_group("smoke test (needs the spark extra and Java)")
    smoke.add_argument(
        "--smoke-test",
        action="store_true",
        help="check the HEAD contracts against sample data in a Spark session",
    )
    smoke.add_argument(
        "--smoke-changed-only",
        action="store_true",
        help="smoke-test only the contracts this change touches",
    )
    smoke.add_argument(
        "--sample-data",
        metavar="DIR",
        help="folder of samples named <dataset>.<csv|jsonl|json|parquet> "
        "(default: <contract>.sample.<ext> beside each contract)",
    )
    smoke.add_argument("--spark-master", metavar="URL", help="Spark master (default: local[*])")
    smoke.add_argument(
        "--spark-remote", metavar="sc://HOST:PORT", help="run on a cluster through Spark Connect"
    )
    smoke.add_argument(
        "--quarantine", metavar="DIR", help="write violating rows as Parquet into DIR"
    )
    # The subcommand is dispatched before argparse (``main``); say so in the usage.
    flags = parser.format_usage().removeprefix("usage: ").rstrip()
    parser.usage = f"{flags}\n       {PROG} rules"
    return parser


def render_rules() -> str:
    from gate import rules

    width = max(len(rule.id) for rule in rules.all_rules())
    lines = [f"{'RULE'.ljust(width)}  SEVERITY  BREAKS     PURPOSE"]
    for rule in rules.all_rules():
        breaks = "-" if rule.severity is rules.Severity.INFO else rule.breaks
        lines.append(
            f"{rule.id.ljust(width)}  {rule.severity.value.ljust(8)}  {breaks.ljust(9)}  "
            f"{rule.purpose}"
        )
    return "\n".join(lines) + "\n"


#: Bytes of a PR description file: every platform's limit fits (GitHub 65,536
#: characters, GitLab 1,000,000), and an endless stream (``/dev/zero``) stops here
#: instead of filling memory until the kernel kills the run.
MAX_PR_BODY_BYTES = 8 * 1024 * 1024


def _read_pr_body(path: str | None) -> str | None:
    from gate.model import UsageError

    if path is None:
        return None
    try:
        if path == "-":
            raw = getattr(sys.stdin, "buffer", None)  # a text stream when embedded
            data = (
                raw.read(MAX_PR_BODY_BYTES + 1)
                if raw is not None
                else sys.stdin.read(MAX_PR_BODY_BYTES + 1).encode("utf-8", "replace")
            )
        else:
            with open(path, "rb") as body:
                data = body.read(MAX_PR_BODY_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"cannot read --pr-body-file {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_PR_BODY_BYTES:
        raise UsageError(
            f"--pr-body-file {path} holds more than {MAX_PR_BODY_BYTES:,} bytes; a PR "
            "description is far shorter (GitHub allows 65,536 characters)"
        )
    return data.decode("utf-8", errors="replace")


def _check_config_path(path: str | None) -> None:
    """Say how --config is read before git's own path check refuses a ``..``.

    The file is read from the HEAD commit, so its path is the repository's (as in
    ``git show HEAD:PATH``), not the current directory's: from a subdirectory,
    ``../.schema-gate.yml`` looks natural and would otherwise be "a path that
    leaves the repository".
    """
    from gate.model import UsageError

    if path and not os.path.isabs(path) and ".." in Path(path).parts:
        raise UsageError(
            f"--config {path}: give the path relative to the repository root "
            "(it is read from the HEAD side, like git show HEAD:PATH) or an absolute path"
        )


def settings_from_args(args: argparse.Namespace) -> Settings:
    from gate.engine import Settings
    from gate.model import UsageError
    from gate.rules import Severity

    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.dialect is not None and not args.dialect.strip():
        # An empty value (an unset shell variable, --dialect "$DIALECT") must not
        # quietly mean the default: the types would be read in another dialect.
        raise UsageError("--dialect is empty; give a dialect name such as spark or databricks")
    _check_config_path(args.config)
    return Settings(
        repo=args.repo,
        base=args.base,
        head=args.head,
        merge_base=args.merge_base,
        contracts=tuple(args.contracts) if args.contracts else None,
        dialect=args.dialect,
        fail_on=Severity(args.fail_on) if args.fail_on else None,
        config=args.config,
        accept=tuple(args.accept),
        accept_env=os.environ.get("ACCEPT_BREAKING_CHANGE"),
        accept_consumer_break=tuple(args.accept_consumer_break),
        accept_consumer_break_env=os.environ.get("ACCEPT_CONSUMER_BREAK"),
        approved_by=_handles([*args.approved_by, os.environ.get("APPROVED_BY") or ""]),
        pr_body=_read_pr_body(args.pr_body_file),
        jobs=args.jobs,
        smoke=args.smoke_test,
        smoke_changed_only=args.smoke_changed_only,
        sample_data=args.sample_data,
        spark_master=args.spark_master,
        spark_remote=args.spark_remote,
        quarantine=args.quarantine,
    )


def _handles(values: list[str]) -> tuple[str, ...]:
    """``--approved-by a,b --approved-by c`` and ``$APPROVED_BY``: one list of handles."""
    return tuple(h for v in values for h in v.replace(",", " ").split() if h)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["rules"]:
        if argv[1:]:
            sys.stderr.write(
                escape_line(f"{PROG}: error: 'rules' takes no arguments, got {argv[1]!r}") + "\n"
            )
            return EXIT_ERROR
        sys.stdout.write(render_rules())
        return 0
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.list_rules:
        sys.stdout.write(render_rules())
        return 0
    # git walks the working tree (and the base tip's tree, where the dialect's
    # sources are looked for) on another core while Python imports the engine.
    from gate.git import early

    early.start(args.repo, worktree=args.head is None, base=None if args.dialect else args.base)
    try:
        return _run(args)
    finally:
        early.discard()  # what the run did not collect (it failed, or never asked)


def _run(args: argparse.Namespace) -> int:
    """One run from parsed arguments: the report printed, the exit code returned."""
    if _gc_tuned:  # the command (entry), not a host program: see gate._dataclass_code
        _dataclass_code.install()
    from gate.model import ContractErrors, GateError

    try:
        from gate.engine import run

        freeze_imports()
        settings = settings_from_args(args)
        try:
            report = run(settings)
        except ContractErrors as exc:
            _refuse(exc, args.format, args.output)
            return EXIT_ERROR
        text = _render(report, args.format)
        _write_output(args.output, text)
        sys.stdout.write(text)
        return report.exit_code
    except GateError as exc:
        message = str(exc)
        if message.startswith("not a git repository") and args.repo == ".":
            message += " (run the gate inside your repository, or pass --repo DIR)"
        # Errors quote names from the pull request: one line, nothing it can forge.
        sys.stderr.write(escape_line(f"{PROG}: error: {message}") + "\n")
        return EXIT_ERROR
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130
    except Exception as exc:  # fail closed: an internal error must not pass the check
        if args.debug:
            traceback.print_exc()
        sys.stderr.write(
            escape_line(
                f"{PROG}: internal error: {type(exc).__name__}: {exc} "
                "(re-run with --debug and report it)"
            )
            + "\n"
        )
        return EXIT_ERROR


def _render(report: Report, fmt: str) -> str:
    """The report in ``fmt``; a SARIF log cut to code scanning's limits says so on stderr."""
    if fmt != "sarif":
        from gate.report import RENDERERS

        return RENDERERS[fmt](report)
    from gate.report import sarif

    rendered = sarif.bounded(report)
    if rendered.cut:
        sys.stderr.write(escape_line(f"{PROG}: warning: {rendered.cut}") + "\n")
    return rendered.text


def _write_output(path: str | None, text: str) -> None:
    if path:
        try:
            Path(path).write_text(text, encoding="utf-8")
        except OSError as exc:
            from gate.model import UsageError

            raise UsageError(f"cannot write --output {path}: {exc.strerror}") from None


def _refuse(exc: ContractErrors, fmt: str, output: str | None) -> None:
    """Every refused contract file: one line each on stderr, then the count.

    The chosen format also gets the refusal (JSON's error object with
    ``errors``, annotations on the lines, a Markdown table) on stdout and in
    ``--output``, so a pipeline reading either never finds a stale or empty
    report; text goes to stderr only (and to ``--output``), as before.
    """
    from gate.report import refused

    errors = exc.errors
    rendered = refused.render(errors, fmt, PROG)
    try:
        _write_output(output, rendered)
    finally:
        if fmt != "text":
            sys.stdout.write(rendered)
        sys.stderr.write("".join(line + "\n" for line in refused.text_lines(errors, PROG)))


def exit_now(code: int) -> NoReturn:
    """End the process without tearing its heap down, object by object.

    After a large run that teardown alone took ~40 ms, longer than git's whole
    diff. By now the run has closed what it opened (the git reader, the worker
    pool), so flushing the streams is all that is left. A run with live threads
    or PySpark loaded (py4j stops the JVM from an atexit hook), or whose output
    cannot be flushed, exits the ordinary way.
    """
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        raise SystemExit(code) from None  # Python reports the broken pipe as usual
    if "pyspark" in sys.modules or threading.active_count() > 1:
        raise SystemExit(code)
    os._exit(code)


def tune_gc() -> None:
    """Collect cyclic garbage less often in a short-lived run, and never the imports.

    A run allocates hundreds of thousands of small objects (YAML nodes, SQL
    syntax trees), so the default thresholds collected about 120 times per
    100-contract PR, each time walking the modules imported at start-up too:
    ~30 ms of a 0.65 s run. Freezing what is alive after the imports takes it
    out of every later collection (and out of the workers' collections, which
    would otherwise copy the pages they walk); a larger first threshold keeps
    collections rare but still bounds the memory of large runs, whose syntax
    trees are cyclic. Only the command does this: a host program that imports
    the gate as a library keeps its own collector settings.
    """
    global _gc_tuned
    gc.freeze()
    gc.set_threshold(_GC_THRESHOLD, 20, 20)
    _gc_tuned = True


def freeze_imports() -> None:
    """After tune_gc, freeze the modules imported since (the engine is imported lazily)."""
    if _gc_tuned:
        gc.freeze()


#: Whether tune_gc ran (the command, not a host program): the engine, imported
#: lazily after it, is frozen too.
_gc_tuned = False

#: Allocations between two young-generation collections (Python's default: 700-2,000).
_GC_THRESHOLD = 50_000


def entry() -> NoReturn:
    """The console script and ``python -m gate``."""
    tune_gc()
    code = main()
    _dataclass_code.save()  # only if a dataclass was compiled that the table lacked
    exit_now(code)


if __name__ == "__main__":  # pragma: no cover
    entry()
