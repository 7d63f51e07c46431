import { test } from "node:test";
import assert from "node:assert/strict";
import { lacksKeyboard } from "../../../../experiments/static/experiments/device.js";

const windowWith = (queries) => ({ matchMedia: (q) => ({ matches: queries.includes(q) }) });

test("a touch-only device (coarse pointer, no fine pointer) has no keyboard", () => {
  assert.equal(lacksKeyboard(windowWith(["(pointer: coarse)"])), true);
});

test("a desktop, or a touch laptop with a trackpad, keeps going", () => {
  assert.equal(lacksKeyboard(windowWith(["(pointer: fine)", "(any-pointer: fine)"])), false);
  assert.equal(lacksKeyboard(windowWith(["(pointer: coarse)", "(any-pointer: fine)"])), false);
  assert.equal(lacksKeyboard({}), false);
});
