"""The JSON values that flow through state, inputs and action outputs."""

type JSON = bool | int | float | str | list[JSON] | dict[str, JSON] | None


def nests_deeper_than(value: object, limit: int) -> bool:
    """Return whether arrays and objects nest more than `limit` levels (scalars are free)."""
    stack: list[tuple[object, int]] = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item
        for child in children:  # type: ignore[attr-defined]
            if isinstance(child, (dict, list)):
                if depth >= limit:
                    return True
                stack.append((child, depth + 1))
    return False
