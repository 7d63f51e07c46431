// The progress line above the trials: "12 of 26" — the trials of the participant's list as the
// participant sees them (check questions count like any other), and "Practice 1 of 2" in practice.
export function progressText({ phase, position, total }) {
  if (!Number.isInteger(position) || !Number.isInteger(total) || total < 1 || position < 1 || position > total) {
    throw new Error(`no progress ${position} of ${total}`);
  }
  return phase === "practice" ? `Practice ${position} of ${total}` : `${position} of ${total}`;
}
