/* Sessionledger: progressive enhancement only. Every page works without this file.
 * - copy buttons, confirmations
 * - session page: filters apply as you type (the server filters; we swap the result in and
 *   keep the URL in step), later pages load as you scroll, j/k jump between turns, / finds. */
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  /* Take a state class off; an element left with none loses the attribute too, so the page reads as
     the server wrote it (no stray class="" where the server wrote no class at all). */
  function unmark(element, name) {
    element.classList.remove(name);
    if (!element.classList.length) { element.removeAttribute("class"); }
  }

  function copyText(text, button) {
    var done = function () {
      var label = button.getAttribute("data-label") || button.innerHTML;
      button.setAttribute("data-label", label);
      button.textContent = "Copied";
      setTimeout(function () { button.innerHTML = label; }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { fallbackCopy(text, done); });
    } else {
      fallbackCopy(text, done);
    }
  }

  function fallbackCopy(text, done) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "visually-hidden";
    document.body.appendChild(area);
    area.select();
    try { document.execCommand("copy"); done(); } catch (e) { /* the text stays selectable in the page */ }
    document.body.removeChild(area);
  }

  /* Only our own copy buttons copy: text from a transcript can never become a button (the
   * server escapes it), and a stray data-copy attribute elsewhere is ignored. */
  document.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-copy]");
    if (button) { event.preventDefault(); copyText(button.getAttribute("data-copy"), button); }
  });

  document.addEventListener("submit", function (event) {
    var form = event.target;
    var question = form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) { event.preventDefault(); }
  });

  var narrow = window.matchMedia("(max-width: 640px)").matches;
  document.querySelectorAll(".filter-box:not([data-active])").forEach(function (box) {
    if (narrow) { box.open = false; } /* on a phone the list comes first; filters are one tap away */
  });

  /* insights: a wide week chart that scrolls starts at its latest week */
  document.querySelectorAll(".chart-frame.scroll-end").forEach(function (frame) { frame.scrollLeft = frame.scrollWidth; });

  /* ---- session page ---------------------------------------------------------------------- */
  var filters = document.getElementById("message-filters");
  var conversation = document.getElementById("conversation");
  if (!filters || !conversation) { return; }
  if (window.matchMedia("(max-width: 980px)").matches) {
    /* on a narrow screen the panels sit above the conversation: start them folded, so the
     * conversation comes first (steps, turns and details are one tap away) */
    var folded = narrow ? ".reader-side details.panel" : ".reader-side .details-panel";
    document.querySelectorAll(folded).forEach(function (panel) { panel.open = false; });
  }

  function filterUrl() {
    var params = new URLSearchParams();
    var boxes = filters.querySelectorAll("input[name=role]");
    var checked = Array.prototype.filter.call(boxes, function (b) { return b.checked; });
    if (checked.length && checked.length < boxes.length) {
      checked.forEach(function (b) { params.append("role", b.value); });
    }
    ["since", "until", "q"].forEach(function (name) {
      var input = filters.elements[name];
      if (input && input.value.trim()) { params.set(name, input.value.trim()); }
    });
    var query = params.toString();
    return window.location.pathname + (query ? "?" + query : "");
  }

  function fetchText(url) {
    /* no header of our own: the later pages' request must match the page's preload of them */
    return fetch(url, { credentials: "same-origin" }).then(function (response) {
      if (!response.ok) { throw new Error("HTTP " + response.status); }
      return response.text();
    });
  }

  function parsePage(html) { return new DOMParser().parseFromString(html, "text/html"); }

  function fetchPage(url) { return fetchText(url).then(parsePage); }

  function swap(id, page) {
    var fresh = page.getElementById(id);
    var current = document.getElementById(id);
    if (fresh && current) { current.replaceWith(document.adoptNode(fresh)); }
  }

  var pending = 0;
  function apply() {
    var url = filterUrl();
    var ticket = ++pending;
    conversation.setAttribute("aria-busy", "true");
    fetchPage(url).then(function (page) {
      if (ticket !== pending) { return; }
      generation += 1;
      loading = false;
      foldChoice = null;
      swap("conversation", page);
      swap("turn-nav", page);
      swap("step-nav", page);
      swap("minimap", page);
      conversation = document.getElementById("conversation");
      var showing = document.getElementById("showing");
      var status = document.getElementById("filter-status");
      if (showing && status) { status.textContent = showing.textContent.split("·")[0].trim(); }
      history.replaceState(null, "", url);
      watchMore();
      watchTurns();
      showHit(0);
      loadAhead();
    }).catch(function () {
      window.location.assign(url); /* let the server page say what went wrong */
    });
  }

  var typing = null;
  filters.addEventListener("input", function (event) {
    if (event.target.name !== "q") { return; }
    clearTimeout(typing);
    typing = setTimeout(apply, 300);
  });
  filters.addEventListener("change", function (event) {
    if (event.target.name !== "q") { apply(); }
  });
  filters.addEventListener("submit", function (event) { event.preventDefault(); clearTimeout(typing); apply(); });

  /* Later pages (loadMore below). */
  var loading = false;
  var generation = 0; /* a new filter's conversation: pages still arriving for the old one are dropped */
  function appendPage(page) {
    var cards = page.getElementById("cards");
    var list = document.getElementById("cards");
    if (cards && list) {
      if (foldChoice !== null) { cards.querySelectorAll("details").forEach(function (d) { d.open = foldChoice; }); }
      /* one insertion, so one style and layout pass for the whole batch */
      var batch = document.createDocumentFragment();
      Array.prototype.slice.call(cards.children).forEach(function (node) { batch.appendChild(document.adoptNode(node)); });
      list.appendChild(batch);
    }
    var nav = document.getElementById("more");
    var next = page.getElementById("more");
    if (nav) { if (next) { nav.replaceWith(document.adoptNode(next)); } else { nav.remove(); } }
  }

  /* The next pages (up to 8) in one response holding only their cards (the link's data-ahead),
   * appended together: fetched once the first frame is painted (the head preloads that URL, so it
   * is usually here by then), and for a longer session again when the "Later messages" link
   * scrolls into view or is activated. Fetched one at a time as the reader reached each, every
   * page cost a round trip and a render. A failure fetched ahead leaves the link; one the reader
   * asked for opens the page. */
  function loadMore(link, quietly, text) {
    /* a link the pages it asked for have replaced is spent: an observer's notice queued before they
     * arrived may still come, and would append them again */
    if (loading || !link.isConnected) { return; }
    loading = true;
    var ticket = generation;
    link.setAttribute("aria-busy", "true");
    (text || fetchText(link.getAttribute("data-ahead") || link.href)).then(parsePage).then(function (page) {
      if (ticket !== generation) { return; }
      appendPage(page);
      loading = false;
      watchMore();
      watchTurns();
    }).catch(function () {
      if (ticket !== generation) { return; }
      loading = false;
      link.removeAttribute("aria-busy");
      if (!quietly) { window.location.assign(link.href); }
    });
  }

  function loadAhead(text) {
    var link = document.querySelector("#more [data-more]");
    if (link) { loadMore(link, true, text); }
  }

  var moreObserver = "IntersectionObserver" in window ? new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) { if (entry.isIntersecting) { loadMore(entry.target); } });
  }, { rootMargin: "600px 0px" }) : null;

  function watchMore() {
    var link = document.querySelector("#more [data-more]");
    if (!moreObserver) { return; }
    moreObserver.disconnect(); /* the last page in: nothing left to watch */
    if (link) { moreObserver.observe(link); }
  }
  document.addEventListener("click", function (event) {
    var link = event.target.closest("[data-more]");
    if (link) { event.preventDefault(); loadMore(link); }
  });

  /* Show a card or block: unfold it and the details around it (a card whose message is a folded
   * block, such as a tool call, unfolds that block), mark it, scroll to it (the CSS keeps a margin
   * above), focus it. */
  function reveal(target) {
    for (var node = target.parentElement; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
    var fold = target.tagName === "DETAILS" ? target
      : target.querySelector(":scope > details:first-child, :scope > header + details");
    if (fold) { fold.open = true; }
    document.querySelectorAll("#cards .is-target").forEach(function (old) { unmark(old, "is-target"); });
    target.classList.add("is-target");
    target.scrollIntoView({ block: "start" });
    if (!target.hasAttribute("tabindex")) { target.setAttribute("tabindex", "-1"); }
    target.focus({ preventScroll: true });
  }

  /* The element a permalink names: its own, or (for a message drawn inside another, or with no
   * link of its own) the innermost of the blocks the server names for ?at= (data-at). */
  function permalinkTarget(hash) {
    var target = document.getElementById(hash);
    if (target) { return target; }
    var cards = document.getElementById("cards");
    var at = new URLSearchParams(window.location.search).get("at");
    if (!cards || !cards.hasAttribute("data-at") || at !== hash.slice(2)) { return null; }
    var ids = cards.getAttribute("data-at").split(" ");
    for (var i = ids.length - 1; i >= 0; i--) {
      var found = document.getElementById(ids[i]);
      if (found) { return found; }
    }
    return null;
  }

  /* Turn and step navigation, permalinks: stay on the page when the target is already loaded. */
  document.addEventListener("click", function (event) {
    var link = event.target.closest("#turn-nav a[data-anchor], #step-nav a[data-anchor], a.plink");
    if (!link) { return; }
    var id = link.getAttribute("data-anchor") || decodeURIComponent(link.hash.slice(1));
    var target = document.getElementById(id);
    if (target) {
      event.preventDefault();
      reveal(target);
      history.replaceState(null, "", (link.classList.contains("plink") ? "?at=" + id.slice(2) : window.location.search) + "#" + id);
    }
  });

  /* A #m-… link to a message on a later page (lazy loading has not fetched it): ask the server
   * for the page holding it. */
  function resolveHash() {
    var hash = decodeURIComponent(window.location.hash.slice(1));
    if (!/^m-[0-9A-Za-z-]{1,64}$/.test(hash)) { return; }
    var target = permalinkTarget(hash);
    if (target) { reveal(target); return; }
    var params = new URLSearchParams(window.location.search);
    if (params.get("at") === hash.slice(2)) { return; } /* already asked: hidden by the filters */
    params.set("at", hash.slice(2));
    params.delete("page");
    window.location.replace(window.location.pathname + "?" + params.toString() + "#" + hash);
  }
  window.addEventListener("hashchange", resolveHash);

  /* Steps: e/d/c/p jump to the next error, edit, commit or prompt (Shift: previous); turns: j/k.
   * Both follow the server's navigation links, which know every page: a target not loaded yet
   * is opened by its link. Every press moves: until the reader scrolls, the position is the last
   * target landed on, not the window's top (a target near the end of the page, or a card
   * scrolled to with a margin, would be found again). */
  var landed = null;
  function jumpLink(nav, selector, step) {
    var links = Array.prototype.slice.call(document.querySelectorAll("#" + nav + " " + selector));
    if (!links.length) { return; }
    var position = currentIndex();
    if (landed && Math.abs(window.scrollY - landed.y) < 2) { position = landed.index; }
    var index = function (a) { return parseInt(a.getAttribute("data-i"), 10); };
    var target = null;
    if (step > 0) { target = links.filter(function (a) { return index(a) > position; })[0]; }
    else { target = links.filter(function (a) { return index(a) < position; }).pop(); }
    if (!target) { return; }
    var element = document.getElementById(target.getAttribute("data-anchor"));
    if (element) {
      reveal(element);
      history.replaceState(null, "", window.location.search + "#" + element.id);
      landed = { index: index(target), y: window.scrollY };
    } else {
      window.location.assign(target.href);
    }
    document.querySelectorAll("#" + nav + " a.current").forEach(function (a) { unmark(a, "current"); });
    target.classList.add("current");
    target.scrollIntoView({ block: "nearest" });
  }

  function jumpStep(kind, step) {
    jumpLink("step-nav", 'a[data-kind="' + kind + '"]', step);
  }

  function jumpTurn(step) {
    jumpLink("turn-nav", "a[data-anchor]", step);
  }

  /* The index of the message at the top of the window: the last anchored element above it. */
  function currentIndex() {
    /* nothing above the window's top yet: just before the first message loaded (a later page
     * opened on its own starts past the earlier ones) */
    var first = document.querySelector("#cards > [data-i]");
    var best = first ? parseInt(first.getAttribute("data-i"), 10) - 0.5 : -1;
    if (isNaN(best)) { best = -1; }
    document.querySelectorAll("#cards [data-i]").forEach(function (node) {
      var n = parseInt(node.getAttribute("data-i"), 10);
      if (isNaN(n)) { return; }
      if (node.getBoundingClientRect().top <= 30 && node.offsetParent !== null && n > best) { best = n; }
    });
    return best;
  }

  /* Expand / collapse every folded block of the conversation. The choice holds for the later
   * pages appended after it (they arrive on their own), until a filter brings a new conversation. */
  var foldChoice = null;
  function foldAll(open) {
    foldChoice = open;
    document.querySelectorAll("#cards details").forEach(function (d) { d.open = open; });
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest("button[data-fold]");
    if (button) { foldAll(button.getAttribute("data-fold") === "open"); }
  });

  var turnObserver = null;
  function watchTurns() {
    if (!("IntersectionObserver" in window)) { return; }
    if (turnObserver) { turnObserver.disconnect(); }
    turnObserver = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (!entry.isIntersecting) { return; }
        var nav = document.getElementById("turn-nav");
        if (!nav) { return; }
        nav.querySelectorAll("a.current").forEach(function (a) { unmark(a, "current"); });
        var link = nav.querySelector('a[data-anchor="' + CSS.escape(entry.target.id) + '"]');
        if (link) { link.classList.add("current"); }
      });
    }, { rootMargin: "0px 0px -70% 0px" });
    document.querySelectorAll("article.prompt").forEach(function (card) { turnObserver.observe(card); });
  }

  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) { return; }
    var tag = (event.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "textarea" || tag === "select" || event.target.isContentEditable) { return; }
    if (event.key === "j") { jumpTurn(1); }
    else if (event.key === "k") { jumpTurn(-1); }
    else if (event.key === "/") { event.preventDefault(); filters.elements.q.focus(); }
    else if (event.key === "n") { showHit(1); }
    else if (event.key === "N") { showHit(-1); }
    else if ("edcpEDCP".indexOf(event.key) >= 0 && event.key.length === 1) {
      var kinds = { e: "error", d: "edit", c: "commit", p: "prompt" };
      jumpStep(kinds[event.key.toLowerCase()], event.key === event.key.toLowerCase() ? 1 : -1);
    }
    else if (event.key === "x") { foldAll(true); }
    else if (event.key === "X") { foldAll(false); }
  });

  /* Find: the server marks matches and opens the folded blocks holding them; n/N step through
   * them, each scrolled into view (inside a scrolling output box too) and highlighted. */
  var hitAt = -1;
  function showHit(step) {
    var marks = document.querySelectorAll("#cards mark");
    if (!marks.length) { hitAt = -1; return; }
    marks.forEach(function (m) { unmark(m, "current"); });
    hitAt = step === 0 ? 0 : (hitAt + step + marks.length) % marks.length;
    var mark = marks[hitAt];
    for (var node = mark.parentElement; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") { node.open = true; }
    }
    mark.classList.add("current");
    mark.scrollIntoView({ block: "center" });
  }

  watchMore();
  watchTurns();
  if (filters.elements.q && filters.elements.q.value && !window.location.hash) { showHit(0); }
  resolveHash();
  /* again once loaded: the browser's own jump to the #fragment (to the link in a card's header,
   * without the margin) comes after this script */
  window.addEventListener("load", function () { if (window.scrollY > 0) { resolveHash(); } });
  /* The later pages: their text asked for now (the head's preload has it on the way), parsed and
   * appended after the first frame is painted (parsing them before would delay it), not after the
   * load event: they need nothing the load event waits for. */
  var ahead = document.querySelector("#more [data-more]");
  var aheadText = ahead ? fetchText(ahead.getAttribute("data-ahead") || ahead.href) : null;
  if (aheadText) { aheadText.catch(function () { /* loadMore handles it */ }); }
  requestAnimationFrame(function () {
    setTimeout(function () {
      /* unless a filter has swapped the conversation since: its own link is fetched */
      loadAhead(document.querySelector("#more [data-more]") === ahead ? aheadText : null);
    }, 0);
  });
})();
