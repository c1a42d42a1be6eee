"""`triangulate` command line: one dispatcher, one module per sub-command.

Sub-commands register themselves through ``add_parser(subparsers)`` and run through ``run(args)``:

- ``data``   -> :mod:`datasets_build.cli`   (build / generate / push Hub-ready datasets)
- ``eval``   -> :mod:`triangulation.cli.eval` (lm_eval's CLI with our task folder included)
- ``play``   -> :mod:`multiturn.cli`        (the multi-turn side runner)
- ``report`` -> :mod:`triangulation.cli.report` (correlations, plots, HTML)
- ``suite``  -> :mod:`triangulation.cli.suite` (models x tasks sweep of eval and play, then the report)
- ``score``  -> :mod:`triangulation.cli.score` (re-score stored episodes and samples with the current code)
- ``view``   -> :mod:`triangulation.cli.view`  (episode viewer: one HTML page per task)
- ``export`` -> :mod:`triangulation.cli.export` (Inspect AI ``.eval`` logs of runs)
- ``tasks-dir`` -> :mod:`triangulation.cli.tasks_dir` (our task folder, for ``lm_eval --include_path``)
- ``model-args`` -> :mod:`triangulation.cli.model_args` (the embedded SmolLM2's ``--model_args``)
"""

from __future__ import annotations

import argparse
import importlib
import sys
from importlib.metadata import PackageNotFoundError, version

from plumbing.errors import UserError
from plumbing.secrets import install_stream_scrubber, reveal_argv_secrets

SUBCOMMANDS: dict[str, str] = {
    "data": "datasets_build.cli",
    "eval": "triangulation.cli.eval",
    "play": "multiturn.cli",
    "report": "triangulation.cli.report",
    "suite": "triangulation.cli.suite",
    "score": "triangulation.cli.score",
    "view": "triangulation.cli.view",
    "probe": "triangulation.cli.probe",
    "export": "triangulation.cli.export",
    "tasks-dir": "triangulation.cli.tasks_dir",
    "model-args": "triangulation.cli.model_args",
}
#: one-line help of each sub-command, so ``triangulate --help`` imports none of them (they pull in
#: datasets, lm-eval, scipy and pandas: seconds of start-up)
SUMMARIES: dict[str, str] = {
    "data": "build, generate or push the Hub-ready datasets",
    "eval": "run lm-eval (same arguments as `lm_eval`) with the GlobalGroup and Connections tasks included",
    "play": "run multi-turn tests (n-back, WCST, LNT, clembench games, ...) on an lm-eval model",
    "report": "tables, Kendall correlations, plots and an HTML report over many models' results",
    "suite": "run a models x tasks suite (lm-eval and play tasks), resumable, then the report",
    "score": "recompute a run's metrics from its stored transcripts and samples with the current code (no model calls)",
    "view": "HTML pages of every episode and logged sample (conversations, parsed replies, scores)",
    "probe": "membership probe (Min-K%% Prob) of published items against their fresh twins (contamination)",
    "export": "write runs in other tools' formats (Inspect AI .eval logs: inspect view, samples_df)",
    "tasks-dir": 'print the lm-eval task folder, for lm_eval --include_path "$(triangulate tasks-dir)"',
    "model-args": 'print the embedded SmolLM2\'s --model_args, for lm_eval --model hf --model_args "$(triangulate model-args)"',
}


class OneLineErrorParser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line that names the help command (no usage block)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only ``command``'s module is imported (its full sub-parser), the others are listed."""
    parser = OneLineErrorParser(
        prog="triangulate",
        description="Abstract-reasoning and interactive evaluation on top of lm-evaluation-harness.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="{" + ",".join(SUBCOMMANDS) + "}")
    sub.required = True
    for name, module_name in SUBCOMMANDS.items():
        if name == command:
            importlib.import_module(module_name).add_parser(sub)
        else:
            sub.add_parser(name, help=SUMMARIES[name])
    _plain_help(parser)
    return parser


def _plain_help(parser: argparse.ArgumentParser) -> None:
    """Help texts as a terminal shows them: the docstrings' reST ````code```` marks become `code`."""
    if parser.description:
        parser.description = parser.description.replace("``", "`")
    for action in parser._actions:
        if action.help:
            action.help = action.help.replace("``", "`")
        for child in (getattr(action, "choices", None) or {}).values() if isinstance(action, argparse._SubParsersAction) else ():
            _plain_help(child)


def _version() -> str:
    """This package's version and the lm-eval it runs on (from the installed metadata; nothing imported)."""

    def of(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"

    return f"{of('triangulate')} (lm-eval {of('lm_eval')})"


def main(argv: list[str] | None = None) -> int:
    """Run one sub-command; everything it prints (its own lines, lm-eval's, tracebacks) goes through the
    secret scrubber (:mod:`plumbing.secrets`)."""
    previous = install_stream_scrubber()
    try:  # a suite's cells get their credentials through the environment, never argv (plumbing.secrets)
        return _main(reveal_argv_secrets(sys.argv[1:] if argv is None else argv))
    finally:
        sys.stdout, sys.stderr = previous


def _main(argv: list[str]) -> int:
    if argv and argv[0] == "eval":  # passed through untouched to lm_eval's own parser (imported by name, like the others)
        eval_cli = importlib.import_module(SUBCOMMANDS["eval"])
        return _guard(lambda: eval_cli.run_passthrough(argv[1:]))
    command = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(command if command in SUBCOMMANDS else None)
    args = parser.parse_args(argv)
    args.argv = argv  # the command line as typed (``play`` prints it as the command that resumes a run)
    return _guard(lambda: args.func(args))


def _guard(fn) -> int:
    try:
        code = fn()
    except UserError as exc:
        print(f"triangulate: error: {' '.join(str(exc).split())}", file=sys.stderr)  # always one line
        return 2
    except KeyboardInterrupt:
        print("triangulate: interrupted", file=sys.stderr)
        return 130
    return int(code or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
