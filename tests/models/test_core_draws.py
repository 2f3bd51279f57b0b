"""The typed core's random draws in C against numpy's, bit for bit.

The core seeds each attempt's streams itself (numpy's ``SeedSequence`` and ``PCG64`` seeding, written
in C) and draws through numpy's C distributions and numpy's own ``exp`` loop. Each draw the models
make is checked here against the Python call it replaces, on ``Task.rng``'s generator for many root
entropies (small, 128-bit, a list) and spawn keys (words above 2**32 included); how the draws are
rounded and ordered (``counts``, ``TurnDraws``) is held by the differential and golden tests. Where
the core is not built these skip.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from speedtrap.agents.task import AGENT_STREAM, REDO_STREAM, Task
from speedtrap.config.dist import LogNormal
from speedtrap.models.typed_core import core_module

CORE = core_module()
pytestmark = pytest.mark.skipif(CORE is None, reason="the typed core is not built or not in use here")

ENTROPIES: list[int | list[int]] = [0, 1, 7, 2**40 + 3, 2**127 + 12345, [1, 2, 3], 2**100 + 2**64 + 5]
KEYS = [(3, 0, 5, 0), (7, 9, 1234, 2), (4, 2**33, 1, 0), (8, 0, 0, 1)]
N = 300


def numpy_stream(entropy: int | list[int], key: tuple[int, ...]) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=key)))


DRAWS: dict[str, tuple[float, float, Callable[[np.random.Generator], np.ndarray]]] = {
    "normal": (0.0, 0.0, lambda g: g.standard_normal(N)),
    "random": (0.0, 0.0, lambda g: g.random(N)),
    "exponential": (3.5, 0.0, lambda g: np.array([g.exponential(3.5) for _ in range(N)])),
    "lognormal": (0.3, 1.5, lambda g: g.lognormal(0.3, 1.5, N)),
    "geometric": (0.25, 0.0, lambda g: g.geometric(0.25, N).astype(float)),
    "geometric_search": (0.5, 0.0, lambda g: g.geometric(0.5, N).astype(float)),
    "lognormal_spec": (213.0, 1.0, lambda g: LogNormal(median=213.0, sigma=1.0).sample(g, N)),
    "exp": (0.0, 0.0, lambda g: np.array([np.exp(g.standard_normal()) for _ in range(N)])),
}


@pytest.mark.parametrize("entropy", ENTROPIES, ids=str)
@pytest.mark.parametrize("key", KEYS, ids=str)
@pytest.mark.parametrize("kind", sorted(DRAWS))
def test_each_stream_and_distribution_is_numpys(
    entropy: int | list[int], key: tuple[int, ...], kind: str
) -> None:
    a, b, reference = DRAWS[kind]
    name = kind.removesuffix("_search")
    assert CORE is not None
    got = CORE._draws_for_test(entropy, (), *key, name, N, a, b)
    assert np.array_equal(got, reference(numpy_stream(entropy, key)))


def test_a_root_spawn_key_goes_between_the_stream_tag_and_the_task() -> None:
    assert CORE is not None
    got = CORE._draws_for_test(11, (2, 3), AGENT_STREAM, 1, 4, 0, "normal", N)
    assert np.array_equal(got, numpy_stream(11, (AGENT_STREAM, 2, 3, 1, 4, 0)).standard_normal(N))


def test_the_streams_are_task_rng() -> None:
    root = np.random.SeedSequence(2**90 + 17)
    task = Task(
        developer=3,
        index=41,
        difficulty="x",
        base_turns=1,
        initial_context_tokens=0,
        prompt_s=1.0,
        u_fail=(0.5,),
        u_detect=(0.5,),
        u_hand=(0.5,),
        review_factor=(1.0,),
        diagnose_s=(1.0,),
        hand_fix_s=1.0,
        rework_s=1.0,
        escape_delay_s=1.0,
        seed_entropy=root.entropy,  # type: ignore[arg-type]
        seed_key=(3, 41),
    )
    assert CORE is not None
    for stream in (AGENT_STREAM, REDO_STREAM):
        got = CORE._draws_for_test(root.entropy, (), stream, 3, 41, 1, "random", N)
        assert np.array_equal(got, task.rng(stream, 1).random(N))


def test_numpys_exp_loop_is_taken_not_the_c_librarys() -> None:
    """On machines with AVX-512 numpy's float64 exp differs from the C library's in the last bit for a
    few percent of arguments; the core's draws must be numpy's (here over 100k arguments)."""
    assert CORE is not None
    got = CORE._draws_for_test(5, (), 1, 2, 3, 4, "exp", 100_000)
    z = numpy_stream(5, (1, 2, 3, 4)).standard_normal(100_000)
    assert np.array_equal(got, np.exp(z))
