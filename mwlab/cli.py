"""The `mwlab` command: one entry point whose subcommands live in testbed and analysis."""

from __future__ import annotations

import click

from analysis.cli import register as register_analysis
from testbed.cli import register as register_testbed
from testbed.provision_cli import provision_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option("1.0.0", prog_name="mwlab")
def main() -> None:
    """Run and analyse the memcached middleware performance study."""


register_testbed(main)
register_analysis(main)
main.add_command(provision_command)
