/*
 * Vigil's page script, served (minified) at {base_url}/js/script.js:
 *
 *   <script defer data-site="PUBLIC_ID" src="https://vigil.example/js/script.js"></script>
 *
 * Plain ES2017, no dependencies, no cookies, nothing stored in the browser. It
 * posts Plausible's Events API payload ({n, u, d, r} and p for props) to
 * /api/event next to itself (same origin and base path as the script's src),
 * as text/plain with keepalive, so no preflight and no lost event on unload:
 * - a pageview on load (held back while the page is prerendered or hidden,
 *   until it is shown; again when restored from the back/forward cache);
 * - a pageview on SPA navigation (history.pushState, popstate), only when the
 *   pathname changed;
 * - "Outbound Link: Click" with prop url on a click or middle click of a link
 *   to another host (navigation is never held up);
 * - custom events: window.vigil('Signup', {props: {plan: 'pro'}}). Calls made
 *   before the script ran are kept by this snippet and sent once it loads:
 *   window.vigil = window.vigil || function () { (window.vigil.q = window.vigil.q || []).push(arguments) }
 *   Options: props, interactive (false: not counted against the bounce),
 *   u (the URL to record instead of location.href), callback (called with
 *   {status} or {error} once sent, or nothing when ignored).
 * Opting out: a browser with localStorage.vigil_ignore === 'true' sends
 * nothing. Unlike Plausible's script it does not skip localhost or browsers
 * under automation (navigator.webdriver).
 */
(function () {
  'use strict';
  var w = window;
  var doc = document;
  var loc = location;
  var me = doc.currentScript || doc.querySelector('script[data-site]');
  if (!me) return;
  var site = me.getAttribute('data-site') || me.getAttribute('data-domain');
  var api = new URL('../api/event', me.src).href;
  var last;

  function send(name, o) {
    o = o || {};
    var cb = o.callback;
    try {
      if (w.localStorage.vigil_ignore === 'true') return cb && cb();
    } catch (e) { /* storage blocked: count the visit */ }
    var body = { n: name, u: o.u || loc.href, d: site, r: doc.referrer || null };
    if (o.props) body.p = o.props;
    if (o.interactive === false) body.i = false;
    fetch(api, { method: 'POST', headers: { 'Content-Type': 'text/plain' }, keepalive: true, body: JSON.stringify(body) })
      .then(function (r) { if (cb) cb({ status: r.status }); }, function (e) { if (cb) cb({ error: e }); });
  }

  function page() {
    if (last === loc.pathname) return;
    last = loc.pathname;
    send('pageview');
  }

  function click(e) {
    if (e.type === 'auxclick' && e.button !== 1) return;
    var a = e.target && e.target.closest && e.target.closest('a[href]');
    if (a && typeof a.href === 'string' && a.host && a.host !== loc.host) send('Outbound Link: Click', { props: { url: a.href } });
  }

  var queued = (w.vigil && w.vigil.q) || [];
  w.vigil = send;

  var h = w.history;
  var push = h.pushState;
  h.pushState = function () {
    push.apply(this, arguments);
    page();
  };
  w.addEventListener('popstate', page);
  w.addEventListener('pageshow', function (e) {
    if (e.persisted) { last = null; page(); }
  });
  doc.addEventListener('click', click, true);
  doc.addEventListener('auxclick', click, true);

  if (doc.visibilityState === 'hidden' || doc.visibilityState === 'prerender') {
    doc.addEventListener('visibilitychange', function () {
      if (last === undefined && doc.visibilityState === 'visible') page();
    });
  } else {
    page();
  }
  for (var i = 0; i < queued.length; i++) send.apply(null, queued[i]);
})();
