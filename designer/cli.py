"""`braid validate` and `braid import`: the flow commands of the command line."""

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from django.contrib.auth import get_user_model

from designer import services
from web.documents import DocumentError, load_document
from web.output import Output


def read_document(path: str) -> object:
    """Read and parse a graph file; raise DocumentError when it cannot be used."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise DocumentError("file.unreadable", f"cannot read {path}: {error.strerror}") from error
    return load_document(data)


def print_lines(problems: Sequence[Mapping[str, object]], out: Output) -> None:
    """Print one JSON object per line."""
    for problem in problems:
        out.write(json.dumps(problem, ensure_ascii=False) + "\n")


def validate_file(path: str, out: Output, err: Output) -> int:
    """Print each error as a JSON line on out (warnings on err); return the exit status."""
    try:
        document = read_document(path)
    except DocumentError as error:
        print_lines([error.to_json()], out)
        return 1
    report = services.check_graph(document)
    print_lines([problem.to_json() for problem in report.warnings], err)
    print_lines([problem.to_json() for problem in report.errors], out)
    return 0 if report.ok else 1


def import_file(path: str, username: str, slug: str, publish: bool, out: Output) -> int:
    """Import a graph file as a flow draft, optionally publishing it; return the exit status."""
    owner = get_user_model().objects.filter(username=username).first()
    if owner is None:
        out.write(f"no user named {username!r}; create it or run `braid demo`\n")
        return 1
    try:
        flow, published = services.import_graph(owner, read_document(path), slug, publish)
    except DocumentError as error:
        print_lines([error.to_json()], out)
        return 1
    except services.FlowError as error:
        print_lines(
            [problem.to_json() for problem in error.report.errors] if error.report else [], out
        )
        out.write(f"{error.message}\n")
        return 1
    version = f", version {published.version.number}" if published else ", draft only"
    out.write(f"imported {flow.slug}{version}\n")
    return 0


__all__ = ["import_file", "validate_file"]
