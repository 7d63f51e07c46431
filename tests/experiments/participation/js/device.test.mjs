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

test("on a device without a keyboard the page sends its no-keyboard form, once, and nothing else", async () => {
  const { screenOutWithoutKeyboard } = await import("../../../../experiments/static/experiments/device.js");
  let sent = 0;
  const page = { getElementById: (id) => (id === "no-keyboard" ? { submit: () => { sent += 1; } } : null) };
  assert.equal(screenOutWithoutKeyboard(windowWith(["(pointer: coarse)"]), page), true);
  assert.equal(sent, 1);
  assert.equal(screenOutWithoutKeyboard(windowWith(["(pointer: fine)", "(any-pointer: fine)"]), page), false);
  assert.equal(sent, 1);  // a keyboard: the form stays unsent
  const elsewhere = { getElementById: () => null };  // a page without the form (the trials, the end)
  assert.equal(screenOutWithoutKeyboard(windowWith(["(pointer: coarse)"]), elsewhere), false);
});
