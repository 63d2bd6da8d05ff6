// Inline replies: without JavaScript a comment's "reply" link opens its permalink page,
// which has the reply form; with it, the link opens that form under the comment instead.
(function () {
  "use strict";

  var template = document.getElementById("reply-template");
  if (!template) return; // logged out or commenting closed: the links go to the page

  function key() {
    if (window.crypto && window.crypto.randomUUID) return window.crypto.randomUUID();
    return String(Date.now()) + String(Math.random()).slice(2);
  }

  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a.reply-link");
    if (link) {
      // The comment is the link's own <li id="c<id>">.
      var comment = link.closest("li.comment[data-comment]");
      if (!comment) return;
      var id = comment.getAttribute("data-comment");
      event.preventDefault();
      var open = comment.querySelector(".c-body > .reply-form");
      if (open) {
        open.querySelector("textarea").focus();
        return;
      }
      var form = template.content.firstElementChild.cloneNode(true);
      form.querySelector("[name=parent]").value = id;
      form.querySelector("[name=idempotency_key]").value = key();
      var text = form.querySelector("textarea");
      text.id = "reply-text-" + id;
      form.querySelector("label").setAttribute("for", text.id);
      link.closest(".c-actions").after(form);
      text.focus();
      return;
    }
    var cancel = event.target.closest && event.target.closest(".reply-form .cancel");
    if (cancel) {
      event.preventDefault();
      cancel.closest(".reply-form").remove();
    }
  });
})();
