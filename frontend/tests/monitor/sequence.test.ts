import { describe, expect, test } from "vitest";
import { backoffDelay, Sequencer } from "../../src/monitor/sequence";

describe("Sequencer for the run socket (a snapshot first)", () => {
  test("deltas before the snapshot are dropped; then each next seq applies", () => {
    const s = new Sequencer(true);
    expect(s.accept({ type: "delta", seq: 1 })).toBe("ignore");
    expect(s.accept({ type: "snapshot", seq: 1 })).toBe("apply");
    expect(s.accept({ type: "delta", seq: 2 })).toBe("apply");
    expect(s.accept({ type: "delta", seq: 3 })).toBe("apply");
  });

  test("a gap asks for a resync and nothing applies until the new snapshot", () => {
    const s = new Sequencer(true);
    s.accept({ type: "snapshot", seq: 1 });
    expect(s.accept({ type: "delta", seq: 3 })).toBe("resync");
    expect(s.accept({ type: "delta", seq: 4 })).toBe("ignore");
    expect(s.accept({ type: "snapshot", seq: 5 })).toBe("apply");
    expect(s.accept({ type: "delta", seq: 6 })).toBe("apply");
  });

  test("a repeated or older seq is dropped", () => {
    const s = new Sequencer(true);
    s.accept({ type: "snapshot", seq: 1 });
    s.accept({ type: "delta", seq: 2 });
    expect(s.accept({ type: "delta", seq: 2 })).toBe("ignore");
    expect(s.accept({ type: "delta", seq: 1 })).toBe("ignore");
  });

  test("a reconnect starts over and waits for a snapshot", () => {
    const s = new Sequencer(true);
    s.accept({ type: "snapshot", seq: 1 });
    s.accept({ type: "delta", seq: 2 });
    s.reset();
    expect(s.accept({ type: "delta", seq: 1 })).toBe("ignore");
    expect(s.accept({ type: "snapshot", seq: 1 })).toBe("apply");
  });
});

describe("Sequencer for the runs list (no snapshot)", () => {
  test("the first message applies, a gap asks for a resync and counting goes on from it", () => {
    const s = new Sequencer(false);
    expect(s.accept({ type: "counts", seq: 1 })).toBe("apply");
    expect(s.accept({ type: "runs", seq: 2 })).toBe("apply");
    expect(s.accept({ type: "runs", seq: 5 })).toBe("resync");
    expect(s.accept({ type: "counts", seq: 6 })).toBe("apply");
  });

  test("a message without an integer seq is dropped", () => {
    expect(new Sequencer(false).accept({ type: "counts", seq: Number.NaN })).toBe("ignore");
  });
});

test("reconnect delays double from 1 s up to the cap", () => {
  expect([0, 1, 2, 3, 4, 5, 9].map((n) => backoffDelay(n))).toEqual([1000, 2000, 4000, 8000, 15000, 15000, 15000]);
  expect(backoffDelay(5, 30_000)).toBe(30_000);
});
