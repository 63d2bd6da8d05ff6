// Live pages: one EventSource on the page's live stream (the [data-live] element at the end
// of the page, articles.web.livepage) keeps its points, its comments, /new/'s list and the
// header's inbox count up to date. Without JavaScript, or while the stream is unavailable,
// the page is as complete as when it was served; a reload brings it up to date.
// Events replay idempotently: a count is set, never added to, and a comment or article
// already on the page is not counted again. Its words come translated from the page, in
// data attributes of its own <script> element (articles/base.html); English when left out.
(function () {
  "use strict";

  var given = (document.currentScript && document.currentScript.dataset) || {};
  var WORDS = {
    newComment: given.newComment || "{n} new comment",
    newComments: given.newComments || "{n} new comments",
    newArticle: given.newArticle || "{n} new article",
    newArticles: given.newArticles || "{n} new articles",
    missed: given.missed || "This page missed some updates.",
    reload: given.reload || "Reload",
    point: given.point || "point",
    points: given.points || "points",
    unreadReply: given.unreadReply || "unread reply",
    unreadReplies: given.unreadReplies || "unread replies",
  };
  var RETRY_MAX = 60000; // ms: the longest wait between two tries after the stream failed
  var ITEM = "[data-article], [data-comment]";

  function start() {
    var source = document.querySelector("[data-live]");
    if (!source || !window.EventSource || !window.fetch || !window.DOMParser) return;
    var address = source.getAttribute("data-live");
    var since = source.getAttribute("data-live-since") || "";
    var lastId = ""; // the last event id seen: where a new connection resumes
    var stream = null;
    var failures = 0;
    var timer = null;
    // What a click on a notice brings in: id -> the time (ms) of its event.
    var pending = { comments: {}, new: {} };
    var seen = { comments: {}, new: {} }; // once pending, since shown or found elsewhere

    function plural(n, one, many) {
      // The catalogue's two forms (English, German): one for 1, the other for the rest.
      return (n === 1 ? one : many).replace("{n}", n);
    }

    // --- points --------------------------------------------------------------------
    // The event has the net alone: the "3 up, 1 down" on hover, now unknown, goes.
    function setNet(item, net) {
      item.querySelectorAll("[data-field=net], [data-field=points], [data-field=counts]").forEach(function (el) {
        if (el.closest(ITEM) !== item) return; // a reply's own fields inside a comment
        var name = el.getAttribute("data-field");
        if (name === "counts") {
          var shown = el.querySelector("[data-field=net]");
          if (!shown || shown.textContent !== String(net)) el.removeAttribute("title");
        } else if (name === "net") el.textContent = net;
        else el.textContent = net === 1 ? WORDS.point : WORDS.points;
      });
    }

    function onVote(data) {
      document.querySelectorAll('[data-article="' + Number(data.article) + '"]').forEach(function (item) {
        setNet(item, data.net);
      });
    }

    function onCommentVote(data) {
      var item = document.getElementById("c" + Number(data.comment));
      if (item && item.hasAttribute("data-comment")) setNet(item, data.net);
    }

    // --- notices ---------------------------------------------------------------------
    // A notice's place exists (empty) from the start, as a polite live region, so what is
    // put in it is read out; it never takes the focus.
    function place(kind) {
      var box = document.querySelector('[data-live-notice="' + kind + '"]');
      if (box && !box.hasAttribute("role")) box.setAttribute("role", "status");
      return box;
    }

    function showCount(kind) {
      var box = place(kind);
      if (!box) return;
      var n = Object.keys(pending[kind]).length;
      if (!n) {
        box.textContent = "";
        return;
      }
      var text = kind === "comments"
        ? plural(n, WORDS.newComment, WORDS.newComments)
        : plural(n, WORDS.newArticle, WORDS.newArticles);
      var button = box.querySelector("button");
      if (!button) {
        button = document.createElement("button");
        button.type = "button";
        button.className = "button primary live-show";
        button.addEventListener("click", function () {
          bringUpToDate(kind, button);
        });
        box.appendChild(button);
      }
      if (button.textContent !== text) button.textContent = text;
    }

    function onComment(data) {
      var thread = document.getElementById("comments");
      var id = String(Number(data.comment));
      if (!thread || document.getElementById("c" + id) || seen.comments[id] || pending.comments[id]) return;
      // Shown here once brought up to date: a top-level comment on the article's page, a
      // reply to a comment on this page or to one on its way.
      var parent = data.parent === null || data.parent === undefined ? null : String(data.parent);
      var fits = parent === null
        ? thread.hasAttribute("data-live-top")
        : !!document.getElementById("c" + parent) || pending.comments[parent] !== undefined;
      if (!fits) return;
      pending.comments[id] = eventTime();
      showCount("comments");
    }

    function onPost(data) {
      var id = String(Number(data.article));
      if (!place("new") || document.getElementById("a" + id) || seen.new[id] || pending.new[id]) return;
      pending.new[id] = eventTime();
      showCount("new");
    }

    function eventTime() {
      return Number(String(lastId).split("-")[0]) || Date.now();
    }

    // Brings the thread or list up to date: the current page fetched again, its part
    // below the form put in place of this one. The reader's open reply forms (with what
    // they typed), folded comments and place on the page are kept; vote.js, comments.js
    // and keys.js listen on the document, so they work on the new part as on the old.
    function bringUpToDate(kind, button) {
      // Busy, not disabled: a disabled button would lose the keyboard's focus.
      if (button.getAttribute("aria-busy") === "true") return;
      button.setAttribute("aria-busy", "true");
      fetch(window.location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
        .then(function (response) {
          if (!response.ok) throw new Error(String(response.status));
          return response.text();
        })
        .then(function (text) {
          var fresh = new DOMParser().parseFromString(text, "text/html");
          var scope = kind === "comments" ? "#comments " : "";
          var old = document.querySelector(scope + "[data-live-list]");
          var made = fresh.querySelector(scope + "[data-live-list]");
          if (!old || !made) throw new Error("no list");
          made = document.importNode(made, true);
          swap(old, made);
          if (kind === "comments") {
            // The thread's count, and the article's row and facts (its comment count).
            ["#comments-title", ".detail > article.item", ".detail > dl.facts"].forEach(function (selector) {
              var now = document.querySelector(selector);
              var then = fresh.querySelector(selector);
              if (now && then) now.replaceWith(document.importNode(then, true));
            });
          }
          settle(kind, fresh, made);
          follow(fresh);
        })
        .catch(function () {
          // Left as it is (what the reader typed among it): the button stays for another try.
        })
        .then(function () {
          button.removeAttribute("aria-busy");
        });
    }

    function swap(old, made) {
      var anchor = firstInView(old);
      var before = anchor ? anchor.getBoundingClientRect().top : 0;
      var focused = document.activeElement;
      var focusInside = focused && old.contains(focused) ? focused : null;
      old.querySelectorAll(".reply-form").forEach(function (form) {
        var owner = form.closest("[data-comment]");
        var twin = owner && made.querySelector("#" + owner.id + " > details > .c-main > .c-body > .c-actions");
        if (twin) twin.after(form);
      });
      old.querySelectorAll("li.comment[id] > details").forEach(function (details) {
        var twin = made.querySelector("#" + details.parentNode.id + " > details");
        if (twin) twin.open = details.open;
      });
      old.replaceWith(made);
      if (focusInside && made.contains(focusInside)) focusInside.focus({ preventScroll: true });
      else if (focusInside && focusInside.closest("[id]")) {
        var same = document.getElementById(focusInside.closest("[id]").id);
        if (same) focusable(same).focus({ preventScroll: true });
      }
      var moved = anchor && document.getElementById(anchor.id);
      if (moved) window.scrollBy(0, moved.getBoundingClientRect().top - before);
    }

    function firstInView(root) {
      var items = root.querySelectorAll("[data-comment][id], [data-article][id]");
      for (var i = 0; i < items.length; i++) {
        var box = items[i].getBoundingClientRect();
        if (box.bottom > 0 && box.height) return items[i];
      }
      return null;
    }

    function focusable(el) {
      if (!el.hasAttribute("tabindex")) el.setAttribute("tabindex", "-1");
      return el;
    }

    // After a bring-up-to-date: what is now on the page is no longer pending; what is not,
    // and was made before the fetched page was, is elsewhere (another page of the thread):
    // forgotten. What the fetched page is older than (a page kept a moment in a cache)
    // stays, for the next click. The first new item takes the focus the button had.
    function settle(kind, fresh, made) {
      var sourceNow = fresh.querySelector("[data-live]");
      var madeAt = sourceNow ? Number(sourceNow.getAttribute("data-live-since")) : 0;
      var first = null;
      var prefix = kind === "comments" ? "c" : "a";
      Object.keys(pending[kind]).forEach(function (id) {
        var el = document.getElementById(prefix + id);
        if (el) {
          el.classList.add("live-new");
          if (!first || first.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_PRECEDING) first = el;
        }
        if (el || pending[kind][id] <= madeAt) {
          seen[kind][id] = true;
          delete pending[kind][id];
        }
      });
      showCount(kind);
      if (!Object.keys(pending[kind]).length) {
        var target = first || made;
        focusable(target).focus({ preventScroll: true });
        target.scrollIntoView({ block: "nearest" });
      }
    }

    // A list brought up to date may show other rows: the stream follows the new page's.
    function follow(fresh) {
      var sourceNow = fresh.querySelector("[data-live]");
      var next = sourceNow && sourceNow.getAttribute("data-live");
      if (!next || next === address) return;
      address = next;
      source.setAttribute("data-live", next);
      if (stream) {
        stream.close();
        connect();
      }
    }

    // --- inbox -----------------------------------------------------------------------
    function onInbox(data) {
      var link = document.querySelector(".inbox-link");
      if (!link) return;
      var n = Number(data.unread) || 0;
      var badge = link.querySelector(".badge");
      link.classList.toggle("has-unread", n > 0);
      if (!n) {
        if (badge) {
          var space = badge.previousSibling;
          if (space && space.nodeType === Node.TEXT_NODE && !space.textContent.trim()) space.remove();
          badge.remove();
        }
        return;
      }
      if (!badge) {
        badge = document.createElement("span");
        badge.className = "badge";
        link.append(" ", badge);
      }
      var hidden = document.createElement("span");
      hidden.className = "visually-hidden";
      hidden.textContent = " " + (n === 1 ? WORDS.unreadReply : WORDS.unreadReplies);
      badge.replaceChildren(String(n), hidden);
    }

    // --- events were lost ---------------------------------------------------------------
    function onReload() {
      var box = document.querySelector("[data-live-notice=page]");
      if (!box) {
        box = document.createElement("div");
        box.className = "live-notice";
        box.setAttribute("data-live-notice", "page");
        box.setAttribute("role", "status");
        var main = document.querySelector("main") || document.body;
        main.prepend(box);
      }
      if (box.firstChild) return;
      // Put in after the region is in place, so it is read out.
      window.setTimeout(function () {
        var text = document.createElement("p");
        text.className = "live-missed";
        text.textContent = WORDS.missed + " ";
        var button = document.createElement("button");
        button.type = "button";
        button.className = "button primary";
        button.textContent = WORDS.reload;
        button.addEventListener("click", function () {
          window.location.reload();
        });
        text.appendChild(button);
        box.appendChild(text);
      }, 50);
    }

    // --- the stream --------------------------------------------------------------------
    var HANDLERS = {
      vote: onVote,
      cvote: onCommentVote,
      comment: onComment,
      post: onPost,
      inbox: onInbox,
      reload: onReload,
    };

    function url() {
      var from = lastId || since;
      if (!from) return address;
      return address + (address.indexOf("?") < 0 ? "?" : "&") + "since=" + encodeURIComponent(from);
    }

    function connect() {
      window.clearTimeout(timer);
      stream = new EventSource(url());
      state("connecting");
      stream.onopen = function () {
        failures = 0;
        state("open");
      };
      // A dropped connection is retried by EventSource itself (Last-Event-ID); a refused
      // one (503, 429, a proxy's error page) closes it: tried again here, ever later.
      stream.onerror = function () {
        if (stream.readyState === EventSource.CLOSED) retry();
        else state("connecting");
      };
      // No live updates where this page is served (a WSGI-only server): stop asking.
      stream.addEventListener("unavailable", function () {
        window.clearTimeout(timer);
        stream.close();
        state("unavailable");
      });
      Object.keys(HANDLERS).forEach(function (name) {
        stream.addEventListener(name, function (event) {
          if (event.lastEventId) lastId = event.lastEventId;
          var data;
          try {
            data = JSON.parse(event.data);
          } catch (e) {
            return;
          }
          HANDLERS[name](data || {});
        });
      });
    }

    // Where the stream stands, on its element: for whoever looks (a test, a developer).
    function state(name) {
      source.setAttribute("data-live-state", name);
    }

    function retry() {
      stream.close();
      state("waiting");
      var wait = Math.min(RETRY_MAX, 1000 * Math.pow(2, failures));
      failures += 1;
      timer = window.setTimeout(connect, wait / 2 + Math.random() * (wait / 2));
    }

    // Closed while the page is put away (so the browser may keep it in its back-forward
    // cache), opened again where it left off when it comes back.
    window.addEventListener("pagehide", function () {
      window.clearTimeout(timer);
      if (stream) stream.close();
      stream = null;
      state("closed");
    });
    window.addEventListener("pageshow", function (event) {
      if (event.persisted && !stream) connect();
    });

    place("comments");
    place("new");
    connect();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
