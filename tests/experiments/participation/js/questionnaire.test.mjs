import { test } from "node:test";
import assert from "node:assert/strict";
import { createAnswerQueue, newKey } from "../../../../experiments/static/experiments/questionnaire.js";

test("answers are sent in order, each once, with a fresh resend key", async () => {
  const sent = [];
  const results = [];
  const queue = createAnswerQueue({
    post: async (body) => { sent.push(body); return { status: 201, body: { saved: true } }; },
    onResult: (q, status) => results.push([q, status]),
  });
  await queue.send(1, "Yes");
  await queue.send(2, "4");
  assert.deepEqual(sent.map((b) => [b.question, b.value]), [[1, "Yes"], [2, "4"]]);
  assert.notEqual(sent[0].idempotency_key, sent[1].idempotency_key);
  assert.deepEqual(results, [[1, 201], [2, 201]]);
  assert.equal(queue.pending(), 0);
});

test("a network failure or a 5xx is retried with the same key; a 400 is final", async () => {
  const sent = [];
  let calls = 0;
  const results = [];
  const queue = createAnswerQueue({
    post: async (body) => {
      sent.push(body.idempotency_key);
      calls += 1;
      if (calls === 1) throw new Error("offline");
      if (calls === 2) return { status: 503, body: {} };
      return { status: 400, body: { error: "Please enter a number from 18 to 120." } };
    },
    onResult: (q, status, body) => results.push([q, status, body.error]),
    wait: async () => {},
  });
  await queue.send(3, "7");
  assert.equal(calls, 3);
  assert.equal(new Set(sent).size, 1);
  assert.deepEqual(results, [[3, 400, "Please enter a number from 18 to 120."]]);
});

test("a newer answer to a question not sent yet replaces the older one", async () => {
  const sent = [];
  let release;
  const gate = new Promise((r) => { release = r; });
  const queue = createAnswerQueue({
    post: async (body) => { sent.push([body.question, body.value]); if (sent.length === 1) await gate; return { status: 201, body: {} }; },
    onResult: () => {},
  });
  const first = queue.send(1, "a");
  queue.send(2, "x");
  queue.send(2, "y");
  release();
  await first;
  assert.deepEqual(sent, [[1, "a"], [2, "y"]]);
});

test("resend keys are hex and distinct", () => {
  const a = newKey(), b = newKey();
  assert.match(a, /^[0-9a-f]{24}$/);
  assert.notEqual(a, b);
});
