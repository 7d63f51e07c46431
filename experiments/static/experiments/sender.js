// Sends trials one at a time, in order. Each trial is written to storage (localStorage) before
// it is sent and removed only when the server confirms it, or refuses it for good: its JSON says
// "final": true (malformed, already saved, session over). Every other answer — network failures,
// 5xx, 408/429, and a 4xx without that word (a CSRF page, a step out of order) — keeps the trial and
// retries with capped exponential backoff; after KEPT_BEFORE_RELOAD such refusals in a row the page
// is told to advise a reload (onStatus("reload")), the answer still kept.

export function csrfFromCookie(cookie) {
  const match = /(?:^|;\s*)csrftoken=([^;]+)/.exec(cookie || "");
  return match ? decodeURIComponent(match[1]) : "";
}

export function newKey(cryptoImpl = globalThis.crypto) {
  if (typeof cryptoImpl.randomUUID === "function") return cryptoImpl.randomUUID();
  const bytes = cryptoImpl.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

const RETRYABLE = new Set([408, 429]);
export const KEPT_BEFORE_RELOAD = 3;

export function createSender({
  url, csrfToken, storage, storageKey, fetchImpl = globalThis.fetch.bind(globalThis),
  schedule = setTimeout, cancel = clearTimeout, onStatus = () => {}, onSaved = () => {},
  onRejected = () => {}, baseDelay = 500, maxDelay = 5000,
}) {
  const load = () => {
    try { return JSON.parse(storage.getItem(storageKey) || "[]"); } catch { return []; }
  };
  let queue = load();
  let sending = false;
  let timer = null;
  let failures = 0;
  let kept = 0;  // refusals in a row that were not final
  let waiters = [];
  const save = () => storage.setItem(storageKey, JSON.stringify(queue));
  const settle = () => {
    if (queue.length === 0) { const w = waiters; waiters = []; w.forEach((resolve) => resolve()); }
  };

  function retryLater() {
    failures += 1;
    onStatus("offline");
    const delay = Math.min(maxDelay, baseDelay * 2 ** (failures - 1));
    timer = schedule(() => { timer = null; flush(); }, delay);
  }

  async function flush() {
    if (sending || timer !== null) return;
    sending = true;
    try {
      while (queue.length > 0) {
        const payload = queue[0];
        let response;
        try {
          response = await fetchImpl(url, {
            method: "POST", credentials: "same-origin", body: JSON.stringify(payload),
            headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken },
          });
        } catch {
          retryLater();
          return;
        }
        if (response.status >= 500 || RETRYABLE.has(response.status)) { retryLater(); return; }
        const body = await response.json().catch(() => ({}));
        if (!response.ok && body.final !== true) {  // not refused for good: keep it, try again
          kept += 1;
          retryLater();
          if (kept >= KEPT_BEFORE_RELOAD) onStatus("reload");
          return;
        }
        queue.shift();
        save();
        kept = 0;
        if (response.ok) {
          if (failures > 0) onStatus("online");
          failures = 0;
          onSaved(payload, body);
        } else {
          onRejected(payload, response.status, body);
        }
      }
    } finally {
      sending = false;
      settle();
    }
  }

  return {
    enqueue(payload) { queue.push(payload); save(); flush(); },
    flush,
    retryNow() { if (timer !== null) { cancel(timer); timer = null; } flush(); },
    pending() { return queue.map((p) => p.index); },
    drained() { return queue.length === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve)); },
  };
}
