// The participant pages' small behaviours, as a static module (the Content-Security-Policy allows no
// inline script). The consent and instructions pages' form#no-keyboard is sent on a phone or tablet
// (device.js): the session ends as returned. The other settings are data attributes of #page-config:
//   data-redirect:     where the ended page goes after a short pause (Prolific's completion URL);
//   data-retry-after:  the "please wait" page (429) reloads itself after this many seconds.
import { screenOutWithoutKeyboard } from "./device.js";

screenOutWithoutKeyboard(window, document);
const config = document.getElementById("page-config");
if (config) {
  const { redirect, retryAfter } = config.dataset;
  if (redirect) setTimeout(() => window.location.assign(redirect), 3000);
  if (retryAfter) setTimeout(() => window.location.reload(), (Number(retryAfter) || 5) * 1000);
}
