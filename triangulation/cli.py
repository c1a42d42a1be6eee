"""`triangulate` command line: one dispatcher, one module per sub-command.

Sub-commands register themselves through ``add_parser(subparsers)`` and run through ``run(args)``:

- ``data``   -> :mod:`datasets_build.cli`   (build / generate / push Hub-ready datasets)
- ``eval``   -> :mod:`triangulation.eval_cli` (lm_eval's CLI with our task folder included)
- ``play``   -> :mod:`multiturn.cli`        (the multi-turn side runner)
- ``report`` -> :mod:`triangulation.report_cli` (correlations, plots, HTML)
"""

from __future__ import annotations

import argparse
import importlib
import sys

from triangulation.errors import UserError

SUBCOMMANDS: dict[str, str] = {
    "data": "datasets_build.cli",
    "eval": "triangulation.eval_cli",
    "play": "multiturn.cli",
    "report": "triangulation.report_cli",
}


class OneLineErrorParser(argparse.ArgumentParser):
    """argparse, but a usage mistake is one line that names the help command (no usage block)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineErrorParser(
        prog="triangulate",
        description="Abstract-reasoning and interactive evaluation on top of lm-evaluation-harness.",
    )
    sub = parser.add_subparsers(dest="command", metavar="{" + ",".join(SUBCOMMANDS) + "}")
    sub.required = True
    for name, module_name in SUBCOMMANDS.items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:  # a sub-command not built yet must not break the others
            if exc.name and module_name.startswith(exc.name):
                continue
            raise
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "eval":  # passed through untouched to lm_eval's own parser
        from triangulation import eval_cli

        return _guard(lambda: eval_cli.run_passthrough(argv[1:]))
    parser = build_parser()
    args = parser.parse_args(argv)
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
