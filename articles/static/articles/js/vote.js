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

  function update(form, data) {
    var item = form.closest(ITEM);
    if (!item) return;
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
    var box = form.closest(".vote");
    box.classList.toggle("voted-up", data.my_vote === "up");
    box.classList.toggle("voted-down", data.my_vote === "down");
    setButton(form.querySelector(".arrow.up"), "up", data.my_vote === "up");
    setButton(form.querySelector(".arrow.down"), "down", data.my_vote === "down");
  }

  // A refused vote is said at the item, beside the arrow pressed (and read out: role=alert),
  // not at the top of the page; the next vote on the item takes it away.
  function notice(form, text) {
    var item = form.closest(ITEM);
    var place = item && item.querySelector(":scope > .body, :scope > details > .c-main > .c-body");
    if (!place) place = form.closest(".vote").parentNode;
    var note = place.querySelector(":scope > .vote-note");
    if (!note) {
      note = document.createElement("p");
      note.className = "vote-note";
      note.setAttribute("role", "alert");
      place.appendChild(note);
    }
    note.textContent = text;
  }

  function clearNotice(form) {
    var item = form.closest(ITEM);
    var note = item && item.querySelector(":scope > .body > .vote-note, :scope > details > .c-main > .c-body > .vote-note");
    if (note) note.remove();
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.classList || !form.classList.contains("vote-form")) return;
    var button = event.submitter;
    if (!button || !window.fetch) return; // plain form post
    event.preventDefault();
    // URL-encoded, as the form itself posts without JavaScript (not multipart).
    var body = new URLSearchParams(new FormData(form));
    body.set("direction", button.value);
    var box = form.closest(".vote");
    box.classList.add("busy");
    fetch(form.action, {
      method: "POST",
      body: body,
      credentials: "same-origin",
      headers: { Accept: "application/json", "X-Requested-With": "fetch" },
    })
      .then(function (response) {
        return response.json().then(function (data) {
          if (response.ok) {
            clearNotice(form);
            update(form, data);
          } else if (response.status === 401 && data.login) {
            window.location.href = data.login;
          } else {
            notice(form, data.detail || WORDS.failed);
          }
        });
      })
      .catch(function () {
        notice(form, WORDS.offline);
      })
      .then(function () {
        box.classList.remove("busy");
      });
  });
})();
