"""The shared state of a batch: the budget and the per-provider rate limiter (clock injected)."""

from __future__ import annotations

from apex_coding_agent.batch import BatchControl


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_no_task_starts_once_stopped_or_once_the_money_is_spent() -> None:
    control = BatchControl(spent=0.25, max_cost=0.5)
    assert control.may_start() and not control.budget_reached()
    control.add_cost(0.25)
    assert control.spent() == 0.5 and control.budget_reached() and not control.may_start()
    unlimited = BatchControl()
    unlimited.add_cost(1e9)
    assert unlimited.may_start()
    unlimited.stop()
    assert unlimited.stopped() and not unlimited.may_start()


def test_a_429_pauses_every_worker_of_that_provider_and_halves_the_rate() -> None:
    clock = Clock()
    control = BatchControl(clock=clock)
    for _ in range(20):  # 20 requests in the last 10 s: 2 per second, unthrottled
        assert control.reserve("openai") == 0.0
        clock.now += 0.5
    control.throttled("openai", retry_after=3.0)
    assert control.rate("openai") == 1.0  # half of the 2 requests per second seen
    waits = [control.reserve("openai") for _ in range(4)]  # any worker, any number of times
    assert waits == [3.0] * 4, "nobody gets a slot during the pause"
    assert control.reserve("anthropic") == 0.0, "other providers are not slowed"
    clock.now += 3.0
    assert control.reserve("openai") == 0.0, "one request goes as soon as the pause ends"
    assert control.reserve("openai") == 1.0, "the next ones are paced at the new rate"
    clock.now += 1.0
    assert control.reserve("openai") == 0.0
    assert control.reserve("openai") == 1.0
    control.succeeded("openai")
    assert control.rate("openai") == 1.1, "each success lets the rate climb back"


def test_without_retry_after_the_pause_is_a_second_and_the_rate_never_reaches_zero() -> None:
    clock = Clock()
    control = BatchControl(clock=clock)
    control.throttled("p", retry_after=None)
    assert control.reserve("p") == 1.0
    clock.now += 1.0
    assert control.reserve("p") == 0.0
    for _ in range(30):
        control.throttled("p", retry_after=None)
    assert control.rate("p") == 0.05 and control.throttle_count("p") == 31
