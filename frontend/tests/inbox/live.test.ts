import { describe, expect, it } from "vitest";
import { SeqTracker, parseCountMessage, reconnectDelay, socketUrl } from "../../src/inbox/live";

describe("the inbox socket", () => {
  it("accepts only well-formed count messages", () => {
    expect(parseCountMessage('{"type":"count","seq":1,"open":3}')).toEqual({ type: "count", seq: 1, open: 3 });
    expect(parseCountMessage('{"type":"count","seq":1,"open":-1}')).toBeNull();
    expect(parseCountMessage('{"type":"delta","seq":1}')).toBeNull();
    expect(parseCountMessage("not json")).toBeNull();
  });

  it("notices a seq gap and ignores old messages", () => {
    const seq = new SeqTracker();
    expect([seq.accept(1), seq.accept(2), seq.accept(4), seq.accept(3)]).toEqual(["ok", "ok", "gap", "stale"]);
  });

  it("reconnects sooner first and at most every 30 s", () => {
    expect([0, 1, 2, 10].map(reconnectDelay)).toEqual([1000, 2000, 4000, 30000]);
  });

  it("uses wss under https", () => {
    expect(socketUrl({ protocol: "https:", host: "b.example" }, "/ws/inbox/")).toBe("wss://b.example/ws/inbox/");
    expect(socketUrl({ protocol: "http:", host: "127.0.0.1:8000" }, "/ws/inbox/")).toBe("ws://127.0.0.1:8000/ws/inbox/");
  });
});
