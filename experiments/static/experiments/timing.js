// Stimulus onset and response times on the browser's high-resolution clock.
// Onset is the timestamp of the animation frame after the one that paints the stimulus
// (two requestAnimationFrame callbacks); the response is the keydown event's own timeStamp.

export function afterPaint(raf = globalThis.requestAnimationFrame.bind(globalThis)) {
  return new Promise((resolve) => raf(() => raf((timestamp) => resolve(timestamp))));
}

export function responseTime(onset, eventTimeStamp) {
  return eventTimeStamp - onset;
}

// Epoch milliseconds (what the server stores) from a performance-timeline timestamp.
export function toEpoch(timestamp, origin = globalThis.performance.timeOrigin) {
  return origin + timestamp;
}
