import { test } from "node:test";
import assert from "node:assert/strict";
import { LETTERS, isFourOption, optionItems, optionKeyMaps, rightOptionText } from "../../../../experiments/static/experiments/choice.js";
import { createResponder } from "../../../../experiments/static/experiments/keyboard.js";

const DFJK = [
  { letter: "A", code: "KeyD", label: "D" }, { letter: "B", code: "KeyF", label: "F" },
  { letter: "C", code: "KeyJ", label: "J" }, { letter: "D", code: "KeyK", label: "K" },
];
const DIGITS = [1, 2, 3, 4].map((n, i) => ({ letter: LETTERS[i], code: `Digit${n}`, label: String(n) }));

test("the keys answer the positions left to right, by physical key", () => {
  const { keys, mapping } = optionKeyMaps(DFJK);
  assert.deepEqual(keys, { KeyD: "d", KeyF: "f", KeyJ: "j", KeyK: "k" });
  assert.deepEqual(mapping, { d: "A", f: "B", j: "C", k: "D" });
  assert.deepEqual(optionKeyMaps(DIGITS).mapping, { 1: "A", 2: "B", 3: "C", 4: "D" });
  assert.throws(() => optionKeyMaps(DFJK.slice(0, 3)), /one key per option position/);
});

test("a responder with the four-option keys answers the letter and ignores F/J-only logic", () => {
  const { keys, mapping } = optionKeyMaps(DFJK);
  const responses = [];
  const r = createResponder({ keys, mapping, onResponse: (x) => responses.push(x) });
  r.arm(100);
  assert.equal(r.handle({ code: "KeyA", key: "a", timeStamp: 200 }), false);  // not an option key
  assert.equal(r.handle({ code: "KeyS", key: "d", timeStamp: 200 }), false);  // "d" typed elsewhere (another layout)
  assert.equal(r.handle({ code: "KeyK", key: "k", timeStamp: 300 }), true);
  assert.deepEqual(responses, [{ key: "k", code: "KeyK", letter: "k", answer: "D", timeStamp: 300, onset: 100, channel: "key" }]);
  const digits = optionKeyMaps(DIGITS);
  const second = [];
  const d = createResponder({ ...digits, onResponse: (x) => second.push(x) });
  d.arm(0);
  assert.equal(d.handle({ code: "KeyF", key: "f", timeStamp: 5 }), false);  // F is not an answer with 1–4
  assert.equal(d.handle({ code: "Digit2", key: "2", timeStamp: 6 }), true);
  assert.equal(second[0].answer, "B");
});

class FakeElement {
  constructor(tag) { this.tag = tag; this.children = []; this.dataset = {}; this.textContent = ""; }
  append(...nodes) { this.children.push(...nodes); }
}
const fakeDocument = { createElement: (tag) => new FakeElement(tag) };

test("options are listed in the mutant's order, each led by its key", () => {
  const items = optionItems(fakeDocument, ["w", "x", "y", "z"], DFJK);
  assert.deepEqual(items.map((li) => li.dataset.letter), ["A", "B", "C", "D"]);
  assert.deepEqual(items.map((li) => li.children[0].textContent), ["D", "F", "J", "K"]);
  assert.deepEqual(items.map((li) => li.children[2].textContent), ["w", "x", "y", "z"]);
  assert.ok(isFourOption({ options: ["w", "x", "y", "z"] }) && !isFourOption({ premises: [] }));
  assert.equal(rightOptionText("C", DFJK), "J (option C)");
});
