"""Constant tensors in the IR: inline ``dense<...>`` or external ``dense_resource<key>``.

Small constants (at most :data:`INLINE_LIMIT` elements) and splats (all elements equal, e.g. the
ConstantOfShape weights of the zoo models) are printed inline. Larger tensors are stored in a
safetensors file next to the IR and referenced by key::

    module attributes {onnx.opset = 9 : i64, ramiel.weights = "model.safetensors"} {
      %w = "onnx.Constant"() <{value = dense_resource<conv1_w_0> : tensor<64x3x7x7xf32>}> ...

The ``ramiel.weights`` path is relative to the directory of the IR file (or absolute). No
module-level state says which directory or caches a file: a :class:`WeightStores` (one per tool
run or compilation, held by the xDSL context :class:`ramiel.context.RamielContext` that the tools
make) carries the directory and owns the open stores, and passes get it from their ``ctx``. The
directory is carried, not written into the IR as an absolute path when the IR is read, so the IR
a tool prints names the file as its input did (relative paths stay relative and the output stays
byte-identical). A constant's value is read through the store explicitly
(:func:`constant_value`).

Weights are read lazily with ``safetensors`` (memory-mapped, never unpickled). Element types
numpy has only through ``ml_dtypes`` (bfloat16, the float8 types) keep their safetensors dtype
tags (``BF16``, ``F8_E4M3``, ``F8_E4M3FNUZ``, ``F8_E5M2``, ``F8_E5M2FNUZ``, ``F8_E8M0``), so the
files are read by ``safetensors.torch`` (the generated code) as the right torch dtypes.
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
from collections.abc import Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import ml_dtypes
import numpy as np
import onnx.helper
from safetensors import safe_open
from safetensors.numpy import save_file
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    ModuleOp,
)
from xdsl.ir import Attribute

from ramiel.attrs import WEIGHTS_ATTR, get_str
from ramiel.dialects.onnx import tensor_type
from ramiel.dtypes import numpy_dtype_of
from ramiel.errors import RamielError
from ramiel.files import make_readable
from ramiel.naming import unique

INLINE_LIMIT = 16
"""Tensors with at most this many elements are printed inline as ``dense<...>``."""


def dense_from_numpy(arr: np.ndarray) -> DenseIntOrFPElementsAttr:
    """A ``dense<...>`` attribute holding ``arr`` (a splat is stored as a single element)."""
    arr = np.asarray(arr)
    arr = np.ascontiguousarray(arr).reshape(arr.shape)  # ascontiguousarray makes 0-d arrays 1-d
    onnx_dt = _onnx_dtype(arr.dtype)
    t = tensor_type(onnx_dt, arr.shape)
    flat = arr.reshape(-1)
    if flat.size > 1 and bool(np.all(flat == flat[0])) and not _has_nan(flat):
        flat = flat[:1]
    if arr.dtype == np.bool_:
        data = np.where(flat, 0xFF, 0).astype(np.uint8).tobytes()
    else:
        data = flat.tobytes()
    return DenseIntOrFPElementsAttr(t, BytesAttr(data))


def dense_splat(value: np.ndarray | np.generic, shape: Sequence[int]) -> DenseIntOrFPElementsAttr:
    """``dense<value> : tensor<shape x T>`` storing the single element ``value`` (dtype ``T``).

    Nothing of size ``prod(shape)`` is allocated, so a splat weight of any size stays compact.
    """
    scalar = np.asarray(value).reshape(-1)[:1]
    t = tensor_type(_onnx_dtype(scalar.dtype), shape)
    if math.prod(shape) == 0:
        return DenseIntOrFPElementsAttr(t, BytesAttr(b""))
    if scalar.dtype == np.bool_:
        data = np.where(scalar, 0xFF, 0).astype(np.uint8).tobytes()
    else:
        data = scalar.tobytes()
    return DenseIntOrFPElementsAttr(t, BytesAttr(data))


def splat_value(attr: DenseIntOrFPElementsAttr) -> np.ndarray | None:
    """The single element (0-d array) of a ``dense`` attribute stored as a splat, else ``None``.

    Only the compact form (one stored element for a shape of several) is detected; no data is
    scanned.
    """
    if math.prod(attr.get_shape()) <= 1:
        return None
    el = attr.get_element_type()
    dt = numpy_dtype_of(el)
    size = 1 if dt == np.bool_ else dt.itemsize
    if len(attr.data.data) != size:
        return None
    if dt == np.bool_:
        return np.array(attr.data.data[0] != 0)
    return np.frombuffer(attr.data.data, dt)[0].copy().reshape(())


def numpy_from_dense(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The value of a ``dense<...>`` attribute as a numpy array of its static shape.

    A splat comes back as a read-only ``np.broadcast_to`` view (copy it before writing).
    """
    el = attr.get_element_type()
    dt = numpy_dtype_of(el)
    shape = tuple(attr.get_shape())
    if dt == np.bool_:
        flat = np.frombuffer(attr.data.data, np.uint8) != 0
    else:
        flat = np.frombuffer(attr.data.data, dt)
    n = int(np.prod(shape)) if shape else 1
    if flat.size == 1 and n != 1:
        # A splat: a read-only broadcast view, so a huge splat weight costs no memory or time.
        return np.broadcast_to(flat[:1].reshape(()), shape)
    return flat.reshape(shape).copy()


