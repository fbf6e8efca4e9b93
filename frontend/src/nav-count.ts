/**
 * Entry on every page for a logged-in user: keeps the navigation bar's inbox count live
 * and tells the page (`braid:inbox-count` on window) when it changes.
 */
import "vite/modulepreload-polyfill";
import { COUNT_EVENT, followInboxCount } from "./inbox/live";

/** Show `open` in the badge: the number for the eye, a sentence for screen readers. */
export function showCount(badge: HTMLElement, open: number): void {
  badge.dataset.inboxCount = String(open);
  badge.hidden = open === 0;
  if (open === 0) {
    badge.replaceChildren(); // no text: the link reads "Inbox"
    return;
  }
  const digits = document.createElement("span");
  digits.setAttribute("aria-hidden", "true");
  digits.textContent = String(open);
  const sentence = document.createElement("span");
  sentence.className = "visually-hidden";
  sentence.textContent = `, ${open} open request${open === 1 ? "" : "s"}`;
  badge.replaceChildren(digits, sentence);
}

function start(): void {
  const badge = document.querySelector<HTMLElement>("[data-inbox-count]");
  if (badge === null || !("WebSocket" in window)) return;
  let last = Number(badge.dataset.inboxCount ?? "0");
  followInboxCount((open) => {
    showCount(badge, open);
    if (open !== last) {
      last = open;
      window.dispatchEvent(new CustomEvent(COUNT_EVENT, { detail: { open } }));
    }
  });
}

if (document.readyState === "loading") {
  document.addEventListener("DOMContentLoaded", start, { once: true });
} else {
  start();
}
