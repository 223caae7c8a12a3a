"""`python -m mwlab`: the signal handlers come first, so none is lost while the rest loads."""

from testbed.signals import Interrupted, install_raising

install_raising()
try:
    from mwlab.cli import main
except Interrupted as e:
    raise SystemExit(e.exit_code) from None

main()
