"""CompileOptions are checked before any work: one clear error naming the option, and nothing
written (the output directory is not created)."""

from __future__ import annotations

import os

import pytest
from conftest import ZOO_MODELS

from ramiel.compiler import CompileOptions, compile_model
from ramiel.errors import RamielError


@pytest.mark.parametrize(
    "options, message",
    [
        (CompileOptions(backend="foo"), r"CompileOptions\.backend must be one of threads, "),
        (CompileOptions(backend="inline"), r"backend must be one of .*not 'inline'"),
        (CompileOptions(layout="nhwc"), r"CompileOptions\.layout must be one of auto, "),
        (
            CompileOptions(clusters=0),
            r"CompileOptions\.clusters must be an int of at least 1, not 0",
        ),
        (CompileOptions(threads_per_worker=0), r"threads_per_worker must be an int of at least 1"),
        (CompileOptions(batch=-2), r"CompileOptions\.batch must be an int of at least 1, not -2"),
        (CompileOptions(cores=0), r"CompileOptions\.cores must be an int of at least 1"),
        (CompileOptions(clusters=True), r"CompileOptions\.clusters must be an int .*, not True"),
        (CompileOptions(disable=["no-such-pass"]), r"unknown rewrite\(s\) to disable: no-such"),
    ],
)
def test_bad_option_is_one_error_before_any_work(tmp_path, options, message):
    out = tmp_path / "out"
    with pytest.raises(RamielError, match=message):
        compile_model(ZOO_MODELS["light_squeezenet"], str(out), options)
    assert not os.path.exists(out)


def test_good_options_pass_the_check():
    for backend in ("threads", "processes", "distributed"):
        for layout in ("auto", "channels-last", "nchw"):
            CompileOptions(backend=backend, layout=layout, clusters=2, cores=2).check()
    CompileOptions().check()
