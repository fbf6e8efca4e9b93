"""The JSON values that flow through state, inputs and action outputs."""

from typing import TypeAlias

JSON: TypeAlias = None | bool | int | float | str | list["JSON"] | dict[str, "JSON"]
