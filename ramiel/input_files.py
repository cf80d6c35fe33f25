"""Graph inputs a user gives in a file (``ramiel run --inputs FILE``): the inputs a model is
meant for, where Ramiel's random ones would not do (token ids a model shifts into a table,
an integer it divides by, a mask with a meaning).

Formats, told apart by the file's name and contents:

- ``.safetensors``: one tensor per graph input, named after it (what a generated ``model.py``
  takes with ``--inputs`` and writes with ``--outputs``);
- ``.npz`` (``numpy.savez``): one array per graph input, named after it;
- ``.pb``: one ONNX ``TensorProto`` (``onnx.save_tensor``), for a model with one input, or
  named after the input it is (its ``name`` field);
- a directory: an ONNX test data set (``test_data_set_0/`` beside the model in the ONNX model
  zoo and ONNX's backend tests): ``input_0.pb``, ``input_1.pb``, ..., each a ``TensorProto``
  for the graph input of its name, or, where it names none, of its position, or else the first
  input still without a tensor.

Source: the ONNX test data layout of ``onnx/backend/test/data`` (``onnx.backend.test.loader``);
safetensors' and numpy's ``.npz`` formats.
"""

from __future__ import annotations

import os
import re
import zipfile
from collections.abc import Mapping, Sequence

import numpy as np
import torch

from ramiel.errors import RamielError
from ramiel.files import file_head, input_file, is_safetensors, printable
from ramiel.weights import torch_from_numpy

__all__ = ["InputsFile", "declared_bindings", "expected_outputs", "read_inputs"]

_DATA_SET_INPUT = re.compile(r"input_(\d+)\.pb")
_DATA_SET_OUTPUT = re.compile(r"output_(\d+)\.pb")

#: Bytes one inputs file (or data set) may hold: what one machine's memory can (see
#: ``ramiel.errors.MAX_TENSOR_BYTES`` for the largest tensor).
_MAX_BYTES = 2**40


class InputsFile:
    """The tensors of an inputs file, by graph input name (:func:`read_inputs`).

    ``tensors``: name -> CPU tensor, in the graph's input order; ``ignored``: the names of
    tensors in the file that are no graph input (a caller notes them: a misspelt name next to
    a right one would otherwise pass unnoticed); ``path``: the file, as given."""

    def __init__(self, path: str, tensors: dict[str, torch.Tensor], ignored: list[str]):
        self.path = path
        self.tensors = tensors
        self.ignored = ignored

    def check(self, specs: Mapping[str, tuple[Sequence[int], torch.dtype]]) -> None:
        """Raise :class:`~ramiel.errors.RamielError` where a tensor's shape or dtype is not what
        the compiled program takes (``specs``: name -> (shape, dtype), the program's
        ``input_specs``), naming the input, what the file has and what the program takes; or
        where the program takes an input the file has no tensor for."""
        for name, (shape, dtype) in specs.items():
            t = self.tensors.get(name)
            if t is None:
                have = ", ".join(map(printable, self.tensors)) or "none"
                raise RamielError(
                    f"inputs file {printable(self.path)}: the compiled program takes an input "
                    f"'{printable(name)}' that the file has no tensor for (it has {have})"
                )
            if tuple(t.shape) != tuple(shape) or t.dtype != dtype:
                raise RamielError(
                    f"inputs file {printable(self.path)}: input '{printable(name)}' is "
                    f"{_describe(tuple(t.shape), t.dtype)} there; the compiled program takes "
                    f"{_describe(tuple(shape), dtype)}"
                )


