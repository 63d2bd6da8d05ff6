// In-page voting on articles and comments: the vote forms work without JavaScript; with
// it, a vote is sent with fetch and the counts update in place, without reloading the page.
// Its words come translated from the page, in data attributes of its own <script> element
// (articles/base.html); English when a page leaves them out.
(function () {
  "use strict";

  var given = (document.currentScript && document.currentScript.dataset) || {};
  var WORDS = {
    withdrawUp: given.withdrawUp || "Withdraw your up-vote",
    withdrawDown: given.withdrawDown || "Withdraw your down-vote",
    voteUp: given.voteUp || "Vote up",
    voteDown: given.voteDown || "Vote down",
    votedUp: given.votedUp || "you voted up",
    votedDown: given.votedDown || "you voted down",
    point: given.point || "point",
    points: given.points || "points",
    counts: given.counts || "{up} up, {down} down",
    failed: given.failed || "The vote did not go through.",
    offline: given.offline || "The vote did not go through; check your connection and try again.",
  };

  function setButton(button, direction, pressed) {
    var up = direction === "up";
    button.value = pressed ? "none" : direction;
    button.classList.toggle("on", pressed);
    button.setAttribute("aria-pressed", pressed ? "true" : "false");
    if (pressed) button.title = up ? WORDS.withdrawUp : WORDS.withdrawDown;
    else button.title = up ? WORDS.voteUp : WORDS.voteDown;
  }

  // An article's row or a comment: the fields of replies nested inside it are theirs.
  var ITEM = "[data-article], [data-comment]";

  // `arrow`: the button pressed. An article's arrows are its own vote form's buttons; a
  // comment's belong to the thread's one form (form="cf") and each names its comment's
  // vote (formaction), so what they update is found from the button, not the form.
  function update(arrow, data) {
    var item = arrow.closest(ITEM);
    if (!item) return;
    // A comment's row says the viewer's vote only when there is one: add its field.
    var meta = item.querySelector(":scope > details > .c-main > .c-body > .c-meta");
    if (meta && !meta.querySelector(":scope > [data-field=my_vote]")) {
      var said = document.createElement("span");
      said.className = "my-vote";
      said.setAttribute("data-field", "my_vote");
      meta.append(" ", said);
    }
    item.querySelectorAll("[data-field]").forEach(function (el) {
      if (el.closest(ITEM) !== item) return;
      var name = el.getAttribute("data-field");
      if (name === "my_vote") {
        el.textContent = { up: WORDS.votedUp, down: WORDS.votedDown }[data.my_vote] || "";
        el.classList.toggle("down", data.my_vote === "down");
      } else if (name === "points") {
        // The catalogue's two forms (English, German): one for 1, the other for the rest.
        el.textContent = data.net === 1 ? WORDS.point : WORDS.points;
      } else if (name === "counts") {
        el.title = WORDS.counts.replace("{up}", data.votes).replace("{down}", data.downvotes);
      } else if (name in data) {
        el.textContent = data[name];
      }
    });
    var box = arrow.closest(".vote");
    box.classList.toggle("voted-up", data.my_vote === "up");
    box.classList.toggle("voted-down", data.my_vote === "down");
    setButton(box.querySelector(".arrow.up"), "up", data.my_vote === "up");
    setButton(box.querySelector(".arrow.down"), "down", data.my_vote === "down");
  }

  // A refused vote is said at the item, beside the arrow pressed (and read out: role=alert),
  // not at the top of the page; the next vote on the item takes it away.
  function notice(arrow, text) {
    var item = arrow.closest(ITEM);
    var place = item && item.querySelector(":scope > .body, :scope > details > .c-main > .c-body");
    if (!place) place = arrow.closest(".vote").parentNode;
    var note = place.querySelector(":scope > .vote-note");
    if (!note) {
      note = document.createElement("p");
      note.className = "vote-note";
      note.setAttribute("role", "alert");
      place.appendChild(note);
    }
    note.textContent = text;
  }

  function clearNotice(arrow) {
    var item = arrow.closest(ITEM);
    var note = item && item.querySelector(":scope > .body > .vote-note, :scope > details > .c-main > .c-body > .vote-note");
    if (note) note.remove();
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    var button = event.submitter;
    var box = button && button.classList.contains("arrow") && button.closest(".vote");
    if (!box || !window.fetch) return; // not a vote, or a plain form post
    event.preventDefault();
    // URL-encoded, as the form itself posts without JavaScript (not multipart).
    var body = new URLSearchParams(new FormData(form));
    body.set("direction", button.value);
    box.classList.add("busy");
    fetch(button.hasAttribute("formaction") ? button.formAction : form.action, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      headers: { Accept: "application/json", "X-Requested-With": "fetch" },
    })
      .then(function (response) {
        return response.json().then(function (data) {
          if (response.ok) {
            clearNotice(button);
            update(button, data);
          } else if (response.status === 401 && data.login) {
            window.location.href = data.login;
          } else {
            notice(button, data.detail || WORDS.failed);
          }
        });
      })
      .catch(function () {
        notice(button, WORDS.offline);
      })
      .then(function () {
        box.classList.remove("busy");
      });
  });
})();
