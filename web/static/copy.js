// Copy buttons (the new key, the hunting queries): a button names the element whose text it copies (no
// inline script: CSP). Without the clipboard API (a page not served over https) the text is selected and
// copied the old way.
document.querySelectorAll("[data-copy-target]").forEach(function (button) {
  button.addEventListener("click", function () {
    var target = document.getElementById(button.getAttribute("data-copy-target"));
    var text = target.textContent.trim();
    var done = function () { button.firstChild.textContent = "Copied"; };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { select(target); done(); });
    } else {
      select(target);
      done();
    }
  });
});

function select(element) {
  var range = document.createRange();
  range.selectNodeContents(element);
  var selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  document.execCommand("copy");
}
