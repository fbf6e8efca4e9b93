import { expect, test } from "vitest";
import { ApiError } from "../../src/monitor/api";
import { startErrors } from "../../src/monitor/startErrors";

test("a run.input refusal lists each input field with its reason, in path order", () => {
  const body = {
    code: "run.input",
    detail: "the input does not match the flow's input schema: amount: must be a number; vendor: is required",
    fields: { vendor: "is required", amount: "must be a number" },
  };
  expect(startErrors(new ApiError(400, body))).toEqual({
    input: "The input does not match the flow's input schema; each field marked below says why.",
    fields: [
      ["amount", "must be a number"],
      ["vendor", "is required"],
    ],
  });
});

test("serializer errors go beside their form field, a refusal's detail to the form", () => {
  expect(startErrors(new ApiError(400, { flow: ["Enter a valid slug."] }))).toEqual({ flow: "Enter a valid slug." });
  expect(startErrors(new ApiError(400, { code: "run.refused", detail: "flow nope has no published version" }))).toEqual({
    form: "flow nope has no published version",
  });
  expect(startErrors(new Error("offline"))).toEqual({ form: "Error: offline" });
});

test("a start that got no answer says trying again is safe", () => {
  expect(startErrors(new ApiError(0, null))).toEqual({
    form: "The server could not be reached. Start it again: if the first try reached the server, you get that run.",
  });
});

test("a start the server or a proxy failed on says trying again is safe, with what it said", () => {
  expect(startErrors(new ApiError(502, "<html>Bad Gateway</html>"))).toEqual({
    form: "The server answered 502. Start it again: if the first try reached the server, you get that run.",
  });
  expect(startErrors(new ApiError(500, { detail: "A server error occurred." }))).toEqual({
    form: "A server error occurred. Start it again: if the first try reached the server, you get that run.",
  });
  expect(startErrors(new ApiError(429, { detail: "Slow down." }))).toEqual({ form: "Slow down." });
});
