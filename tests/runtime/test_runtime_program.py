"""Program validation, weights and shared arenas."""

from __future__ import annotations

import pytest
import torch

from ramiel.runtime import ChannelSpec, Program, ProgramError, Weights
from ramiel.runtime.program import check_inputs
from ramiel.runtime.weights import layout, pack_shared, unpack

F32 = torch.float32


def c0(ch, w):
    pass


def prog(channels, inputs=None, outputs=None, clusters=None) -> Program:
    return Program(
        name="p",
        clusters=clusters if clusters is not None else {"c0": c0, "c1": c0},
        channels=channels,
        inputs=inputs or {},
        outputs=outputs or {},
    )


def test_valid_program_and_helpers():
    p = prog(
        {
            "x__c0": ChannelSpec(None, "c0", (1, 3), F32),
            "x__c1": ChannelSpec(None, "c1", (1, 3), F32),
            "a__c0_c1": ChannelSpec("c0", "c1", [1, 3], F32),
            "y__out": ChannelSpec("c1", None, (), torch.int64),
        },
        inputs={"x": ["x__c0", "x__c1"]},
        outputs={"y": "y__out"},
    )
    p.validate()
    assert p.channels["a__c0_c1"].shape == (1, 3)  # lists become tuples
    assert p.channels["a__c0_c1"].nbytes == 12
    assert p.channels["y__out"].nbytes == 8
    assert p.channels_into("c1") == ["x__c1", "a__c0_c1"]
    assert p.channels_from("c0") == ["a__c0_c1"]
    assert p.cluster_order() == ["c0", "c1"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(channels={}, clusters={}), "has no cluster"),
        (dict(channels={}, clusters={"c0": 3}), "cluster 'c0' is not callable"),
        (dict(channels={"a": ChannelSpec("c0", "c9", (1,), F32)}), "dst 'c9' is not a cluster"),
        (dict(channels={"a": ChannelSpec(None, None, (1,), F32)}), "neither a sending nor"),
        (dict(channels={"a": ChannelSpec("c0", "c0", (1,), F32)}), "to itself"),
        (dict(channels={"a": ChannelSpec("c0", "c1", (-1,), F32)}), "negative dimension"),
        (dict(channels={"a": ChannelSpec("c0", "c1", (1,), "float32")}), "is not a torch.dtype"),
        (dict(channels={}, inputs={"x": ["nope"]}), "input 'x': unknown channel 'nope'"),
        (
            dict(channels={"a": ChannelSpec("c0", "c1", (1,), F32)}, inputs={"x": ["a"]}),
            "input 'x': channel 'a' is sent by 'c0'",
        ),
        (dict(channels={"a": ChannelSpec(None, "c1", (1,), F32)}), "no input lists it"),
        (dict(channels={"a": ChannelSpec("c0", None, (1,), F32)}), "no output lists it"),
        (
            dict(channels={"a": ChannelSpec("c0", "c1", (1,), F32)}, outputs={"y": "a"}),
            "output 'y': channel 'a' is received by 'c1'",
        ),
        (
            dict(
                channels={
                    "a": ChannelSpec(None, "c0", (1,), F32),
                    "b": ChannelSpec(None, "c1", (2,), F32),
                },
                inputs={"x": ["a", "b"]},
            ),
            r"channel 'b' is \(2,\) float32 but 'a' is \(1,\) float32",
        ),
    ],
)
def test_invalid_programs(kwargs, message):
    with pytest.raises(ProgramError, match=message):
        prog(**kwargs).validate()


@pytest.mark.parametrize("cores", [0, -2, 2.0, "8", True])
def test_invalid_cores(cores):
    p = prog({})
    p.cores = cores
    with pytest.raises(ProgramError, match=f"cores must be a positive int or None, got {cores!r}"):
        p.validate()


@pytest.mark.parametrize(
    ("cores", "usable", "clusters", "threads"),
    [
        (None, 16, 2, 1),  # unknown plan: one thread per worker, as before
        (8, 16, 2, 4),  # 8 cores planned, 2 clusters made: 4 threads each
        (8, 2, 2, 1),  # ... on a 2-core machine: the usable cores, shared
        (8, 6, 2, 3),
        (16, 16, 3, 5),  # shared evenly, rounded down
        (2, 16, 4, 1),  # more clusters than planned cores: at least 1
        (4, 4, 1, 4),
    ],
)
def test_planned_threads(cores, usable, clusters, threads, monkeypatch):
    monkeypatch.setattr("ramiel.runtime.program.usable_cores", lambda: usable)
    p = prog({}, clusters={f"c{i}": c0 for i in range(clusters)})
    p.cores = cores
    p.validate()
    assert p.planned_threads() == threads


