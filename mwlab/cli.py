"""The `mwlab` command: one entry point whose subcommands live in testbed, analysis and soak."""

from __future__ import annotations

import sys

import click

from analysis.cli import register as register_analysis
from analysis.stability import check_run_dir
from mwlab.measure import dataset_group, measure_command, paper_command
from mwlab.provision_cli import provision_command
from soak.chaos import chaos_command
from soak.mqsoak import mq_group
from testbed.cli import Frontend
from testbed.cli import register as register_testbed
from testbed.preflight_cli import preflight_command
from testbed.signals import Interrupted, install_raising


@click.group(
    context_settings={
        "help_option_names": ["-h", "--help"],
        "obj": Frontend(stability=check_run_dir),
    }
)
@click.version_option("1.0.0", prog_name="mwlab")
def cli() -> None:
    """Run and analyse the memcached middleware performance study."""


register_testbed(cli)
register_analysis(cli)
cli.add_command(provision_command)
cli.add_command(preflight_command)
cli.add_command(chaos_command)
cli.add_command(measure_command)
cli.add_command(paper_command)
cli.add_command(dataset_group)
cli.add_command(mq_group)


def main() -> None:
    """The `mwlab` command. SIGINT, SIGTERM and SIGHUP stop it with 128 + the signal's number
    whatever dispositions it inherited; `mwlab run` records them instead (see its help)."""
    install_raising()
    try:
        cli()
    except Interrupted as e:
        click.echo(f"mwlab: {e}", err=True)
        sys.exit(e.exit_code)
