// Copy buttons of the key page: a button names the element whose text it copies (no inline script: CSP).
document.querySelectorAll("[data-copy-target]").forEach(function (button) {
  button.addEventListener("click", function () {
    var text = document.getElementById(button.getAttribute("data-copy-target")).textContent.trim();
    var done = function () { button.textContent = "Copied"; };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { select(text); });
    } else {
      select(text);
    }
  });
});

function select(text) {
  var range = document.createRange();
  range.selectNodeContents(document.getElementById("new-key-secret"));
  var selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  document.execCommand("copy");
}
