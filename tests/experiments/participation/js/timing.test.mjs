import { test } from "node:test";
import assert from "node:assert/strict";
import { afterPaint, responseTime, toEpoch } from "../../../../experiments/static/experiments/timing.js";

function fakeFrames() {
  const callbacks = [];
  let now = 1000;
  return {
    raf: (cb) => callbacks.push(cb),
    frame(ms = 16.7) { now += ms; const due = callbacks.splice(0); due.forEach((cb) => cb(now)); return now; },
    get waiting() { return callbacks.length; },
  };
}

test("onset is the timestamp of the frame after the stimulus is painted", async () => {
  const frames = fakeFrames();
  let onset = null;
  afterPaint(frames.raf).then((t) => { onset = t; });
  const paintFrame = frames.frame();        // the frame that paints the stimulus
  await Promise.resolve();
  assert.equal(onset, null);
  assert.equal(frames.waiting, 1);
  const next = frames.frame();
  await Promise.resolve();
  assert.equal(onset, next);
  assert.ok(onset > paintFrame);
});

test("response time runs from onset to the key event's own timestamp", () => {
  assert.equal(responseTime(1033.4, 1876.9), 1876.9 - 1033.4);
  assert.ok(responseTime(500, 499) < 0);
});

test("epoch times add the page's time origin", () => {
  assert.equal(toEpoch(250.5, 1_700_000_000_000), 1_700_000_000_250.5);
});
