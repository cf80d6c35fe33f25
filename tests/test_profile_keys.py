"""``ramiel profile`` times the ops ``ramiel compile`` costs: the profiler runs the compiler's
graph rewrites first, so a Conv that took a BatchNormalization (``--fold-into-weights`` gives it a
bias) is in the database under the key the compile looks up (ramiel.profiler,
ramiel.pipeline.profile_passes)."""

from __future__ import annotations

import json

import pytest
from conftest import ZOO_MODELS

from ramiel import profiler
from ramiel.compiler import CompileOptions, compile_model
from ramiel.profiler import profile_model

INCEPTION_V2 = ZOO_MODELS["light_inception_v2"]  # 69 Conv + BatchNormalization pairs
MISSING = "not in the profile database"


@pytest.fixture
def steady(monkeypatch):
    """Every op takes 5 µs: what is tested is which ops are timed, not how long they take."""

    def time_op(node, args, em, counts, repeat):  # type: ignore[no-untyped-def]
        return {n: [5.0] * repeat for n in counts}

    monkeypatch.setattr(profiler, "_time_op", time_op)


def _compile_warnings(tmp_path, db, capsys, **options) -> str:
    capsys.readouterr()
    compile_model(INCEPTION_V2, str(tmp_path / "out"), CompileOptions(profile=str(db), **options))
    return capsys.readouterr().err


def test_profile_has_every_op_the_default_compile_costs(tmp_path, steady, capsys):
    db = tmp_path / "p.json"
    n = profile_model(INCEPTION_V2, str(db), repeat=2, threads=[1])
    times = json.loads(db.read_text())["times_us"]
    assert not any(k.startswith("BatchNormalization(") for k in times)  # folded before timing
    # a key lists the operand types: X, W and the folded-in bias B
    assert any(k.startswith("Conv(") and k.split("{")[0].count("tensor<") == 3 for k in times)
    assert n > 0
    assert MISSING not in _compile_warnings(tmp_path, db, capsys)


def test_profile_without_rewrites_matches_a_compile_without_them(tmp_path, steady, capsys):
    db = tmp_path / "p.json"
    profile_model(INCEPTION_V2, str(db), repeat=2, threads=[1], rewrites=())
    times = json.loads(db.read_text())["times_us"]
    assert any(k.startswith("BatchNormalization(") for k in times)
    assert MISSING not in _compile_warnings(tmp_path, db, capsys, disable=("all",))
    # the keys differ: the default compile (BatchNormalization folded) finds its Convs missing
    assert MISSING in _compile_warnings(tmp_path, db, capsys)


def test_ramiel_profile_takes_the_compile_rewrite_options(tmp_path, steady, capsys):
    """`ramiel profile --no-fold-into-weights` then `ramiel compile --no-fold-into-weights
    --profile`: no op missing; the default compile then misses the folded Convs."""
    from ramiel.tools.driver import main

    db = tmp_path / "p.json"
    argv = [INCEPTION_V2, "--threads", "1", "--repeat", "2", "--no-fold-into-weights"]
    assert main(["profile", *argv, "-o", str(db)]) == 0
    out = tmp_path / "out"
    capsys.readouterr()
    compile_argv = ["compile", INCEPTION_V2, "-o", str(out), "--profile", str(db)]
    assert main([*compile_argv, "--no-fold-into-weights"]) == 0
    assert MISSING not in capsys.readouterr().err
    assert main(compile_argv) == 0
    assert MISSING in capsys.readouterr().err
