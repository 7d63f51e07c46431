// Sends trials one at a time, in order. Each trial is written to storage (localStorage) before
// it is sent and removed only when the server confirms it; network failures and 5xx answers are
// retried with capped exponential backoff; a 4xx answer is final (reported, then dropped).

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
        queue.shift();
        save();
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
