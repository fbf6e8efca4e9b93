"""The JSON values that flow through state, inputs and action outputs."""

type JSON = bool | int | float | str | list[JSON] | dict[str, JSON] | None
