"""Queueing closed forms the serving pool is validated against (pure functions, no Mesa).

Rates are per second, times in seconds. Sources: Erlang C and M/M/c waiting times (Kleinrock,
*Queueing Systems* Vol. 1, §3.5; Gross & Harris, *Fundamentals of Queueing Theory*, §2.3);
M/M/1 processor sharing (Kleinrock Vol. 2, §4.4); non-preemptive priority M/M/c with
identical exponential service (Cobham 1954; Gross & Harris §3.4); Little's law (Little 1961).
"""

from __future__ import annotations

from collections.abc import Sequence


def _check_rates(arrival_rate_per_s: float, service_rate_per_s: float) -> None:
    if not arrival_rate_per_s >= 0:
        raise ValueError(f"arrival_rate_per_s must be >= 0, got {arrival_rate_per_s}")
    if not service_rate_per_s > 0:
        raise ValueError(f"service_rate_per_s must be > 0, got {service_rate_per_s}")


def erlang_b(servers: int, offered_load: float) -> float:
    """Erlang B blocking probability for ``servers`` servers and offered load ``a = λ/μ``.

    Computed by the stable recursion B(0) = 1, B(k) = a·B(k−1) / (k + a·B(k−1)).
    """
    if servers < 1:
        raise ValueError(f"servers must be at least 1, got {servers}")
    if not offered_load >= 0:
        raise ValueError(f"offered_load must be >= 0, got {offered_load}")
    b = 1.0
    for k in range(1, servers + 1):
        b = offered_load * b / (k + offered_load * b)
    return b


def erlang_c(servers: int, offered_load: float) -> float:
    """Erlang C: probability that an arrival to an M/M/c queue waits (``a = λ/μ < c``)."""
    if not offered_load < servers:
        raise ValueError(f"unstable queue: offered load {offered_load} >= {servers} servers")
    b = erlang_b(servers, offered_load)
    return servers * b / (servers - offered_load * (1.0 - b))


def mmc_mean_wait_s(arrival_rate_per_s: float, service_rate_per_s: float, servers: int) -> float:
    """Mean time in queue Wq of an M/M/c queue: C(c, a) / (cμ − λ)."""
    _check_rates(arrival_rate_per_s, service_rate_per_s)
    c_wait = erlang_c(servers, arrival_rate_per_s / service_rate_per_s)
    return c_wait / (servers * service_rate_per_s - arrival_rate_per_s)


def mmc_mean_sojourn_s(arrival_rate_per_s: float, service_rate_per_s: float, servers: int) -> float:
    """Mean time in system W of an M/M/c queue: Wq + 1/μ."""
    return mmc_mean_wait_s(arrival_rate_per_s, service_rate_per_s, servers) + 1.0 / service_rate_per_s


def mm1_ps_mean_sojourn_s(arrival_rate_per_s: float, service_rate_per_s: float) -> float:
    """Mean sojourn of an M/M/1 processor-sharing queue: 1/(μ − λ).

    Also holds for M/G/1-PS with mean service 1/μ (insensitivity).
    """
    _check_rates(arrival_rate_per_s, service_rate_per_s)
    if not arrival_rate_per_s < service_rate_per_s:
        raise ValueError(f"unstable queue: λ = {arrival_rate_per_s} >= μ = {service_rate_per_s}")
    return 1.0 / (service_rate_per_s - arrival_rate_per_s)


def priority_mmc_mean_wait_s(
    arrival_rates_per_s: Sequence[float], service_rate_per_s: float, servers: int
) -> list[float]:
    """Mean queue wait per class of a non-preemptive priority M/M/c queue (highest class first).

    All classes share one exponential service rate μ:
    ``Wq_k = C(c, a) / (cμ) / ((1 − σ_{k−1})(1 − σ_k))`` with ``σ_k = Σ_{i≤k} λ_i / (cμ)`` and
    ``a = Σ λ_i / μ``. The λ-weighted mean over classes equals the M/M/c ``Wq`` (conservation).
    """
    if not arrival_rates_per_s:
        raise ValueError("arrival_rates_per_s must name at least one class")
    for lam in arrival_rates_per_s:
        _check_rates(lam, service_rate_per_s)
    total = sum(arrival_rates_per_s)
    capacity = servers * service_rate_per_s
    residual = erlang_c(servers, total / service_rate_per_s) / capacity
    waits = []
    sigma_prev = 0.0
    for lam in arrival_rates_per_s:
        sigma = sigma_prev + lam / capacity
        waits.append(residual / ((1.0 - sigma_prev) * (1.0 - sigma)))
        sigma_prev = sigma
    return waits


def littles_law_number(arrival_rate_per_s: float, mean_time_s: float) -> float:
    """Little's law: mean number in a system L = λ·W."""
    if not arrival_rate_per_s >= 0 or not mean_time_s >= 0:
        raise ValueError(f"need λ >= 0 and W >= 0, got {arrival_rate_per_s} and {mean_time_s}")
    return arrival_rate_per_s * mean_time_s


__all__ = [
    "erlang_b",
    "erlang_c",
    "littles_law_number",
    "mm1_ps_mean_sojourn_s",
    "mmc_mean_sojourn_s",
    "mmc_mean_wait_s",
    "priority_mmc_mean_wait_s",
]
