"""The environment switches (RAMIEL_BIND, RAMIEL_ADAPT_THREADS, RAMIEL_COMPILE, RAMIEL_OMP,
RAMIEL_MALLOC) all read their values through ramiel.envflags.switch_on."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest

from ramiel import envflags, omp
from ramiel.runtime import binding, contention


@pytest.mark.parametrize("value", ["0", "false", "No", " OFF ", "FALSE"])
def test_off_values_turn_the_switch_off(value: str) -> None:
    assert envflags.switch_on("RAMIEL_X", {"RAMIEL_X": value}) is False
    assert binding.enabled({binding.ENV_DISABLE: value}) is False
    assert contention.enabled({contention.ENV_DISABLE: value}) is False
    env = {omp.ENV_DISABLE: value}
    assert omp.configure(env) == {} and env == {omp.ENV_DISABLE: value}


@pytest.mark.parametrize("value", [None, "", "1", "true", "Yes", " on "])
def test_on_values_and_unset_leave_it_on_silently(value: str | None) -> None:
    env = {} if value is None else {"RAMIEL_X": value}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert envflags.switch_on("RAMIEL_X", env) is True
        assert contention.enabled({} if value is None else {contention.ENV_DISABLE: value})


def test_an_odd_value_is_on_with_one_warning_naming_it() -> None:
    env = {"RAMIEL_ODD_TEST": "maybe"}
    with pytest.warns(RuntimeWarning, match=r"RAMIEL_ODD_TEST='maybe'.*taken as on"):
        assert envflags.switch_on("RAMIEL_ODD_TEST", env) is True
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the same name and value warn once
        assert envflags.switch_on("RAMIEL_ODD_TEST", env) is True
    with pytest.warns(RuntimeWarning, match="RAMIEL_ODD_TEST='2'"):
        assert envflags.switch_on("RAMIEL_ODD_TEST", {"RAMIEL_ODD_TEST": "2"}) is True
    with pytest.warns(RuntimeWarning, match=contention.ENV_DISABLE):
        assert contention.enabled({contention.ENV_DISABLE: "perhaps"}) is True


_WORKER_SCRIPT = """
import sys

import torch

sys.path.insert(0, {bench!r})
from start_cost import _programs  # two clusters of one op each (relu, sigmoid)

from ramiel.runtime import start

if __name__ == "__main__":
    two, _ = _programs()
    with start(two, None, backend="processes", threads_per_worker=1) as runner:
        out = runner.run({{"x": torch.ones(2, 3)}})
    print("ok", float(out["y0"].sum()))
"""


def test_the_warning_comes_once_not_once_per_worker(tmp_path) -> None:
    """A program on the processes backend (bench/start_cost.py's two clusters) with an odd
    switch value: its two worker processes inherit the variable, and only the program's own
    process warns (a fresh-user check saw the warning once per worker, then, with the first
    fix, none in a user's own multiprocessing worker)."""
    script = tmp_path / "two_workers.py"
    bench = os.path.join(os.path.dirname(__file__), "..", "bench")
    script.write_text(_WORKER_SCRIPT.format(bench=os.path.abspath(bench)))
    env = dict(os.environ, RAMIEL_BIND="maybe", RAMIEL_MALLOC="maybe", PYTHONWARNINGS="default")
    env.pop(envflags.WARNED_ENV, None)
    proc = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert "ok 6.0" in proc.stdout
    for name in ("RAMIEL_BIND", "RAMIEL_MALLOC"):
        assert proc.stderr.count(f"{name}='maybe'") == 1, proc.stderr


def test_every_switch_is_in_the_list() -> None:
    """check_switches reads them all: every module's ENV_DISABLE is in SWITCHES."""
    from ramiel.passes import compile_segments
    from ramiel.runtime import compiled, memory

    names = {m.ENV_DISABLE for m in (binding, contention, compiled, memory, omp, compile_segments)}
    assert names == set(envflags.SWITCHES)


_POOL_SCRIPT = """
import multiprocessing


def work(_):
    from ramiel import envflags
    return envflags.switch_on("RAMIEL_BIND")


if __name__ == "__main__":
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(1) as pool:
        print("ok", pool.map(work, [0]))
"""


def test_a_users_own_worker_process_warns(tmp_path) -> None:
    """A program of the user's reads the switches in a multiprocessing worker of its own (its
    main process never imports Ramiel): that worker warns."""
    script = tmp_path / "pool.py"
    script.write_text(_POOL_SCRIPT)
    env = dict(os.environ, RAMIEL_BIND="maybe", PYTHONWARNINGS="default")
    env.pop(envflags.WARNED_ENV, None)
    proc = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and "ok [True]" in proc.stdout, proc.stderr
    assert proc.stderr.count("RAMIEL_BIND='maybe'") == 1, proc.stderr


def test_torchrun_ranks_but_rank_0_take_the_values_as_warned(monkeypatch) -> None:
    monkeypatch.delenv(envflags.WARNED_ENV, raising=False)
    monkeypatch.setenv("RAMIEL_COMPILE", "sure")
    monkeypatch.setattr(envflags, "_warned", set())
    envflags.check_switches(warn=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert envflags.switch_on("RAMIEL_COMPILE") is True
