import { test } from "node:test";
import assert from "node:assert/strict";
import { webcrypto } from "node:crypto";  // Node 18 (Debian 12) has no global crypto
import { createSender, csrfFromCookie, newKey } from "../../../../experiments/static/experiments/sender.js";

class MemoryStorage {
  constructor() { this.data = new Map(); }
  getItem(k) { return this.data.has(k) ? this.data.get(k) : null; }
  setItem(k, v) { this.data.set(k, String(v)); }
}

function harness(script) {
  // script: a list of outcomes, one per request: a status number, { status, final } or "network"
  const sent = [];
  const timers = [];
  const statuses = [];
  const saved = [];
  const rejected = [];
  const fetchImpl = async (url, init) => {
    sent.push({ url, body: JSON.parse(init.body), csrf: init.headers["X-CSRFToken"] });
    const outcome = script.length ? script.shift() : 201;
    if (outcome === "network") throw new TypeError("Failed to fetch");
    const { status, final } = typeof outcome === "object" ? outcome : { status: outcome };
    const body = { status: "started", outcome: status, ...(final === undefined ? {} : { final }) };
    return { status, ok: status >= 200 && status < 300, json: async () => body };
  };
  const schedule = (fn, ms) => { timers.push({ fn, ms }); return timers.length; };
  const cancel = (id) => { timers[id - 1].cancelled = true; };
  const storage = new MemoryStorage();
  const make = () => createSender({
    url: "/s/x/p/t/trial", csrfToken: "tok", storage, storageKey: "duet:t:queue", fetchImpl, schedule, cancel,
    onStatus: (s) => statuses.push(s), onSaved: (p) => saved.push(p.index),
    onRejected: (p, status) => rejected.push([p.index, status]),
  });
  return { sent, timers, statuses, saved, rejected, storage, make };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));
const stored = (h) => JSON.parse(h.storage.getItem("duet:t:queue")).map((p) => p.index);

test("a trial is stored before it is sent and removed once confirmed", async () => {
  const h = harness([201]);
  const sender = h.make();
  sender.enqueue({ index: 0 });
  assert.deepEqual(stored(h), [0]);  // written synchronously, before any answer
  await sender.drained();
  assert.deepEqual(stored(h), []);
  assert.deepEqual(h.saved, [0]);
  assert.equal(h.sent[0].csrf, "tok");
});

test("network failures keep the answer, tell the participant, and retry with growing delays", async () => {
  const h = harness(["network", "network", 503, 201, 201]);
  const sender = h.make();
  sender.enqueue({ index: 3 });
  await settle();
  sender.enqueue({ index: 4 });  // answered while offline: queued behind
  await settle();
  assert.deepEqual(h.statuses, ["offline"]);
  assert.deepEqual(stored(h), [3, 4]);
  h.timers.at(-1).fn(); await settle();
  h.timers.at(-1).fn(); await settle();
  assert.deepEqual(h.timers.map((t) => t.ms), [500, 1000, 2000]);
  h.timers.at(-1).fn();
  await sender.drained();
  assert.deepEqual(h.sent.map((s) => s.body.index), [3, 3, 3, 3, 4]);  // in order, nothing skipped
  assert.deepEqual(h.saved, [3, 4]);
  assert.deepEqual(h.statuses, ["offline", "offline", "offline", "online"]);
  assert.deepEqual(stored(h), []);
});

test("a reloaded page finds the unsent answers and sends them", async () => {
  const h = harness(["network"]);
  h.make().enqueue({ index: 7 });
  await settle();
  const reloaded = h.make();
  assert.deepEqual(reloaded.pending(), [7]);
  reloaded.flush();
  await reloaded.drained();
  assert.deepEqual(h.saved, [7]);
});

test("retryNow skips the wait when the connection comes back", async () => {
  const h = harness(["network", 201]);
  const sender = h.make();
  sender.enqueue({ index: 1 });
  await settle();
  sender.retryNow();
  await sender.drained();
  assert.equal(h.timers[0].cancelled, true);
  assert.deepEqual(h.saved, [1]);
});

test("a trial refused for good (4xx, final) is reported and not retried forever", async () => {
  const h = harness([{ status: 400, final: true }, 201]);
  const sender = h.make();
  sender.enqueue({ index: 0 });
  sender.enqueue({ index: 1 });
  await sender.drained();
  assert.deepEqual(h.rejected, [[0, 400]]);
  assert.deepEqual(h.saved, [1]);
  assert.equal(h.timers.length, 0);
});

test("csrf token from the cookie and unique idempotency keys", () => {
  assert.equal(csrfFromCookie("a=1; csrftoken=abc%3D; b=2"), "abc=");
  assert.equal(csrfFromCookie("a=1"), "");
  const keys = new Set(Array.from({ length: 50 }, () => newKey(webcrypto)));
  assert.equal(keys.size, 50);
  const fallback = newKey({ getRandomValues: (a) => { a.fill(171); return a; } });
  assert.match(fallback, /^[0-9a-f]{32}$/);
});

test("a 4xx that is not final keeps the answer, retries, and advises a reload after three", async () => {
  const h = harness([403, { status: 409, final: false }, 403, 201]);  // a CSRF page has no JSON at all
  const sender = h.make();
  sender.enqueue({ index: 5 });
  await settle();
  assert.deepEqual(stored(h), [5]);  // kept
  assert.deepEqual(h.rejected, []);
  h.timers.at(-1).fn(); await settle();
  assert.ok(!h.statuses.includes("reload"));
  h.timers.at(-1).fn(); await settle();
  assert.equal(h.statuses.at(-1), "reload");  // three refusals in a row: the page advises a reload
  assert.deepEqual(stored(h), [5]);
  h.timers.at(-1).fn();
  await sender.drained();
  assert.deepEqual(h.saved, [5]);  // delivered once the server takes it
  assert.deepEqual(h.sent.map((s) => s.body.index), [5, 5, 5, 5]);
});
