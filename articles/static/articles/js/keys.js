// Keyboard shortcuts for the lists and threads: j/k move between articles and comments,
// u (or a) votes up and d (or z) down on the one the keyboard is on (pressed again, the
// vote is withdrawn, as the arrow does), o opens it, ? shows the list. The arrows and links
// do the work: a vote goes through vote.js, or to the login page when logged out. Its
// words come translated in data attributes of its own <script> element (articles/base.html).
(function () {
  "use strict";

  var given = (document.currentScript && document.currentScript.dataset) || {};
  var WORDS = {
    title: given.title || "Keyboard shortcuts",
    next: given.next || "Next article or comment",
    previous: given.previous || "Previous article or comment",
    up: given.up || "Vote up (again: withdraw the vote)",
    down: given.down || "Vote down (again: withdraw the vote)",
    open: given.open || "Open the article's link, or the comment",
    help: given.help || "Show these shortcuts",
    close: given.close || "Close",
    or: given.or || "or",
  };
  var ITEMS = "article.item[data-article], li.comment[data-comment]";
  var ACTIONS = {
    j: function () { move(1); },
    k: function () { move(-1); },
    u: function () { press("up"); },
    a: function () { press("up"); },
    d: function () { press("down"); },
    z: function () { press("down"); },
    o: open,
    "?": help,
  };
  var current = null;

  function shown(el) {
    return el.getClientRects().length > 0;
  }

  function items() {
    return Array.prototype.filter.call(document.querySelectorAll(ITEMS), shown);
  }

  function own(item, selector) {
    // A comment's own controls, not those of the replies nested in it.
    var scope = item.matches("li.comment") ? ":scope > details > .c-main " : ":scope > ";
    return item.querySelector(scope + selector);
  }

  function select(item) {
    if (current) current.classList.remove("kb-current");
    current = item;
    item.classList.add("kb-current");
    if (!item.hasAttribute("tabindex")) item.setAttribute("tabindex", "-1");
    item.focus({ preventScroll: true });
    item.scrollIntoView({ block: "nearest" });
  }

  function move(step) {
    var list = items();
    if (!list.length) return;
    var at = current ? list.indexOf(current) : -1;
    if (at < 0) {
      // From where the reader is: the first item (or the last, going up) in the window.
      var inView = list.filter(function (el) {
        var box = el.getBoundingClientRect();
        return box.bottom > 0 && box.top < window.innerHeight;
      });
      select(step > 0 ? inView[0] || list[0] : inView[inView.length - 1] || list[0]);
      return;
    }
    select(list[Math.min(list.length - 1, Math.max(0, at + step))]);
  }

  function press(direction) {
    if (!current) return;
    var arrow = own(current, ".vote .arrow." + direction);
    if (arrow && !arrow.classList.contains("off")) arrow.click();
  }

  function open() {
    if (!current) return;
    var link = current.matches("li.comment")
      ? own(current, ".c-body > .c-actions > a")
      : own(current, ".body > .title > a");
    if (link) link.click();
  }

  var dialog = null;

  function help() {
    if (!dialog) dialog = build();
    if (dialog.open) dialog.close();
    else dialog.showModal();
  }

  function build() {
    var box = document.createElement("dialog");
    box.className = "keys-help panel";
    box.setAttribute("aria-labelledby", "keys-help-title");
    var heading = document.createElement("h2");
    heading.id = "keys-help-title";
    heading.textContent = WORDS.title;
    var list = document.createElement("dl");
    [
      [["j"], WORDS.next],
      [["k"], WORDS.previous],
      [["u", "a"], WORDS.up],
      [["d", "z"], WORDS.down],
      [["o"], WORDS.open],
      [["?"], WORDS.help],
    ].forEach(function (row) {
      var keys = document.createElement("dt");
      row[0].forEach(function (name, n) {
        if (n) keys.appendChild(document.createTextNode(" " + WORDS.or + " "));
        var key = document.createElement("kbd");
        key.textContent = name;
        keys.appendChild(key);
      });
      var what = document.createElement("dd");
      what.textContent = row[1];
      list.appendChild(keys);
      list.appendChild(what);
    });
    var close = document.createElement("button");
    close.type = "button";
    close.className = "button";
    close.textContent = WORDS.close;
    close.addEventListener("click", function () { box.close(); });
    box.appendChild(heading);
    box.appendChild(list);
    box.appendChild(close);
    document.body.appendChild(box);
    return box;
  }

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    if (target.closest && target.closest("input, textarea, select, [contenteditable], dialog")) {
      return;
    }
    var action = ACTIONS[event.key];
    if (!action) return;
    event.preventDefault();
    action();
  });
})();
