"""The environment switches (RAMIEL_BIND, RAMIEL_ADAPT_THREADS, RAMIEL_COMPILE, RAMIEL_OMP,
RAMIEL_MALLOC) all read their values through ramiel.envflags.switch_on."""

from __future__ import annotations

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
