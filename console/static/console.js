// Cohort console: live updates. Pages with live parts (elements with
// data-live and an id) listen to the node's event stream and, on a change,
// fetch the page again and swap those parts in place. Nothing else runs
// here: every page works without this script, only without live updates.
(function () {
  'use strict';
  if (!document.body.hasAttribute('data-live-page') || !window.EventSource) {
    return;
  }
  var busy = false;
  var again = false;

  // A form being filled in (a rejection's reason) is not swapped away.
  function editing() {
    var a = document.activeElement;
    return a && (a.tagName === 'INPUT' || a.tagName === 'TEXTAREA' || a.tagName === 'SELECT') && a.closest('[data-live]');
  }

  function refresh() {
    if (busy || editing()) {
      again = true;
      return;
    }
    busy = true;
    fetch(location.href, { credentials: 'same-origin', headers: { 'X-Console-Live': '1' } })
      .then(function (r) {
        if (r.status === 401 || r.redirected) {
          location.reload(); // signed out: the page shows the sign-in form
          throw new Error('signed out');
        }
        if (!r.ok) {
          throw new Error('HTTP ' + r.status);
        }
        return r.text();
      })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, 'text/html');
        document.querySelectorAll('[data-live]').forEach(function (el) {
          var fresh = doc.getElementById(el.id);
          if (fresh) {
            el.replaceWith(document.importNode(fresh, true));
          }
        });
        document.body.setAttribute('data-refreshed', String(Date.now()));
      })
      .catch(function () {})
      .finally(function () {
        busy = false;
        if (again) {
          again = false;
          setTimeout(refresh, 250);
        }
      });
  }

  var stream = new EventSource('/console/events');
  stream.addEventListener('change', refresh);
  stream.addEventListener('tick', function () {
    if (document.querySelector('[data-running]') || again) {
      refresh();
    }
  });
})();
