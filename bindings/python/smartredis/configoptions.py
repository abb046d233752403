"""ConfigOptions: the settings a Client is created from, read from environment variables named
NAME_suffix (NAME when the suffix is empty) when asked, with per-object overrides, as
SmartRedis's ConfigOptions.create_from_environment(db_suffix)."""

import os
import re

from smartredis.error import RedisKeyError, RedisRuntimeError

__all__ = ["ConfigOptions"]

_NOT_FACTORY = "Method called on a ConfigOptions object not created from a factory method"


class ConfigOptions:
    def __init__(self) -> None:
        self._is_created_via_factory = False
        self._suffix = ""
        self._overrides = {}

    @classmethod
    def create_from_environment(cls, db_suffix: str) -> "ConfigOptions":
        if not isinstance(db_suffix, str):
            raise TypeError(f"Argument provided for db_suffix, {type(db_suffix)}, is not of type str")
        if not re.fullmatch(r"[A-Za-z0-9_]*", db_suffix):
            raise ValueError(f"invalid database suffix {db_suffix!r}: use letters, digits and '_' only")
        options = cls()
        options._suffix = db_suffix
        options._is_created_via_factory = True
        return options

    @property
    def is_factory_object(self) -> bool:
        return self._is_created_via_factory

    def _check(self, option_name):
        if not isinstance(option_name, str):
            raise TypeError(f"Argument provided for option_name, {type(option_name)}, is not of type str")
        if not self._is_created_via_factory:
            raise RedisRuntimeError(_NOT_FACTORY)

    def _variable(self, option_name):
        return f"{option_name}_{self._suffix}" if self._suffix else option_name

    def get_string_option(self, option_name: str) -> str:
        self._check(option_name)
        if option_name in self._overrides:
            return str(self._overrides[option_name])
        value = os.environ.get(self._variable(option_name))
        if not value:
            raise RedisKeyError(f"configuration option {self._variable(option_name)} is not set")
        return value

    def get_integer_option(self, option_name: str) -> int:
        text = self.get_string_option(option_name)
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"option {self._variable(option_name)} = {text!r} is not an integer") from None

    def is_configured(self, option_name: str) -> bool:
        self._check(option_name)
        return option_name in self._overrides or bool(os.environ.get(self._variable(option_name)))

    def override_integer_option(self, option_name: str, value: int) -> None:
        self._check(option_name)
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"Argument provided for value, {type(value)}, is not of type int")
        self._overrides[option_name] = value

    def override_string_option(self, option_name: str, value: str) -> None:
        self._check(option_name)
        if not isinstance(value, str):
            raise TypeError(f"Argument provided for value, {type(value)}, is not of type str")
        self._overrides[option_name] = value

    def _resolve(self, option_name, default):
        return self.get_string_option(option_name) if self.is_configured(option_name) else default

    @property
    def suffix(self) -> str:
        return self._suffix
