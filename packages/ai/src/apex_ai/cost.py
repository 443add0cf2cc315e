"""Request pricing: token counts times the model's USD-per-million rates."""

from __future__ import annotations

from apex_ai.types import Cost, CostTier, Model, ModelCost, Usage

_PER_TOKEN = 1_000_000


def _rates(cost: ModelCost, prompt_tokens: int) -> ModelCost | CostTier:
    """The rates that price a request whose prompt (input + cache read + cache write) has `prompt_tokens`.

    Tiered models price the whole request at the tier with the highest threshold below the prompt size,
    not just the tokens above the threshold.
    """
    best: CostTier | None = None
    for tier in cost.tiers or []:
        if tier.input_tokens_above < prompt_tokens and (
            best is None or tier.input_tokens_above > best.input_tokens_above
        ):
            best = tier
    return best if best is not None else cost


def calculate_cost(model: Model, usage: Usage) -> Cost:
    """Recompute `usage.cost` from the token counts and `model.cost`; mutates and returns `usage.cost`.

    Cache writes with one-hour retention (`cache_write_1h`, a part of `cache_write`) are billed at twice
    the input rate; the rest of `cache_write` at the cache-write rate. Call it again after every usage update.
    """
    rates = _rates(model.cost, usage.input + usage.cache_read + usage.cache_write)
    long_writes = usage.cache_write_1h or 0
    short_writes = usage.cache_write - long_writes
    cost = usage.cost
    cost.input = usage.input * rates.input / _PER_TOKEN
    cost.output = usage.output * rates.output / _PER_TOKEN
    cost.cache_read = usage.cache_read * rates.cache_read / _PER_TOKEN
    cost.cache_write = (short_writes * rates.cache_write + long_writes * 2 * rates.input) / _PER_TOKEN
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write
    return cost


__all__ = ["calculate_cost"]
