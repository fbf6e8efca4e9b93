"""An admin's cancel in the monitor's words: who, at what clock time, and why."""

import json
from pathlib import Path

from engine.core.colors import cancel_time, clock_time, explain, explain_node, run_cancelled_words
from engine.core.events import Cancel
from tests.core.harness import Driver

DEMO = Path(__file__).resolve().parents[2] / "designer" / "demo_flows"
INVOICE = json.loads((DEMO / "invoice-sign-off.json").read_text())


def test_a_row_left_waiting_by_an_admin_cancel_names_the_clock_time_and_the_reason() -> None:
    driver = Driver(INVOICE, {"invoice": {"id": "I", "amount": 5, "vendor": "V"}})
    driver.send(Cancel(at="2026-12-06T14:02:31.5+00:00", by="admin", reason="duplicate invoice"))
    status, ended = driver.state.status, driver.state.error or ""
    at = cancel_time(driver.trace)
    whole = explain(driver.graphs, driver.rows, status, ended, cancelled_at=at)
    expected = "Cancelled by admin at 14:02 UTC: duplicate invoice (while waiting for finance)"
    assert (at, whole["fin"].reason) == ("14:02 UTC", expected)
    assert (
        explain_node(driver.graphs, driver.rows, status, "fin", ended, cancelled_at=at)
        == whole["fin"]
    )


def test_the_clock_time_of_a_cancel_is_read_in_utc_and_an_unreadable_time_gives_none() -> None:
    assert [clock_time(t) for t in ("2026-12-06T15:02:00+01:00", "2026-12-06T23:59:59Z",
                                    "yesterday", "2026-12-06T10:00:00")] == [
        "14:02 UTC", "23:59 UTC", "", ""]  # fmt: skip


def test_run_cancelled_words_name_who_when_and_why_and_leave_out_what_is_unknown() -> None:
    assert [run_cancelled_words(ended, at) for ended, at in (
        ("cancelled by admin: a: b", "09:05 UTC"), ("cancelled by admin: ", "09:05 UTC"),
        ("cancelled by ops: dup", ""), ("", ""),
    )] == ["Cancelled by admin at 09:05 UTC: a: b", "Cancelled by admin at 09:05 UTC",
           "Cancelled by ops (dup)", "Cancelled by an admin"]  # fmt: skip
