/*
 * citewall's embed loader: puts the member chat on a page of the host site.
 *
 *   <div id="citewall-chat"></div>
 *   <script src="https://CITEWALL/embed.js" data-target="#citewall-chat"
 *           data-token-url="/citewall/token" async></script>
 *
 * The chat runs in an iframe at https://CITEWALL/embed. When it asks (`citewall:ready`,
 * `citewall:token-needed`), the loader fetches the member's signed token from the host's own
 * data-token-url (GET, same-origin cookies, answering {"token": "..."}) and posts it to the iframe
 * only, with the conversation to reopen. The iframe tells the loader which conversation is open
 * (`citewall:conversation`); the loader keeps it in this tab's sessionStorage so that a reload
 * reopens it. Only messages from its own iframe, at citewall's origin, are heard.
 *
 * Single-page apps call window.CitewallEmbed.mount({ target, getToken }) instead, where
 * getToken() resolves to the member's signed token; mount() returns { unmount }.
 * Optional attributes (and mount() options): data-height (a CSS length or pixels; default
 * 600px) and data-title (the iframe's accessible name; default "Ask a question").
 *
 * Plain browser JavaScript, served as is (no build step).
 */
(function () {
  "use strict";

  var script = document.currentScript;
  if (!script || !script.src) return;
  var ORIGIN = new URL(script.src).origin;
  var STORE_KEY = "citewall.conversation";

  function storedConversation() {
    try {
      return window.sessionStorage.getItem(STORE_KEY);
    } catch {
      return null; // storage blocked: each load starts a new conversation
    }
  }

  function storeConversation(id) {
    try {
      if (typeof id === "string" && id) window.sessionStorage.setItem(STORE_KEY, id);
      else window.sessionStorage.removeItem(STORE_KEY);
    } catch {
      // storage blocked: nothing to keep
    }
  }

  function tokenFrom(url) {
    return function () {
      return fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (response) {
          if (!response.ok) throw new Error("the token URL answered HTTP " + response.status);
          return response.json();
        })
        .then(function (body) {
          if (!body || typeof body.token !== "string") throw new Error("no token in the answer");
          return body.token;
        });
    };
  }

  function mount(options) {
    var target =
      typeof options.target === "string" ? document.querySelector(options.target) : options.target;
    if (!target) throw new Error("citewall embed: no element " + options.target);
    if (typeof options.getToken !== "function") throw new Error("citewall embed: no getToken");

    var iframe = document.createElement("iframe");
    iframe.src = ORIGIN + "/embed";
    iframe.title = options.title || "Ask a question";
    iframe.allow = "clipboard-write";
    iframe.style.width = "100%";
    var height = String(options.height || "600px");
    iframe.style.height = /^\d+$/.test(height) ? height + "px" : height;
    iframe.style.border = "0";

    function sendToken() {
      Promise.resolve()
        .then(options.getToken)
        .then(function (token) {
          if (!iframe.contentWindow) return;
          var message = {
            type: "citewall:token",
            token: token,
            conversation: storedConversation(),
          };
          iframe.contentWindow.postMessage(message, ORIGIN);
        })
        .catch(function (err) {
          console.warn("citewall embed: could not get a token:", err);
        });
    }

    function onMessage(event) {
      if (event.source !== iframe.contentWindow || event.origin !== ORIGIN) return;
      var data = event.data;
      if (!data || typeof data !== "object") return;
      if (data.type === "citewall:ready" || data.type === "citewall:token-needed") sendToken();
      else if (data.type === "citewall:conversation") storeConversation(data.id);
    }

    window.addEventListener("message", onMessage);
    target.appendChild(iframe);
    return {
      unmount: function () {
        window.removeEventListener("message", onMessage);
        iframe.remove();
      },
    };
  }

  window.CitewallEmbed = { mount: mount };

  var selector = script.getAttribute("data-target");
  var tokenUrl = script.getAttribute("data-token-url");
  if (selector && !tokenUrl) throw new Error("citewall embed: data-token-url is missing");
  if (selector) {
    var start = function () {
      mount({
        target: selector,
        getToken: tokenFrom(tokenUrl),
        height: script.getAttribute("data-height"),
        title: script.getAttribute("data-title"),
      });
    };
    // An async script may run before the target is parsed.
    if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
    else start();
  }
})();
