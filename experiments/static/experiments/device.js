// Phones and tablets: a coarse pointer and no fine pointer means there is (most likely) no keyboard.
export function lacksKeyboard(win) {
  if (typeof win.matchMedia !== "function") return false;
  return win.matchMedia("(pointer: coarse)").matches && !win.matchMedia("(any-pointer: fine)").matches;
}

// The consent and instructions pages carry a form#no-keyboard: on a device without a keyboard it is sent
// (the server ends the session as returned and shows the page that asks for a keyboard, with the code).
export function screenOutWithoutKeyboard(win, doc) {
  const form = doc.getElementById("no-keyboard");
  if (!form || !lacksKeyboard(win)) return false;
  form.submit();
  return true;
}

// The kind of device a trial is answered on, from what the page can see rather than the user agent alone: a fine
// pointer (a mouse or trackpad) is a computer; touch only is a phone when the shorter side of the screen is under
// 600 CSS pixels, else a tablet. Recorded on each trial (Trial.device).
export function deviceKind(win) {
  const query = (q) => typeof win.matchMedia === "function" && win.matchMedia(q).matches;
  const touch = (win.navigator && win.navigator.maxTouchPoints > 0) || query("(pointer: coarse)");
  if (!touch || query("(any-pointer: fine)")) return "desktop";
  const screen = win.screen || {};
  const shorter = Math.min(screen.width || win.innerWidth, screen.height || win.innerHeight);
  return shorter < 600 ? "phone" : "tablet";
}

// How a click on an answer button was made: "touch" (a finger or a pen) or "click" (a mouse); null for a click
// no pointer made (a focused button activated from the keyboard), which answers nothing.
export function channelOf(event, lastPointerType) {
  if (event.detail === 0 && !event.pointerType) return null;
  const type = event.pointerType || lastPointerType || "mouse";
  return type === "touch" || type === "pen" ? "touch" : "click";
}
