"""``ramiel profile`` on a noisy machine: ops whose times spread are timed again, the least
spread timing is kept, and the run's noise is recorded and warned about (ramiel.profiler)."""

from __future__ import annotations

import json

from conftest import ZOO_MODELS

from ramiel import profiler
from ramiel.profiler import NOISY_SPREAD, RETRIES, ProfileNoise, profile_model

SQUEEZENET = ZOO_MODELS["light_squeezenet"]


def test_spread_is_the_interquartile_range_over_the_median():
    assert profiler._spread([10.0, 10.0, 10.0, 10.0]) == 0.0
    # sorted [8, 10, 12, 100]: q1 = 10, median = 12, q3 = 100
    assert profiler._spread([100.0, 8.0, 12.0, 10.0]) == (100.0 - 10.0) / 12.0


def test_warning_only_when_untrustworthy():
    assert ProfileNoise(ops=50, retimed=3, noisy=1, other_cores=0.1).warning() is None
    busy = ProfileNoise(ops=50, retimed=3, noisy=1, other_cores=1.6).warning()
    assert busy is not None and "other processes kept 1.60 cores busy" in busy
    spread = ProfileNoise(ops=50, retimed=20, noisy=12, other_cores=0.0).warning()
    assert spread is not None and "12 of 50 ops" in spread and "profile again" in spread


def test_noisy_ops_are_timed_again_and_the_tight_timing_kept(tmp_path, monkeypatch):
    real = profiler._time_op
    calls = [0]

    def flaky(node, args, em, counts, repeat):  # type: ignore[no-untyped-def]
        times = real(node, args, em, counts, repeat)
        calls[0] += 1
        if calls[0] % 2 == 1:  # every op's first timing: one run 100x slower (a busy core)
            return {n: [t * 100.0] + ts[1:] for n, ts in times.items() for t in ts[:1]}
        return {n: [min(ts)] * len(ts) for n, ts in times.items()}  # its retiming: steady

    monkeypatch.setattr(profiler, "_time_op", flaky)
    db = tmp_path / "prof.json"
    noise = ProfileNoise()
    n = profile_model(SQUEEZENET, str(db), repeat=4, threads=[1], noise=noise)
    assert n == noise.ops > 0
    assert noise.noisy == 0  # every op's retiming was steady
    assert 0 < noise.retimed <= n
    assert calls[0] == 2 * noise.retimed  # each op timed twice: noisy, then steady
    assert RETRIES >= 1
    meta = json.loads(db.read_text())["meta"]
    assert meta["retimed_ops"] == noise.retimed and meta["noisy_ops"] == 0
    assert "other_cores" in meta


def test_steady_timings_are_not_retimed(tmp_path, monkeypatch):
    def steady(node, args, em, counts, repeat):  # type: ignore[no-untyped-def]
        return {n: [5.0] * repeat for n in counts}

    monkeypatch.setattr(profiler, "_time_op", steady)
    noise = ProfileNoise()
    profile_model(SQUEEZENET, str(tmp_path / "p.json"), repeat=3, threads=[1], noise=noise)
    assert noise.retimed == 0 and noise.noisy == 0
    times = json.loads((tmp_path / "p.json").read_text())["times_us"]
    assert set(times.values()) == {5.0}
    assert NOISY_SPREAD > 0