def _has_nan(flat: np.ndarray) -> bool:
    return flat.dtype.kind == "f" and bool(np.isnan(flat[0]))


def _onnx_dtype(dt: np.dtype) -> int:
    return onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dt))


_KEY_RE = re.compile(r"[^A-Za-z0-9_$.]")


def resource_key(name: str, taken: set[str]) -> str:
    """A valid, unique ``dense_resource`` handle for an ONNX tensor ``name``."""
    base = _KEY_RE.sub("_", name) or "t"
    if not (base[0].isascii() and (base[0].isalpha() or base[0] == "_")):
        base = "t" + base  # a bare identifier starts with a letter or '_' (not 9, '$' or '.')
    return unique(base, taken)


class WeightStore:
    """The external weights of one module: a safetensors file, read lazily, plus new tensors.

    ``path`` may not exist yet (a store being written). New tensors (:meth:`add`: the importer's
    initializers, the results ``--constant-fold`` computes) stay in memory until :meth:`save`.
    Raises :class:`RamielError` when a key is missing or the file cannot be read.
    """

    def __init__(self, path: str | None):
        self.path = path
        self._pending: dict[str, np.ndarray] = {}
        self._cache: dict[str, np.ndarray] = {}
        self._stamp = _file_stamp(path)

    def keys(self) -> Iterator[str]:
        yield from self._pending
        if self.path and os.path.exists(self.path):
            with safe_open(self.path, "np") as f:
                yield from (k for k in f.keys() if k not in self._pending)  # noqa: SIM118

    def get(self, key: str) -> np.ndarray:
        if key in self._pending:
            return self._pending[key]
        if key not in self._cache:
            if not self.path or not os.path.exists(self.path):
                raise RamielError(
                    f"dense_resource<{key}>: weights file {self.path!r} not found "
                    f"(the module attribute {WEIGHTS_ATTR} names it, relative to the IR file)"
                )
            try:
                with safe_open(self.path, "np") as f:
                    dtype = f.get_slice(key).get_dtype()
                    if dtype in _ML_DTYPES_TAGS:
                        self._cache[key] = _read_raw(self.path, key, dtype)
                    else:
                        self._cache[key] = f.get_tensor(key)
            except Exception as e:  # safetensors raises several kinds
                raise RamielError(f"dense_resource<{key}>: cannot read {self.path}: {e}") from e
        return self._cache[key]

    def add(self, key: str, arr: np.ndarray) -> None:
        self._pending[key] = np.ascontiguousarray(arr)

    def new_keys(self) -> list[str]:
        """Keys of the tensors added since the last :meth:`save` (not in the file yet)."""
        return list(self._pending)

    def save(self, path: str | None = None) -> None:
        """Write every tensor (old and new) to ``path`` (default: this store's path).

        Raises :class:`RamielError` if the file cannot be written (a missing directory...).
        """
        path = path or self.path
        assert path is not None
        tensors = {k: self.get(k) for k in self.keys()}
        tmp = path + ".tmp"
        try:
            save_file(tensors, tmp)
            make_readable(tmp)  # safetensors writes 0600 whatever the umask
            os.replace(tmp, path)
        except Exception as e:  # safetensors' SafetensorError, OSError
            raise RamielError(f"cannot write weights file {path}: {e}") from None
        self.path = path
        self._cache.update(self._pending)
        self._pending.clear()
        self._stamp = _file_stamp(path)


def _file_stamp(path: str | None) -> tuple[int, int, int] | None:
    """(inode, size, modification time in ns) of ``path``, ``None`` if it does not exist: a file
    rewritten in place (a model imported again into the same directory) gets a new stamp."""
    try:
        st = os.stat(path) if path else None
    except OSError:
        return None
    return None if st is None else (st.st_ino, st.st_size, st.st_mtime_ns)


