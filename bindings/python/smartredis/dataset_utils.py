"""DatasetConverter: SmartRedis's description of a Dataset's tensors as xarray DataArrays.

add_metadata_for_xarray records, in the dataset's metadata, which tensors are data variables,
which metadata fields name their dimensions and attributes, and which other variables are their
coordinates; transform_to_xarray builds the DataArrays from a dataset so described (typically one
fetched with Client.get_dataset). The metadata layout is SmartRedis's, so a dataset described by
either library converts in the other:

- `_xarray_data_names`: one string per variable (coordinates included);
- `_xarray_{name}_dim_names`, `_xarray_{name}_coord_names`, `_xarray_{name}_attr_names`: the
  variable's dimension fields, coordinate variables and attribute fields, joined by commas, or
  "null" for none. A dimension field holds the dimension's name, an attribute field its value
  (both strings: add them with Dataset.add_meta_string).

Only transform_to_xarray needs xarray (Debian: python3-xarray); without it, it raises
RedisRuntimeError saying so. The module attribute `xr` is the xarray module once imported; set to
None, it makes transform_to_xarray behave as without xarray (as in SmartRedis).
"""

import typing as t

from smartredis.dataset import Dataset
from smartredis.error import RedisKeyError, RedisRuntimeError
from smartredis.util import typecheck

__all__ = ["DatasetConverter"]

_DATA_NAMES = "_xarray_data_names"
_NONE = "null"


def _names_argument(names, argument: str, optional: bool = False) -> t.List[str]:
    """A name or list of names as a list; TypeError for other types, RedisRuntimeError for an
    empty name or one with a comma (the separator of the stored lists)."""
    if names is None and optional:
        return []
    if isinstance(names, str):
        names = [names]
    typecheck(names, argument, list)
    for name in names:
        typecheck(name, f"an element of {argument}", str)
        if not name or "," in name:
            raise RedisRuntimeError(f"{argument}: {name!r} is not a valid name (it must be "
                                    "non-empty and hold no comma)")
    return names


def _stored_names(dataset: Dataset, variable: str, kind: str) -> t.List[str]:
    """The `kind` ("dim", "coord" or "attr") names recorded for `variable` ([] for "null")."""
    field = f"_xarray_{variable}_{kind}_names"
    if field not in dataset.get_metadata_field_names():
        raise RedisKeyError(f"dataset {dataset.get_name()!r} lacks {field}: describe "
                            f"{variable!r} with DatasetConverter.add_metadata_for_xarray")
    text = dataset.get_meta_strings(field)[0]
    return [] if text in ("", _NONE) else text.split(",")


def _first_string(dataset: Dataset, field: str, role: str) -> str:
    """The first string of metadata field `field`, which holds a dimension name or an attribute."""
    if field not in dataset.get_metadata_field_names():
        raise RedisKeyError(f"dataset {dataset.get_name()!r} has no {role} field {field!r}")
    return dataset.get_meta_strings(field)[0]


class _NotImported:
    """The value of `xr` until transform_to_xarray first imports xarray."""

    def __repr__(self):
        return "<xarray not imported yet>"


# The xarray module, as SmartRedis's module names it: imported at the first transform_to_xarray
# (importing smartredis stays quick). None means "not installed", as in SmartRedis, so that
# setting it to None simulates a missing xarray.
xr = _NotImported()

_MISSING_XARRAY = ("Optional package xarray must be installed (Debian: apt install "
                   "python3-xarray; otherwise pip install xarray): "
                   "DatasetConverter.transform_to_xarray needs it")


def _import_xarray():
    """The xarray module; RedisRuntimeError if `xr` is None or xarray cannot be imported."""
    global xr  # pylint: disable=global-statement,invalid-name
    if xr is None:
        raise RedisRuntimeError(_MISSING_XARRAY)
    try:
        import xarray  # pylint: disable=import-outside-toplevel
    except ImportError as error:
        raise RedisRuntimeError(_MISSING_XARRAY) from error
    xr = xarray
    return xarray


class DatasetConverter:
    """SmartRedis's xarray conversion of Datasets (static methods only)."""

    @staticmethod
    def add_metadata_for_xarray(dataset: Dataset, data_names, dim_names, coord_names=None,
                                attr_names=None) -> None:
        """Describes the tensors `data_names` of `dataset` for transform_to_xarray: each has the
        dimensions named by the metadata fields `dim_names` (one per tensor dimension, in order),
        the coordinate variables `coord_names` (tensors of the dataset, described by their own
        call) and the attributes held by the metadata fields `attr_names`. Each argument is a
        name or a list of names. Appends to the dataset's metadata; call before put_dataset."""
        typecheck(dataset, "dataset", Dataset)
        data_names = _names_argument(data_names, "data_names")
        described = {
            "dim": _names_argument(dim_names, "dim_names"),
            "coord": _names_argument(coord_names, "coord_names", optional=True),
            "attr": _names_argument(attr_names, "attr_names", optional=True),
        }
        for name in data_names:
            dataset.add_meta_string(_DATA_NAMES, name)
            for kind, names in described.items():
                dataset.add_meta_string(f"_xarray_{name}_{kind}_names",
                                        ",".join(names) if names else _NONE)

    @staticmethod
    def transform_to_xarray(dataset: Dataset) -> t.Dict[str, t.Any]:
        """{name: xarray.DataArray} for every data variable of `dataset` that is not another's
        coordinate: its tensor, dims, attrs (field name: value) and coords (each coordinate
        variable with its own dims and attrs). RedisKeyError if the dataset lacks the
        description or a field it names; RedisRuntimeError if xarray is not installed or a
        coordinate is not a described variable; xarray's ValueError if dims do not fit a tensor.
        """
        typecheck(dataset, "dataset", Dataset)
        xarray = _import_xarray()
        if _DATA_NAMES not in dataset.get_metadata_field_names():
            raise RedisKeyError(f"dataset {dataset.get_name()!r} has no xarray description: "
                                "add it with DatasetConverter.add_metadata_for_xarray")
        # A variable may be described twice (add_metadata_for_xarray called again): keep one.
        variables = list(dict.fromkeys(dataset.get_meta_strings(_DATA_NAMES)))

        def parts(name):
            dims = [_first_string(dataset, field, "dimension")
                    for field in _stored_names(dataset, name, "dim")]
            attrs = {field: _first_string(dataset, field, "attribute")
                     for field in _stored_names(dataset, name, "attr")}
            return dims, dataset.get_tensor(name), attrs

        coordinates = {name: _stored_names(dataset, name, "coord") for name in variables}
        coordinate_variables = {c for names in coordinates.values() for c in names}
        for name in coordinate_variables:
            if name not in variables:
                raise RedisRuntimeError(f"coordinate {name!r} of dataset {dataset.get_name()!r} "
                                        "is not a variable described by add_metadata_for_xarray")
        arrays = {}
        for name in variables:
            if name in coordinate_variables:
                continue
            dims, data, attrs = parts(name)
            coords = {coordinate: parts(coordinate) for coordinate in coordinates[name]}
            arrays[name] = xarray.DataArray(data=data, coords=coords, dims=dims, attrs=attrs,
                                            name=name)
        return arrays
