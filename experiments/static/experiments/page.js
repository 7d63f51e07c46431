// The participant pages' small behaviours, as a static module (the Content-Security-Policy allows no
// inline script). They read their settings from data attributes of #page-config:
//   data-incompatible: where phones and tablets are sent (consent and instructions pages);
//   data-redirect:     where the ended page goes after a short pause (Prolific's completion URL);
//   data-retry-after:  the "please wait" page (429) reloads itself after this many seconds.
import { lacksKeyboard } from "./device.js";

const config = document.getElementById("page-config");
if (config) {
  const { incompatible, redirect, retryAfter } = config.dataset;
  if (incompatible && lacksKeyboard(window)) window.location.replace(incompatible);
  if (redirect) setTimeout(() => window.location.assign(redirect), 3000);
  if (retryAfter) setTimeout(() => window.location.reload(), (Number(retryAfter) || 5) * 1000);
}
