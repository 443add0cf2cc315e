"""calculate_cost (spec ai.md §4, acceptance check 6)."""

import pytest

from apex_ai.cost import calculate_cost
from apex_ai.types import CostTier, Model, ModelCost, Usage


def _model(tiers: list[CostTier] | None = None) -> Model:
    return Model(
        id="m",
        api="anthropic-messages",
        provider="anthropic",
        cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75, tiers=tiers),
    )


def test_one_million_input_tokens_at_three_dollars() -> None:
    usage = Usage(input=1_000_000)
    cost = calculate_cost(_model(), usage)
    assert cost.input == 3.0
    assert cost.total == 3.0


def test_mutates_and_returns_usage_cost() -> None:
    usage = Usage(input=10, output=20)
    cost = calculate_cost(_model(), usage)
    assert cost is usage.cost
    assert usage.cost.output == pytest.approx(20 * 15e-6)


def test_one_hour_cache_writes_cost_twice_the_input_rate() -> None:
    usage = Usage(cache_write=1000, cache_write_1h=400)
    cost = calculate_cost(_model(), usage)
    assert cost.cache_write == pytest.approx(600 * 3.75e-6 + 400 * 6e-6)
    assert cost.total == pytest.approx(cost.cache_write)


def test_all_parts_sum_to_total() -> None:
    usage = Usage(input=1000, output=500, cache_read=2000, cache_write=300)
    cost = calculate_cost(_model(), usage)
    assert cost.input == pytest.approx(1000 * 3e-6)
    assert cost.output == pytest.approx(500 * 15e-6)
    assert cost.cache_read == pytest.approx(2000 * 0.3e-6)
    assert cost.cache_write == pytest.approx(300 * 3.75e-6)
    assert cost.total == pytest.approx(cost.input + cost.output + cost.cache_read + cost.cache_write)


def test_tier_applies_only_above_its_threshold() -> None:
    tier = CostTier(input_tokens_above=200_000, input=6, output=22.5, cache_read=0.6, cache_write=7.5)
    model = _model([tier])
    at_threshold = calculate_cost(model, Usage(input=150_000, cache_read=50_000, output=1000))
    assert at_threshold.input == pytest.approx(150_000 * 3e-6)
    assert at_threshold.output == pytest.approx(1000 * 15e-6)
    above = calculate_cost(model, Usage(input=150_000, cache_read=50_001, output=1000))
    # The tier prices the whole request, not only the tokens above the threshold.
    assert above.input == pytest.approx(150_000 * 6e-6)
    assert above.cache_read == pytest.approx(50_001 * 0.6e-6)
    assert above.output == pytest.approx(1000 * 22.5e-6)


def test_highest_matching_tier_wins() -> None:
    low = CostTier(input_tokens_above=100, input=10, output=10)
    high = CostTier(input_tokens_above=1000, input=20, output=20)
    model = _model([high, low])
    assert calculate_cost(model, Usage(input=500)).input == pytest.approx(500 * 10e-6)
    assert calculate_cost(model, Usage(input=5000)).input == pytest.approx(5000 * 20e-6)


def test_recomputing_after_an_update_replaces_the_old_cost() -> None:
    model = _model()
    usage = Usage(input=100)
    calculate_cost(model, usage)
    usage.output = 100
    cost = calculate_cost(model, usage)
    assert cost.total == pytest.approx(100 * 3e-6 + 100 * 15e-6)
