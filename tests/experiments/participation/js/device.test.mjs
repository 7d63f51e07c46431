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

test("the device is judged from pointer, touch and screen, not the user agent", async () => {
  const { deviceKind } = await import("../../../../experiments/static/experiments/device.js");
  const win = (queries, touchPoints, width, height) => ({
    ...windowWith(queries), navigator: { maxTouchPoints: touchPoints }, screen: { width, height },
    innerWidth: width, innerHeight: height,
  });
  assert.equal(deviceKind(win(["(pointer: fine)", "(any-pointer: fine)"], 0, 1280, 800)), "desktop");
  assert.equal(deviceKind(win(["(pointer: coarse)", "(any-pointer: fine)"], 10, 1280, 800)), "desktop");  // touch laptop
  assert.equal(deviceKind(win(["(pointer: coarse)"], 5, 390, 844)), "phone");
  assert.equal(deviceKind(win(["(pointer: coarse)"], 5, 820, 1180)), "tablet");
  assert.equal(deviceKind({ navigator: {} }), "desktop");  // nothing to go by
});

test("a button's click is a touch (finger, pen) or a click (mouse); a keyboard activation is neither", async () => {
  const { channelOf } = await import("../../../../experiments/static/experiments/device.js");
  assert.equal(channelOf({ pointerType: "touch", detail: 1 }), "touch");
  assert.equal(channelOf({ pointerType: "pen", detail: 1 }), "touch");
  assert.equal(channelOf({ pointerType: "mouse", detail: 1 }), "click");
  assert.equal(channelOf({ detail: 1 }, "touch"), "touch");  // a browser whose click is no PointerEvent
  assert.equal(channelOf({ detail: 0, pointerType: "" }), null);  // Enter or Space on a focused button
});
