"""Typed pass options: a pass option typed ``Literal[...]`` is checked when the pass is made, in
Python and from a pipeline spec, with one error that names the pass, the option and the values it
takes (``ramiel.passes.TypedOptions``); ``ramiel-opt --help`` lists those values."""

from __future__ import annotations

from typing import get_args

import pytest
from xdsl.utils.arg_spec import parse_pipeline

from ramiel.cost_model import TRANSFER_COST, Backend
from ramiel.errors import RamielError
from ramiel.layout import LAYOUT_MODES
from ramiel.passes import PASSES, TypedOptions, literal_options
from ramiel.tools.pass_help import pass_options

#: pass -> option -> its values; every Literal option of every registered pass is here.
EXPECTED = {
    "assign-layout": {"format": LAYOUT_MODES},
    "estimate-cost": {"backend": ("threads", "processes", "distributed")},
    "lower-to-torchpy": {"mode": ("auto", "sequential")},
}


def test_every_literal_option_is_known_and_checked() -> None:
    found = {}
    for name, factory in PASSES.items():
        cls = factory()
        options = literal_options(cls)
        if options:
            assert issubclass(cls, TypedOptions), f"{name} has Literal options but no checks"
            found[name] = options
    assert found == EXPECTED
    assert get_args(Backend) == tuple(TRANSFER_COST)  # the cost table covers every backend


@pytest.mark.parametrize("pass_name", sorted(EXPECTED))
def test_a_value_outside_the_literal_is_refused_in_python_and_in_a_spec(pass_name: str) -> None:
    cls = PASSES[pass_name]()
    for option, allowed in EXPECTED[pass_name].items():
        for value in allowed:  # each allowed value makes the pass, both ways
            assert getattr(cls(**{option: value}), option) == value
            (spec,) = parse_pipeline(f'{pass_name}{{{option.replace("_", "-")}="{value}"}}')
            assert getattr(cls.from_spec(spec), option) == value
        why = f"{pass_name}: option '{option}' must be one of {', '.join(allowed)}, not 'bogus'$"
        with pytest.raises(RamielError, match=why):
            cls(**{option: "bogus"})
        (spec,) = parse_pipeline(f"{pass_name}{{{option}=bogus}}")
        with pytest.raises(RamielError, match=why):
            cls.from_spec(spec)


def test_help_lists_the_values() -> None:
    options = {name: kind for name, kind, _ in pass_options(PASSES["assign-layout"]())}
    assert options["format"] == "auto|channels-last|nchw"
