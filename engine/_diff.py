"""Where two JSON values first differ, as a dotted path (for one-line reports)."""


def first_difference(mine, theirs, path="$"):
    """The first path at which `theirs` differs from `mine`, or None if equal."""
    if type(mine) is not type(theirs):
        return path
    if isinstance(mine, dict):
        for key in sorted(set(mine) | set(theirs)):
            if key not in mine or key not in theirs:
                return f"{path}.{key}"
            sub = first_difference(mine[key], theirs[key], f"{path}.{key}")
            if sub:
                return sub
        return None
    if isinstance(mine, list):
        if len(mine) != len(theirs):
            return f"{path} (length {len(mine)} vs {len(theirs)})"
        for i, (a, b) in enumerate(zip(mine, theirs)):
            sub = first_difference(a, b, f"{path}[{i}]")
            if sub:
                return sub
        return None
    return None if mine == theirs else path
