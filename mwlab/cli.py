"""The `mwlab` command: one entry point whose subcommands live in testbed and analysis."""

from __future__ import annotations

import click

from testbed.cli import register as register_testbed


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option("1.0.0", prog_name="mwlab")
def main() -> None:
    """Run and analyse the memcached middleware performance study."""


register_testbed(main)