def test_all_problems_reported_at_once():
    p = prog(
        {
            "a": ChannelSpec("c0", "c9", (1,), F32),
            "b": ChannelSpec(None, "c1", (1,), F32),
        }
    )
    with pytest.raises(ProgramError) as info:
        p.validate()
    assert "c9" in str(info.value) and "no input lists it" in str(info.value)
    assert isinstance(info.value, ValueError)


def test_bad_shape_type():
    with pytest.raises(ProgramError, match="tuple of ints"):
        ChannelSpec(None, "c0", ("a",), F32)


def test_check_inputs_without_consumers():
    p = prog({}, inputs={"unused": []})
    t = torch.ones(5)
    assert check_inputs(p, {"unused": t})["unused"] is t


def test_weights_access(tmp_path):
    w = Weights({"conv1_w": torch.ones(2, 3), "names": torch.zeros(1), "raw.name": torch.ones(1)})
    assert torch.equal(w.conv1_w, torch.ones(2, 3))
    assert torch.equal(w.names, torch.zeros(1))  # a weight wins over a method of the same name
    assert Weights.names(w) == ["conv1_w", "names", "raw.name"]
    assert torch.equal(w["raw.name"], torch.ones(1))
    assert "conv1_w" in w and len(w) == 3 and list(w) == ["conv1_w", "names", "raw.name"]
    with pytest.raises(AttributeError, match="no weight named 'conv2_w'"):
        _ = w.conv2_w
    with pytest.raises(KeyError, match="no weight named 'x'"):
        _ = w["x"]
    path = tmp_path / "w.safetensors"
    w.save_safetensors(path)
    w2 = Weights.from_safetensors(path)
    assert set(Weights.names(w2)) == set(Weights.names(w))
    assert torch.equal(w2.conv1_w, w.conv1_w)


def test_weights_rejects_bad_entries():
    with pytest.raises(ProgramError, match="not a torch.Tensor"):
        Weights({"a": [1.0]})
    with pytest.raises(ProgramError, match="invalid weight name"):
        Weights({"__dict__": torch.ones(1)})


def test_pack_shared_round_trip():
    tensors = {
        "a": torch.randn(3, 5),
        "b": torch.arange(7, dtype=torch.int64),
        "c": torch.tensor([True, False, True]),
        "d": torch.randn(4, 6).t(),  # not contiguous
        "e": torch.empty(0, 3, dtype=torch.float16),
        "f": torch.tensor(2.5, dtype=torch.float64),
    }
    arena, slots = pack_shared(Weights(tensors))
    assert arena.is_shared()
    assert all(s.offset % 64 == 0 for s in slots.values())
    w = unpack(arena, slots)
    for k, t in tensors.items():
        got = w[k]
        assert got.dtype == t.dtype and got.shape == t.shape
        assert torch.equal(got, t)
        assert got.untyped_storage().data_ptr() == arena.untyped_storage().data_ptr()


def test_layout_alignment():
    slots, total = layout({"a": ((3,), torch.uint8), "b": ((2, 2), torch.float64)}, start=10)
    assert slots["a"].offset == 64 and slots["b"].offset == 128
    assert total == 192


def test_fit_transfer_cost():
    from ramiel.runtime.calibrate import TransferCost, fit

    # round trip = 2 * 10 µs + 0.001 µs/byte * size, exactly
    rtts = {s: 20.0 + 1e-3 * s for s in (4, 4096, 65536, 1 << 20, 4 << 20)}
    cost = fit(rtts, small_bytes=4)
    assert cost.latency_us == pytest.approx(10.0, rel=1e-3)
    assert cost.us_per_byte == pytest.approx(1e-3, rel=1e-3)
    assert TransferCost(2.0, 0.5).cost_us(10) == 7.0


@pytest.mark.parametrize("backend", ["threads", "processes"])
def test_measure_transfer_cost_runs(backend):
    from ramiel.runtime.calibrate import measure_run_overhead, measure_transfer_cost

    cost = measure_transfer_cost(backend, sizes=(4, 1 << 16, 1 << 20), repeats=3)
    assert cost.latency_us >= 0 and cost.us_per_byte >= 0
    assert measure_run_overhead(backend, repeats=5) > 0