#: safetensors dtype tags whose numpy type exists only in ml_dtypes (safetensors' numpy loader
#: looks them up in numpy itself and fails): read from the file's bytes (:func:`_read_raw`).
_ML_DTYPES_TAGS = MappingProxyType(
    {
        "F8_E4M3": "float8_e4m3fn",
        "F8_E4M3FNUZ": "float8_e4m3fnuz",
        "F8_E5M2": "float8_e5m2",
        "F8_E5M2FNUZ": "float8_e5m2fnuz",
        "F8_E8M0": "float8_e8m0fnu",
    }
)


def _read_raw(path: str, key: str, tag: str) -> np.ndarray:
    """Tensor ``key`` of a safetensors file, of a dtype in :data:`_ML_DTYPES_TAGS`.

    The format: an 8-byte little-endian header length, a JSON header giving each tensor's dtype,
    shape and byte range in the data that follows (https://github.com/huggingface/safetensors).
    """
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        entry = json.loads(f.read(n))[key]
        begin, end = entry["data_offsets"]
        f.seek(8 + n + begin)
        data = f.read(end - begin)
    dt = np.dtype(getattr(ml_dtypes, _ML_DTYPES_TAGS[tag]))
    return np.frombuffer(data, dt).reshape(entry["shape"]).copy()


#: safetensors dtype tag of each numpy (ml_dtypes) element type name.
SAFETENSORS_TAGS = MappingProxyType(
    {
        "float64": "F64",
        "float32": "F32",
        "float16": "F16",
        "bfloat16": "BF16",
        "int64": "I64",
        "int32": "I32",
        "int16": "I16",
        "int8": "I8",
        "uint64": "U64",
        "uint32": "U32",
        "uint16": "U16",
        "uint8": "U8",
        "bool": "BOOL",
        **{v: k for k, v in _ML_DTYPES_TAGS.items()},
    }
)

_CHUNK = 1 << 20


