// An embed page's colour scheme: ?theme=light or ?theme=dark sets it (a light blog read on a dark
// phone asks for light), ?theme=auto or none follows the reader's. Set from the head (warm.js),
// before the first paint; main.css reads <html data-theme>. demos.js names a bad value.

export const THEMES = ["light", "dark", "auto"];
export function applyTheme() {
  const root = document.documentElement;
  if (!root.classList.contains("embed")) return;
  const theme = new URLSearchParams(location.search).get("theme");
  if (theme === "light" || theme === "dark") root.dataset.theme = theme;
}
