"""The command line: a thin layer over `memory_custodian.Memory`.

Every command is declared once in `table.py` (options, help, example, handler); `run.py` builds
the argparse parser of the one command being run from it and calls the handler, which opens the
Memory, calls one method and prints. Known errors become one line on stderr with their exit code.
"""

from .run import main, run

__all__ = ["main", "run"]
