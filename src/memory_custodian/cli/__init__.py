"""The command line: a thin layer over `memory_custodian.Memory`.

Every command is declared once in `table.py` (options, help, example, handler); `run.py` reads the
arguments of the one command being run from it (`argv.py`; argparse for help and mistakes) and
calls the handler, which opens the Memory, calls one method and prints. Known errors become one line
on stderr with their exit code.
"""

from .run import main, run

__all__ = ["main", "run"]
