(function () {
  "use strict";
  var svgs = document.querySelectorAll("svg.timeline");
  document.body.setAttribute("data-script", "ok");
  if (!svgs.length) return;
  var NS = svgs[0].namespaceURI;
  var G = +svgs[0].getAttribute("data-gutter");
  var W = +svgs[0].getAttribute("data-width");
  var T = +svgs[0].getAttribute("data-tend");
  var view = [0, T];

  function niceStep(span) {
    var raw = span / 8;
    if (raw <= 0) return 1;
    var mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var ms = [1, 2, 5];
    for (var i = 0; i < ms.length; i++) if (ms[i] * mag >= raw) return ms[i] * mag;
    return 10 * mag;
  }
  function label(t, step) {
    if (t === 0) return "0";
    var u = step >= 1e9 ? [1e9, "s"] : step >= 1e6 ? [1e6, "ms"] : step >= 1e3 ? [1e3, "\u00b5s"] : [1, "ns"];
    var d = Math.max(0, -Math.floor(Math.log10(step / u[0]) + 1e-9));
    return (t / u[0]).toFixed(d) + " " + u[1];
  }
  function el(name, attrs, text) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text) e.textContent = text;
    return e;
  }
  function ticks(svg, step) {
    var g = svg.querySelector("g.ticks");
    if (!g) return;
    var y = +g.getAttribute("data-y");
    while (g.firstChild) g.removeChild(g.firstChild);
    var span = view[1] - view[0];
    for (var i = Math.ceil(view[0] / step); i * step <= view[1] + step * 1e-9; i++) {
      var t = i * step, x = G + (t - view[0]) / span * W;
      g.appendChild(el("line", {x1: x, x2: x, y1: y, y2: y + 4}));
      g.appendChild(el("text", {x: x, y: y + 15}, label(t, step)));
    }
  }
  function place() {
    var span = view[1] - view[0], k = W / span, step = niceStep(span);
    function sx(x) { return G + ((x - G) * T / W - view[0]) * k; }
    for (var s = 0; s < svgs.length; s++) {
      var els = svgs[s].querySelectorAll(".plot rect, .plot line, .plot text");
      for (var i = 0; i < els.length; i++) {
        var e = els[i], o = e.kcheckX;
        if (!o) {
          o = e.kcheckX = e.tagName === "line" ?
            [+e.getAttribute("x1"), +e.getAttribute("x2")] :
            [+e.getAttribute("x"), +(e.getAttribute("width") || 0)];
        }
        if (e.tagName === "line") {
          e.setAttribute("x1", sx(o[0]));
          e.setAttribute("x2", sx(o[1]));
        } else {
          e.setAttribute("x", sx(o[0]));
          if (e.tagName === "rect") e.setAttribute("width", o[1] * T / W * k);
        }
      }
      ticks(svgs[s], step);
    }
    var st = document.querySelectorAll(".zoom-status");
    for (var j = 0; j < st.length; j++) st[j].textContent = label(view[0], step) + " \u2013 " + label(view[1], step);
    document.body.setAttribute("data-zoom", Math.round(view[0]) + "-" + Math.round(view[1]));
  }
  function zoom(a, b) {
    a = Math.max(0, Math.min(a, T));
    b = Math.max(0, Math.min(b, T));
    if (b - a < 1000) return;
    view = [a, b];
    place();
  }
  function xOf(svg, ev) {
    return Math.max(G, Math.min(G + W, ev.clientX - svg.getBoundingClientRect().left));
  }
  var drag = null;
  Array.prototype.forEach.call(svgs, function (svg) {
    svg.addEventListener("mousedown", function (ev) {
      if (ev.button !== 0 || ev.clientX - svg.getBoundingClientRect().left < G) return;
      var x = xOf(svg, ev);
      var r = el("rect", {"class": "sel", x: x, y: 0, width: 0, height: svg.getAttribute("height")});
      svg.appendChild(r);
      drag = {svg: svg, x0: x, rect: r};
      ev.preventDefault();
    });
    svg.addEventListener("dblclick", function () { zoom(0, T); });
  });
  window.addEventListener("mousemove", function (ev) {
    if (!drag) return;
    var x = xOf(drag.svg, ev);
    drag.rect.setAttribute("x", Math.min(x, drag.x0));
    drag.rect.setAttribute("width", Math.abs(x - drag.x0));
  });
  window.addEventListener("mouseup", function (ev) {
    if (!drag) return;
    var d = drag;
    drag = null;
    d.svg.removeChild(d.rect);
    var x = xOf(d.svg, ev), a = Math.min(x, d.x0), b = Math.max(x, d.x0);
    if (b - a < 4) return;
    var span = view[1] - view[0];
    zoom(view[0] + (a - G) / W * span, view[0] + (b - G) / W * span);
  });
  var buttons = document.querySelectorAll(".zoom-reset");
  for (var i = 0; i < buttons.length; i++) buttons[i].addEventListener("click", function () { zoom(0, T); });
  var q = new URLSearchParams(location.search).get("t");
  if (q) {
    var ab = q.split("-");
    zoom(+ab[0], +ab[1]);
  }
})();
