import sys


def main():
    # Hooks run on every prompt: `hook` skips loading the click CLI (see agents/hooks.py).
    args = sys.argv[1:]
    if args[:1] == ["hook"] and not {"-h", "--help"} & set(args):
        from .agents.hooks import main as hook_main

        sys.exit(hook_main(args[1:]))
    # `read` runs at every session start: it too skips click unless it needs usage help (curated/fastread.py).
    if args[:1] == ["read"]:
        from .curated.fastread import main as read_main

        code = read_main(args[1:])
        if code is not None:
            sys.exit(code)
    # `remember` and `recall` run in loops from agents and scripts: they skip click too (ledger/fastcli.py).
    if args[:1] in (["remember"], ["recall"]):
        from .ledger.fastcli import main as ledger_main

        code = ledger_main(args)
        if code is not None:
            sys.exit(code)
    from .cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
