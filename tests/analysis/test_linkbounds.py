"""Per-machine bounds from link capacities (analysis.models.linkbounds), in seed 004's
Table 1 form."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from analysis.linkload import Sizes
from analysis.models import linkbounds


def test_bounds_are_capacity_over_message_size_for_the_messages_a_role_sends() -> None:
    sizes = Sizes(key=12, data=4096)
    table = linkbounds.message_bounds({"server": 101.0, "client": 201.0}, sizes)
    by = table.set_index(["role", "message"])["bound_ops"]
    # The study's Table 1: 101 Mbit/s of server upload, 4132-byte GET replies -> ~3055/s.
    assert by[("server", "get_reply")] == pytest.approx(101e6 / 8 / sizes.get_reply(1))
    assert by[("client", "set_request")] == pytest.approx(201e6 / 8 / 4131)
    assert set(table[table["role"] == "server"]["message"]) == {"set_reply", "get_reply"}
    assert ("client", "get_reply") not in by.index


def test_middleware_sends_all_four_messages() -> None:
    table = linkbounds.message_bounds({"middleware": 800.0}, Sizes(key=12, data=4096))
    assert list(table["message"]) == list(linkbounds.MESSAGES)


@pytest.mark.parametrize("cap", [0.0, -1.0, math.nan])
def test_a_missing_capacity_is_an_error(cap: float) -> None:
    with pytest.raises(ValueError, match="capacity of server"):
        linkbounds.message_bounds({"server": cap}, Sizes(key=12, data=4096))


def test_an_unknown_role_is_an_error() -> None:
    with pytest.raises(ValueError, match="unknown roles"):
        linkbounds.message_bounds({"proxy": 10.0}, Sizes(key=12, data=4096))


def test_measured_capacity_is_the_median_of_the_measured_values() -> None:
    points = pd.DataFrame({"link_server_mbit": [4.9, 5.0, 1.0, None]})
    assert linkbounds.measured_capacity(points, "server") == pytest.approx(4.9)
    assert math.isnan(linkbounds.measured_capacity(points, "middleware"))


def test_bound_of_one_message_size() -> None:
    # The study's server: 101 Mbit/s over 4132-byte GET replies.
    assert linkbounds.bound_ops(101.0, 4132) == pytest.approx(3055.42, abs=0.01)
    with pytest.raises(ValueError, match="positive size"):
        linkbounds.bound_ops(101.0, 0)
