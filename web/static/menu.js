// The header's menu on narrow screens: with this script the links fold behind a "Menu" button; without it
// (or on wide screens) they stay visible and wrap. No inline script: the pages' CSP allows none.
(function () {
  var header = document.querySelector("header.top");
  var toggle = header && header.querySelector(".menu-toggle");
  if (!toggle) { return; }
  header.classList.add("collapsible");
  toggle.hidden = false;
  toggle.addEventListener("click", function () {
    var open = toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", String(open));
    header.classList.toggle("open", open);
  });
})();