def read_inputs(path: str, names: Sequence[str]) -> InputsFile:
    """The graph inputs ``names`` (in order) from the file or test data set ``path`` (formats:
    see the module docstring), as CPU tensors of the file's shapes and types.

    Raises:
        RamielError: the path is missing, unreadable, a FIFO or device, of no known format or
            corrupt; a graph input has no tensor in it (naming those it has); a ``.pb`` of a
            model with several inputs names none of them; a tensor of a type torch has not
            (a string tensor).
    """
    shown = printable(path)
    if os.path.isdir(path):
        found, ignored = _data_set(path, names)
    else:
        input_file(path, "inputs file", max_bytes=_MAX_BYTES)
        head = file_head(path, 2) or b""  # a zip (.npz) starts "PK"
        if path.endswith(".npz") or head.startswith(b"PK"):
            found = _npz(path)
        elif is_safetensors(path):
            found = _safetensors(path)
        elif path.endswith(".pb"):
            name, value = _tensor_proto(path)
            if name not in names and len(names) == 1:  # unnamed, or named otherwise: the one
                name = names[0]
            found = {name: value}
            if name not in names:
                what = f"a tensor named '{printable(name)}'" if name else "one unnamed tensor"
                raise RamielError(
                    f"inputs file {shown}: {what}, and the model has "
                    f"{len(names)} inputs ({', '.join(map(printable, names))}); give a "
                    "directory of input_0.pb, input_1.pb, ... or a .safetensors or .npz file "
                    "of named tensors"
                )
        else:
            raise RamielError(
                f"inputs file {shown}: not a .safetensors, .npz or ONNX TensorProto (.pb) file, "
                "nor a directory of input_0.pb, input_1.pb, ..."
            )
        ignored = sorted(n for n in found if n not in names)
    missing = [n for n in names if n not in found]
    if missing:
        have = ", ".join(map(printable, sorted(n for n in found if n in names))) or "none"
        left = f"; left over: {', '.join(map(printable, ignored))}" if ignored else ""
        raise RamielError(
            f"inputs file {shown}: no tensor for input(s) {', '.join(map(printable, missing))} "
            f"(it has {have}{left})"
        )
    return InputsFile(path, {n: found[n] for n in names}, ignored)


def declared_bindings(
    declared: Mapping[str, Sequence[int | str | None] | None],
    inputs: InputsFile,
    bound: Mapping[str, Sequence[int]],
    dtypes: Mapping[str, torch.dtype] | None = None,
) -> dict[str, tuple[int, ...]]:
    """``--input-shape`` bindings that compile the program for the file's tensors: the file's
    shape for every input whose declared shape (``declared``: name -> dims, a symbol (``str``,
    ONNX's ``dim_param``) or ``None`` for a dimension without a fixed size; ``None`` for no shape
    at all) has a dimension without a fixed size and that ``bound`` (the user's own
    ``--input-shape``) does not bind.

    Raises:
        RamielError: before anything compiles, for a tensor whose rank, or one of whose fixed
            sizes, is not the declared one; whose type is not the input's in ``dtypes`` (name ->
            declared type); whose shape is not the one ``bound`` gives it; or whose size for a
            symbol is not the size another tensor has for it (one symbol is one size).
    """
    out: dict[str, tuple[int, ...]] = {}
    symbols: dict[str, tuple[int, str]] = {}  # symbol -> (size, the input that has it)
    where = f"inputs file {printable(inputs.path)}"
    for name, t in inputs.tensors.items():
        if name in bound and tuple(bound[name]) != tuple(t.shape):
            raise RamielError(
                f"{where}: input '{printable(name)}' has shape {tuple(t.shape)} there; "
                f"--input-shape binds it to {tuple(bound[name])}"
            )
        dims = declared.get(name)
        shape = tuple(t.shape)
        want_type = (dtypes or {}).get(name)
        if want_type is not None and t.dtype != want_type:
            raise RamielError(
                f"inputs file {printable(inputs.path)}: input '{printable(name)}' is "
                f"{_type_name(t.dtype)} there; the model declares {_type_name(want_type)}"
            )
        if dims is not None and (
            len(dims) != len(shape)
            or any(isinstance(d, int) and d != s for d, s in zip(dims, shape, strict=True))
        ):
            want = "(" + ", ".join(str(d) if isinstance(d, int) else "?" for d in dims) + ")"
            raise RamielError(
                f"{where}: input '{printable(name)}' has shape {shape} there; the model "
                f"declares {want} ('?': any size)"
            )
        for d, size in zip(dims or (), shape, strict=False):
            if isinstance(d, str) and d:
                first = symbols.setdefault(d, (size, name))
                if first[0] != size:
                    raise RamielError(
                        f"{where}: dimension '{printable(d)}' is {first[0]} in input "
                        f"'{printable(first[1])}' and {size} in input '{printable(name)}'; the "
                        "model names one size by it"
                    )
        if name not in bound and (dims is None or any(not isinstance(d, int) for d in dims)):
            out[name] = shape
    return out


def _describe(shape: tuple[int, ...], dtype: torch.dtype) -> str:
    return f"{_type_name(dtype)} of shape {shape}"