def save_safetensors(
    tensors: Mapping[str, np.ndarray], path: str, metadata: Mapping[str, str] | None = None
) -> None:
    """Write ``tensors`` (name -> array, C order) as a safetensors file, streaming;
    ``metadata``: the header's ``__metadata__`` (string -> string), if any.

    The same format ``safetensors.torch.save_file`` writes (an 8-byte little-endian header
    length, a JSON header with each tensor's dtype, shape and byte range, the data; see
    https://github.com/huggingface/safetensors), without building the file in memory: an array
    is written from its own buffer, and a broadcast view of one element (a splat weight,
    :func:`numpy_from_dense`) is written in full from a 1 MiB chunk, so a 400 MB splat weight
    takes no 400 MB of memory. Raises ``OSError``/``ValueError`` (unknown element type).
    """
    header: dict[str, Any] = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    offset = 0
    for name, arr in tensors.items():
        tag = SAFETENSORS_TAGS.get(arr.dtype.name)
        if tag is None:
            raise ValueError(f"tensor {name!r}: no safetensors dtype for {arr.dtype.name}")
        n = int(arr.size) * arr.dtype.itemsize
        header[name] = {
            "dtype": tag,
            "shape": list(arr.shape),
            "data_offsets": [offset, offset + n],
        }
        offset += n
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data starts 8-byte aligned
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for arr in tensors.values():
            if arr.size == 0:
                continue
            if arr.strides == (0,) * arr.ndim and arr.size > 1:  # a broadcast single element
                one = np.ascontiguousarray(arr.reshape(-1)[:1]).view(np.uint8).tobytes()
                count = arr.size
                block = one * max(1, min(count, _CHUNK // len(one)))
                per = len(block) // len(one)
                while count:
                    k = min(count, per)
                    f.write(block[: k * len(one)])
                    count -= k
            else:
                data = np.ascontiguousarray(arr).reshape(-1)
                f.write(memoryview(data.view(np.uint8)))


#: numpy (ml_dtypes) element types torch has under the same name but cannot take from or give to
#: numpy: they cross as their bits (an integer type of the same size) and are reinterpreted.
_TORCH_BITS = MappingProxyType(
    {
        "bfloat16": np.int16,
        "float8_e4m3fn": np.uint8,
        "float8_e4m3fnuz": np.uint8,
        "float8_e5m2": np.uint8,
        "float8_e5m2fnuz": np.uint8,
        "float8_e8m0fnu": np.uint8,
    }
)


def torch_from_numpy(arr: np.ndarray) -> Any:
    """A torch tensor with the values and element type of ``arr`` (ml_dtypes types included);
    shares memory with ``arr`` where torch can (the caller copies if it must)."""
    import torch  # lazy: torch

    bits = _TORCH_BITS.get(arr.dtype.name)
    if bits is not None:
        return torch.from_numpy(arr.view(bits)).view(getattr(torch, arr.dtype.name))
    return torch.from_numpy(arr)


def numpy_from_torch(t: Any) -> np.ndarray:
    """A numpy array with the values and element type of CPU tensor ``t`` (bfloat16 and float8 as
    their ml_dtypes types)."""
    import torch  # lazy: torch

    t = t.detach()
    name = str(t.dtype).removeprefix("torch.")
    bits = _TORCH_BITS.get(name)
    if bits is not None:
        as_int = torch.int16 if bits is np.int16 else torch.uint8
        return t.contiguous().view(as_int).numpy().view(getattr(ml_dtypes, name))
    return t.numpy()


class WeightStores:
    """The weight stores of one session (a tool run, a compilation): weights file path -> store.

    ``base_dir``: the directory a relative ``ramiel.weights`` path is resolved against, the
    directory of the IR file being read (default: the current directory when it is made). An
    absolute path is used as it is. Each file has one :class:`WeightStore` per session, so the
    tensors a pass adds (``--constant-fold``) are seen by the later passes and the printer of the
    same session; another session (another directory, another run) never sees them. A store
    whose file was rewritten since it was opened (and that holds no unsaved tensors) is opened
    again, so a model imported again into the same path is never read from stale arrays.

    The sessions are owned by whoever reads the IR (:class:`ramiel.context.RamielContext` holds
    one; ``ramiel-opt`` and ``ramiel-translate`` make it for the input file's directory, ``ramiel
    compile`` for its output directory), as MLIR's ``MLIRContext`` owns the blobs its
    ``dense_resource`` attributes name: the IR and that explicit object decide every value, no
    module-level state does.
    """

    def __init__(self, base_dir: str | None = None):
        self.base_dir = os.path.abspath(base_dir if base_dir is not None else os.getcwd())
        self._stores: dict[str, WeightStore] = {}

    def path_of(self, module: ModuleOp) -> str | None:
        """The absolute, normalised path ``module``'s ``ramiel.weights`` names, or ``None``."""
        path = get_str(module, WEIGHTS_ATTR)
        if path is None:
            return None
        return os.path.normpath(os.path.join(self.base_dir, path))  # an absolute path stays

    def of(self, module: ModuleOp) -> WeightStore | None:
        """The store of ``module``'s weights file, ``None`` if the module names none (a rewrite
        keeps its new tensors inline then)."""
        path = self.path_of(module)
        if path is None:
            return None
        store = self._stores.get(path)
        if store is None or (not store.new_keys() and store._stamp != _file_stamp(path)):
            store = self._stores[path] = WeightStore(path)
        return store


def constant_value(attr: Attribute, store: WeightStore | None) -> np.ndarray | None:
    """The numpy value of a ``dense`` or ``dense_resource`` attribute (another attribute:
    ``None``); ``store``: the module's weights (:meth:`WeightStores.of`, ``None`` for a module
    that names no weights file). Raises :class:`RamielError` for a ``dense_resource`` without a
    store, a tensor the store lacks, or one whose size disagrees with the attribute's type."""
    if isinstance(attr, DenseIntOrFPElementsAttr):
        return numpy_from_dense(attr)
    if isinstance(attr, DenseResourceAttr):
        key = attr.resource_handle.data
        if store is None:
            raise RamielError(
                f"dense_resource<{key}>: the module names no weights file (module attribute "
                f"{WEIGHTS_ATTR})"
            )
        arr = np.asarray(store.get(key))
        el = attr.type.get_element_type()  # type: ignore[union-attr]
        shape = tuple(attr.type.get_shape())  # type: ignore[union-attr]
        if math.prod(shape) != arr.size:  # IR edited by hand: the type and the file disagree
            raise RamielError(
                f"dense_resource<{key}>: the IR declares {attr.type} but the weights file holds "
                f"{arr.size} element(s) of shape {list(arr.shape)}"
            )
        return np.asarray(arr, dtype=numpy_dtype_of(el)).reshape(shape)
    return None


def value_attr(
    arr: np.ndarray, key: str, store: WeightStore | None
) -> DenseIntOrFPElementsAttr | DenseResourceAttr:
    """Inline ``dense`` for small or splat tensors, else ``dense_resource<key>`` added to ``store``."""
    flat = arr.reshape(-1)
    splat = flat.size > 0 and bool(np.all(flat == flat[0]))
    if arr.size <= INLINE_LIMIT or splat or store is None:
        return dense_from_numpy(arr)
    store.add(key, arr)
    t = tensor_type(_onnx_dtype(arr.dtype), arr.shape)
    return DenseResourceAttr.from_params(key, t)
