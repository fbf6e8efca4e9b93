"""`braid audit verify`: check the approval audit's hash chain."""

from approvals.audit import verify
from web.output import Output


def verify_command(out: Output) -> int:
    """Verify the chain; print the verdict; return 0 when whole, 1 at the first broken entry."""
    verdict = verify()
    if verdict.ok:
        out.write(f"audit chain verified: {verdict.entries} entries\n")
        return 0
    where = f"entry #{verdict.broken_seq}"
    if verdict.broken_id is not None:
        where += f" (id {verdict.broken_id})"
    out.write(
        f"audit chain broken at {where}: {verdict.reason}; "
        f"the {verdict.entries} entries before it verify\n"
    )
    return 1