def _type_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _safetensors(path: str) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file  # lazy: safetensors

    try:
        return load_file(path, device="cpu")
    except Exception as e:  # noqa: BLE001 - safetensors raises several types for a bad file
        raise RamielError(
            f"inputs file {printable(path)}: not a readable safetensors file ({e})"
        ) from None


def _npz(path: str) -> dict[str, torch.Tensor]:
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
        raise RamielError(
            f"inputs file {printable(path)}: not a readable .npz file ({e})"
        ) from None
    return {k: _tensor(path, k, a) for k, a in arrays.items()}


def _tensor_proto(path: str) -> tuple[str, torch.Tensor]:
    import onnx  # lazy: onnx
    from onnx import numpy_helper  # lazy: onnx

    try:
        proto = onnx.load_tensor(path)
        array = numpy_helper.to_array(proto)
    except Exception as e:  # noqa: BLE001 - protobuf's DecodeError and onnx's own
        raise RamielError(
            f"inputs file {printable(path)}: not a readable ONNX TensorProto ({e})"
        ) from None
    return proto.name, _tensor(path, proto.name or "the tensor", array)


def expected_outputs(path: str, names: Sequence[str]) -> dict[str, torch.Tensor]:
    """The outputs an ONNX test data set directory ``path`` gives for its inputs (its
    ``output_<i>.pb``, the reference results), by graph output name (``names``, in order),
    matched as :func:`read_inputs` matches inputs; empty for a file, or a data set without
    outputs.

    Raises:
        RamielError: an ``output_<i>.pb`` that is not a readable TensorProto, or of a type torch
            has not.
    """
    if not os.path.isdir(path):
        return {}
    found, _ignored = _data_set(path, names, _DATA_SET_OUTPUT)
    return {n: found[n] for n in names if n in found}


def _data_set(
    path: str, names: Sequence[str], pattern: re.Pattern[str] = _DATA_SET_INPUT
) -> tuple[dict[str, torch.Tensor], list[str]]:
    """The ``input_<i>.pb`` files (``pattern``: or ``output_<i>.pb``) of an ONNX test data set
    directory, by graph input (output) name."""
    try:
        entries = os.listdir(path)
    except OSError as e:
        raise RamielError(f"inputs directory {printable(path)}: {e.strerror or e}") from None
    files = sorted((int(m.group(1)), f) for f in entries if (m := pattern.fullmatch(f)))
    if not files and pattern is _DATA_SET_OUTPUT:
        return {}, []
    if not files:
        raise RamielError(
            f"inputs directory {printable(path)}: no input_0.pb, input_1.pb, ... in it (an "
            "ONNX test data set); give a .safetensors, .npz or .pb file instead"
        )
    found: dict[str, torch.Tensor] = {}
    unmatched: list[tuple[int, str, str, torch.Tensor]] = []
    for index, f in files:
        name, value = _tensor_proto(input_file(os.path.join(path, f), "inputs file"))
        if name in names and name not in found:
            found[name] = value
        else:  # unnamed, or named otherwise (or twice): the input of its position, if free
            unmatched.append((index, f, name, value))
    rest = []
    for index, f, name, value in unmatched:
        if index < len(names) and names[index] not in found:
            found[names[index]] = value
        else:
            rest.append((f, name, value))
    free = [n for n in names if n not in found]  # then the inputs left free, in order
    for n, (_f, _name, value) in zip(free, rest, strict=False):
        found[n] = value
    ignored = [f"{f} ({printable(name)})" if name else f for f, name, _ in rest[len(free) :]]
    return found, ignored


def _tensor(path: str, name: str, array: np.ndarray) -> torch.Tensor:
    """``array`` as a CPU tensor of its own (a copy: the file's buffer may be read-only), in
    the machine's byte order (an ``.npz`` may hold big-endian ``>f4``)."""
    if array.dtype.byteorder not in ("=", "|"):
        array = array.astype(array.dtype.newbyteorder("="))
    try:  # bfloat16 and the float8 types (ml_dtypes arrays) as their bits
        return torch_from_numpy(np.array(array, copy=True))
    except TypeError as e:
        raise RamielError(
            f"inputs file {printable(path)}: tensor {printable(name)} of type {array.dtype} "
            f"has no torch type ({e})"
        ) from None
