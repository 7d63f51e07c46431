import { test } from "node:test";
import assert from "node:assert/strict";
import { progressText } from "../../../../experiments/static/experiments/progress.js";

test("the trials count as the participant sees them: position of total", () => {
  assert.equal(progressText({ phase: "trials", position: 12, total: 26 }), "12 of 26");
  assert.equal(progressText({ phase: "trials", position: 1, total: 26 }), "1 of 26");
  assert.equal(progressText({ phase: "trials", position: 26, total: 26 }), "26 of 26");
});

test("practice says so", () => {
  assert.equal(progressText({ phase: "practice", position: 1, total: 2 }), "Practice 1 of 2");
});

test("a position outside the list is a bug, not a line to show", () => {
  for (const [position, total] of [[0, 26], [27, 26], [1, 0], [1.5, 3], [undefined, 3]]) {
    assert.throws(() => progressText({ phase: "trials", position, total }), /no progress/);
  }
});
