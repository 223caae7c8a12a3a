"""Validation of experiment points."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from testbed.point import Point, describe_error, load_point


def test_defaults_and_topology_counts():
    p = Point.model_validate(
        {"client_machines": 3, "instances_per_client": 2, "threads": 1, "virtual_clients": 8,
         "middlewares": 2, "servers": 3}
    )  # fmt: skip
    assert p.clients_total == 48
    assert p.frontends == 2
    assert p.caps_mbit.server == 100 and p.caps_mbit.client == 200
    assert p.caps_mbit.middleware == 800
    assert Point(servers=2).frontends == 2


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"workload": {"ratio": "1/2"}}, "ratio must be 'S:G'"),
        ({"servers": 0}, "greater than or equal to 1"),
        ({"servers": 2, "middleware": {"replication": 3}}, "exceeds servers"),
        ({"hosts": "ssh"}, "needs an inventory"),
        ({"driver": "wrk"}, "driver"),
        ({"threds": 2}, "threds"),
    ],
)
def test_bad_points_say_what_is_wrong(spec, message):
    with pytest.raises(ValidationError, match=message):
        Point.model_validate(spec)


def test_replication_all_means_every_server(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("servers: 3\nmiddleware: {replication: all}\n")
    assert load_point(f).middleware.replication is None
    assert load_point(f, {"middleware.replication": 2}).middleware.replication == 2


def test_unreadable_point_file(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("- a list\n")
    with pytest.raises(ValueError, match="must hold a mapping"):
        load_point(f)


def test_errors_are_described_on_one_line_with_their_fields():
    with pytest.raises(ValidationError) as info:
        Point.model_validate({"servers": 0, "workload": {"ratio": "3"}})
    text = describe_error(info.value)
    assert "\n" not in text
    assert text.startswith("servers: Input should be greater than or equal to 1; ")
    assert "workload.ratio: ratio must be 'S:G'" in text


def test_design_is_2018_unless_asked_and_yaml_numbers_are_accepted(tmp_path):
    assert Point().middleware.design == "2018"
    f = tmp_path / "p.yaml"
    f.write_text("servers: 3\nmiddleware: {design: 2016, workers: 24}\n")
    point = load_point(f)
    assert point.middleware.design == "2016"
    # run.json records the point as a mapping: the design is kept as the flag's string.
    assert point.model_dump(mode="json")["middleware"]["design"] == "2016"
    with pytest.raises(ValidationError, match=r"middleware\.design"):
        Point.model_validate({"middleware": {"design": 2017}})


def test_a_simplemq_point_checks_its_connections():
    """Workers over every middleware (or direct clients) must fit max_connections with the
    harness's own few; a point states one database."""
    with pytest.raises(ValueError) as err:
        Point(system="simplemq", middlewares=2, queue={"workers": 60, "max_connections": 100})
    assert "2 middlewares x 60 workers need 120" in describe_error(err.value)
    with pytest.raises(ValueError) as err:
        Point(system="simplemq", virtual_clients=100, queue={"max_connections": 100})
    assert "100 direct clients need 100" in describe_error(err.value)
    with pytest.raises(ValueError) as err:
        Point(system="simplemq", servers=2)
    assert "one database server" in describe_error(err.value)
    with pytest.raises(ValueError) as err:
        Point(queue={"workers": 4})
    assert "system: simplemq" in describe_error(err.value)
    with pytest.raises(ValueError) as err:
        Point(system="simplemq", middlewares=1, middleware={"workers": 30})
    assert "SimpleMQ's are queue.workers" in describe_error(err.value)
    # PostgreSQL's commit_delay goes up to 100 ms.
    with pytest.raises(ValueError) as err:
        Point(system="simplemq", queue={"commit_delay_ms": 120})
    assert "queue.commit_delay_ms: Input should be less than or equal to 100" in describe_error(
        err.value
    )
    ok = Point(system="simplemq", middlewares=2, queue={"workers": 30, "commit_delay_ms": 20})
    assert ok.db_max_connections == 2 * 30 + 4
    # A point's dump is a valid point again (point.yaml, run.json).
    assert Point.model_validate(ok.model_dump(mode="json")) == ok
    # The azure profile runs them on VMs: ssh hosts from an inventory.
    remote = Point(system="simplemq", hosts="ssh", inventory="inventory-2015.yaml")
    assert Point.model_validate(remote.model_dump(mode="json")) == remote


def test_a_memcached_point_dumps_as_before():
    """point.yaml and run.json of memcached points carry no SimpleMQ fields."""
    dumped = Point(middlewares=1).model_dump(mode="json")
    assert "system" not in dumped and "queue" not in dumped
    assert Point.model_validate(dumped) == Point(middlewares=1)
