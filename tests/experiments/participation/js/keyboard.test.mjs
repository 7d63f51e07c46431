import { test } from "node:test";
import assert from "node:assert/strict";
import { createResponder, isStartKey, letterOf } from "../../../../experiments/static/experiments/keyboard.js";

const key = (code, extra = {}) => ({ code, key: code.slice(3).toLowerCase(), timeStamp: 2000, repeat: false, ...extra });

function responder(mapping = { f: "yes", j: "no" }) {
  const responses = [];
  const r = createResponder({ mapping, onResponse: (x) => responses.push(x) });
  return { r, responses };
}

test("only F and J by physical position count", () => {
  assert.equal(letterOf({ code: "KeyF", key: "u" }), "f");  // Dvorak's F position
  assert.equal(letterOf({ code: "KeyK", key: "f" }), null);
  assert.equal(letterOf({ code: "Space", key: " " }), null);
});

test("keys before the stimulus is armed, other keys, repeats and chords are ignored", () => {
  const { r, responses } = responder();
  assert.equal(r.handle(key("KeyF")), false);               // not armed yet
  r.arm(1500);
  assert.equal(r.handle(key("KeyA")), false);
  assert.equal(r.handle(key("KeyF", { repeat: true })), false);
  assert.equal(r.handle(key("KeyF", { ctrlKey: true })), false);
  assert.equal(r.handle(key("KeyF", { timeStamp: 1400 })), false);  // queued before onset
  assert.equal(responses.length, 0);
  assert.equal(r.armed, true);
});

test("the first valid press answers through the mapping and disarms", () => {
  const { r, responses } = responder({ f: "no", j: "yes" });
  r.arm(1500);
  let prevented = false;
  assert.equal(r.handle(key("KeyF", { preventDefault: () => { prevented = true; } })), true);
  assert.equal(r.handle(key("KeyJ", { timeStamp: 2100 })), false);  // a second press changes nothing
  assert.deepEqual(responses, [{ key: "f", code: "KeyF", letter: "f", answer: "no", timeStamp: 2000, onset: 1500, channel: "key" }]);
  assert.ok(prevented);
  assert.equal(r.armed, false);
});

test("a start press is F or J (or the given keys) pressed afresh, without a chord", () => {
  assert.equal(isStartKey(key("KeyF")), true);
  assert.equal(isStartKey(key("KeyJ")), true);
  assert.equal(isStartKey(key("Space")), false);
  assert.equal(isStartKey(key("KeyF", { repeat: true })), false);  // a key still held from the last answer
  assert.equal(isStartKey(key("KeyJ", { altKey: true })), false);
  assert.equal(isStartKey(key("KeyJ", { metaKey: true })), false);
  const digits = { Digit1: "1", Digit2: "2", Digit3: "3", Digit4: "4" };
  assert.equal(isStartKey(key("Digit3"), digits), true);
  assert.equal(isStartKey(key("KeyF"), digits), false);
});

test("an on-screen button answers as its key would, once, after onset, with its channel", () => {
  const { r, responses } = responder({ f: "yes", j: "no" });
  assert.equal(r.choose("j", 900, "touch"), false);  // not armed yet
  r.arm(1000);
  assert.equal(r.choose("j", 1000, "touch"), false);  // at onset: too early
  assert.equal(r.choose("x", 1200, "click"), false);  // not a key of the trial
  assert.equal(r.choose("j", 1300, "touch"), true);
  assert.equal(r.choose("f", 1400, "click"), false);  // a second answer changes nothing
  assert.equal(r.handle(key("KeyF", { timeStamp: 1500 })), false);
  assert.deepEqual(responses, [{ key: "j", code: "KeyJ", letter: "j", answer: "no", timeStamp: 1300, onset: 1000,
    channel: "touch" }]);
});
