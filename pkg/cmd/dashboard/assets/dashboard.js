// The traffic-migration dashboard: renders the pages the server sends as
// server-sent events, and draws the charts with uPlot (embedded, see
// vendor/uplot/README.md). The server sends the whole page's data on every change,
// with every text already formatted (package policyview): this script only draws it.
(function () {
  "use strict";

  const main = document.getElementById("main");
  const crumbs = document.getElementById("crumbs");
  const live = document.getElementById("live");
  const css = getComputedStyle(document.documentElement);
  const color = (name) => css.getPropertyValue("--" + name).trim();
  let updates = 0;
  let plots = new Map(); // cluster name -> uPlot, on a policy page

  // h builds an element: h("td", {class: "x"}, "text", child, ...).
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith("data-")) el.setAttribute(k, String(v));
      else if (k === "class") el.className = v;
      else if (k === "color") el.style.color = v; // through the CSSOM: the CSP forbids style attributes
      else el.setAttribute(k, v);
    }
    for (const c of children.flat()) {
      if (c === undefined || c === null || c === false) continue;
      el.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return el;
  }
  const badge = (text, cls) => h("span", { class: "badge " + (cls || text) }, text || "none");
  // A stalled drain's mark; its row's message says why and what to do.
  const stalledBadge = () => badge("stalled", "Stalled");
  const policyHref = (ns, name) => "/policies/" + encodeURIComponent(ns) + "/" + encodeURIComponent(name);
  const fmtTime = (s) => new Date(s * 1000).toLocaleTimeString();
  const muted = (text) => h("span", { class: "muted" }, text || "–");

  // Routing: "/" is the fleet, "/policies/{namespace}/{name}" a policy.
  const m = location.pathname.match(/^\/policies\/([^/]+)\/([^/]+)\/?$/);
  const route = m
    ? { kind: "policy", ns: decodeURIComponent(m[1]), name: decodeURIComponent(m[2]) }
    : { kind: "fleet" };
  const events = route.kind === "policy"
    ? "/api/events/policies/" + encodeURIComponent(route.ns) + "/" + encodeURIComponent(route.name)
    : "/api/events/fleet";

  function setLive(state) {
    live.dataset.state = state;
    live.textContent = state === "live" ? "live" : state;
  }

  const source = new EventSource(events);
  source.addEventListener("open", () => setLive("live"));
  source.addEventListener("error", () => setLive("reconnecting"));
  source.addEventListener("page", (ev) => {
    const data = JSON.parse(ev.data);
    setLive("live");
    if (data.error) {
      main.replaceChildren(h("div", { class: "problem" }, data.error));
    } else if (route.kind === "policy") {
      renderPolicy(data);
    } else {
      renderFleet(data);
    }
    updates++;
    document.body.dataset.updates = String(updates);
  });

  // The fleet page.
  function renderFleet(v) {
    crumbs.replaceChildren(v.namespace ? "namespace " + v.namespace : "all namespaces");
    const totals = h("div", { class: "totals" },
      h("div", { class: "total" }, h("b", {}, v.items.length), "policies"),
      v.totals.map((t) => h("div", { class: "total", "data-phase": t.phase }, h("b", {}, t.clusters), t.phase.toLowerCase() + " clusters")));
    let body;
    if (v.items.length === 0) {
      body = h("p", { class: "empty" }, "No TrafficMigrationPolicy " + (v.namespace ? "in namespace " + v.namespace : "on this hub") + " yet.");
    } else {
      body = h("table", { id: "policies" },
        h("thead", {}, h("tr", {}, ["Policy", "Ready", "Prometheus", "Placement → proxy", "Active", "Draining", "Clusters by phase"].map((t) => h("th", {}, t)))),
        h("tbody", {}, v.items.map((p) => h("tr", { "data-policy": p.namespace + "/" + p.name },
          h("td", {}, h("a", { href: policyHref(p.namespace, p.name) }, p.namespace + "/" + p.name), p.suspended ? [" ", badge("suspended", "Held")] : null),
          h("td", { title: p.readyMessage || "" }, badge(p.ready || "Unknown"), p.readyReason ? h("div", { class: "muted" }, p.readyReason) : null),
          h("td", {}, p.prometheus || muted()),
          h("td", {}, p.placement, " → ", h("b", {}, p.proxyPlacement), h("div", { class: "muted" }, p.proxyClusters + " in the proxy")),
          h("td", {}, p.activeClusters),
          h("td", {}, p.drainingClusters),
          h("td", {}, (p.phases || []).map((g) => h("div", {}, badge(g.phase), " ", g.clusters.join(", "))),
            p.stalledClusters ? h("div", { class: "stalled" }, badge("stalled", "Stalled"), " ", p.stalledClusters.join(", ")) : null),
        ))));
    }
    main.replaceChildren(h("h1", {}, "Fleet"), h("p", { class: "sub" }, "Every TrafficMigrationPolicy and where its clusters stand."), totals, body);
  }

  // A policy's page.
  function renderPolicy(p) {
    crumbs.replaceChildren(h("a", { href: "/" }, "fleet"), " / " + p.namespace + "/" + p.name);
    if (!p.found) {
      destroyPlots(new Set());
      main.replaceChildren(h("h1", {}, p.namespace + "/" + p.name),
        h("div", { class: "problem", id: "not-found" }, "There is no TrafficMigrationPolicy " + p.name + " in namespace " + p.namespace + " (any more)."));
      return;
    }
    const ch = p.check;
    const facts = h("dl", { class: "facts" }, [
      ["Ready", h("span", { title: p.readyMessage || "" }, badge(p.ready || "Unknown"), " ", p.readyReason || "")],
      ["Placement", p.placement + " → proxy " + p.proxyPlacement + " (in the proxy: " + p.proxyClusters + "; " + p.activeClusters + " active, " + p.drainingClusters + " draining)"],
      ["Gateway", p.gateway],
      ["Check", ch.summary + ", every " + ch.interval + ", " + ch.consecutiveSuccesses + " passes in a row; no data: " + ch.noDataPolicy],
      ["Drain", "at least " + ch.minDrainDuration + "; deadline: " + ch.deadline + (p.suspended ? "; removals suspended" : "")],
      ["Replacement", "a cluster leaves while " + ch.replacement + " remain"],
      p.dns ? ["DNS", p.dns.summary] : null,
    ].filter(Boolean).flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));

    // Keep the chart elements of clusters still charted, so a live update redraws
    // in place instead of rebuilding the page.
    let charts = document.getElementById("charts");
    if (!charts || charts.dataset.policy !== p.namespace + "/" + p.name) {
      destroyPlots(new Set());
      charts = h("div", { id: "charts", "data-policy": p.namespace + "/" + p.name });
    }
    const keep = new Set(p.charts.map((c) => c.cluster));
    destroyPlots(keep);
    for (const el of Array.from(charts.children)) {
      if (!keep.has(el.dataset.cluster)) el.remove();
    }
    if (p.charts.length === 0) {
      charts.replaceChildren(h("p", { class: "empty", id: "no-charts" }, "No cluster is draining: a chart appears here for each cluster that leaves the real Placement."));
    } else {
      const none = document.getElementById("no-charts");
      if (none) none.remove();
    }

    const conditions = h("table", { id: "conditions" },
      h("thead", {}, h("tr", {}, ["Condition", "Status", "Reason", "Message"].map((t) => h("th", {}, t)))),
      h("tbody", {}, p.conditions.map((c) => h("tr", {}, h("td", {}, c.type), h("td", {}, badge(c.status)), h("td", {}, c.reason), h("td", {}, c.message || "")))));
    const clusters = h("table", { id: "clusters" },
      h("thead", {}, h("tr", {}, ["Cluster", "Phase", "Last check", "Passes in a row", "Expected out", "Message"].map((t) => h("th", {}, t)))),
      h("tbody", {}, p.clusters.map((c) => h("tr", { "data-cluster": c.name, "data-phase": c.phase },
        h("td", {}, c.name), h("td", {}, badge(c.phase), c.stalled ? [" ", stalledBadge()] : null),
        h("td", { title: c.lastValue || "" }, c.lastResult ? [badge(c.lastResult), " ", c.value || ""] : muted()),
        h("td", {}, c.successes || muted()),
        h("td", { title: c.estimatedRemovalTime || "" }, c.expected || muted()),
        h("td", {}, c.message || "")))));

    main.replaceChildren(
      h("h1", {}, p.namespace + "/" + p.name),
      h("div", { class: "card" }, facts),
      h("h2", {}, "Draining clusters"), charts,
      h("h2", {}, "Clusters"), clusters,
      h("h2", {}, "Conditions"), conditions);

    for (const c of p.charts) drawChart(charts, p, c);
  }

  function destroyPlots(keep) {
    for (const [name, u] of plots) {
      if (!keep.has(name)) { u.destroy(); plots.delete(name); }
    }
  }

  // The moments marked on a chart by vertical lines.
  function marksOf(c) {
    const marks = [
      { t: c.drainStart, label: "drain start", color: color("draining") },
    ];
    if (c.minDrainEnd) marks.push({ t: c.minDrainEnd, label: "minDrainDuration ends", color: "#6d28d9" });
    if (c.dnsWithdrawal) marks.push({ t: c.dnsWithdrawal, label: "out of DNS", color: "#0369a1" });
    if (c.maxDrainEnd) marks.push({ t: c.maxDrainEnd, label: "maxDrainDuration ends", color: color("held") });
    if (c.removal) marks.push({ t: c.removal, label: "removed", color: "#111827" });
    return marks;
  }

  function drawChart(container, p, c) {
    const ch = p.check;
    let box = container.querySelector('.chart[data-cluster="' + CSS.escape(c.cluster) + '"]');
    if (!box) {
      box = h("div", { class: "card chart", "data-cluster": c.cluster });
      container.append(box);
    }
    const passed = c.passed.filter((v) => v !== null).length;
    const failed = c.failed.filter((v) => v !== null).length;
    const noValue = c.noValue.filter((v) => v !== null).length;
    const points = c.values.filter((v) => v !== null).length;
    Object.assign(box.dataset, {
      phase: c.phase, source: c.source, threshold: p.hasThreshold ? String(p.threshold) : "",
      checks: String(c.checks.length), passed: String(passed), failed: String(failed),
      points: String(points), removal: c.removal ? String(c.removal) : "",
    });
    const marks = marksOf(c);
    const heading = [
      h("h3", {}, c.cluster, " ", badge(c.phase), c.stalled ? [" ", stalledBadge()] : null),
      c.stalled ? h("p", { class: "problem stalled" }, "Stalled: ", p.stalledHint) : null,
      h("p", { class: "source " + c.source }, c.sourceNote),
      c.query ? h("p", { class: "source" }, "Query: ", h("code", {}, c.query)) : null,
    ];
    const markList = h("div", { class: "marks" }, marks.map((mk) => h("span", { color: mk.color }, mk.label + " " + fmtTime(mk.t))));
    let plotEl = box.querySelector(".plot");
    if (!plotEl) plotEl = h("div", { class: "plot" });
    box.replaceChildren(...heading.filter(Boolean), plotEl, markList);

    // The chart's times are the values' and checks' and the marked moments, so that
    // the threshold line spans the whole chart and uPlot always has a span to draw.
    const times = Array.from(new Set(c.times.concat(marks.map((mk) => mk.t)))).sort((a, b) => a - b);
    const at = new Map(c.times.map((t, i) => [t, i]));
    const pick = (series) => times.map((t) => (at.has(t) ? series[at.get(t)] : null));
    const values = pick(c.values), pass = pick(c.passed), fail = pick(c.failed), nov = pick(c.noValue), texts = pick(c.texts);
    const thr = times.map(() => (p.hasThreshold ? p.threshold : null));
    const data = [times, values, thr, pass, fail, nov];

    const existing = plots.get(c.cluster);
    if (existing) {
      existing.__marks = marks;
      existing.__texts = texts;
      existing.setData(data);
      return;
    }
    // A value under the cursor is shown as the server wrote it.
    const text = (u, v, s, i) => (v === null || i === null ? "–" : u.__texts[i] || "–");
    const width = Math.max(320, (container.clientWidth || 900) - 34);
    const scatter = (label, col) => ({
      label, stroke: col, fill: col, paths: () => null,
      points: { show: true, space: 0, size: 10, width: 1, stroke: "#fff", fill: col },
      value: text,
    });
    const opts = {
      width, height: 280,
      cursor: { points: { size: 8 } },
      scales: {
        x: { time: true, range: (u, min, max) => {
          const pad = Math.max(1, (max - min) * 0.02);
          return [min - pad, max + pad];
        } },
        y: { range: (u, min, max) => {
          const lo = Math.min(0, min ?? 0, p.hasThreshold ? p.threshold : 0);
          const hi = Math.max(max ?? 0, p.hasThreshold ? p.threshold : 0, lo + 1e-9);
          return [lo, hi + (hi - lo) * 0.25];
        } },
      },
      axes: [{}, { size: 60, label: p.valueLabel, labelSize: 20 }],
      series: [
        {},
        { label: c.source === "prometheus" ? "value (Prometheus)" : "value (status history)", stroke: color("active"), width: 2, spanGaps: true,
          points: { show: c.source !== "prometheus" }, value: text },
        { label: "threshold " + (ch.expectation || "(none)"), stroke: color("threshold"), width: 2, dash: [8, 5], points: { show: false } },
        scatter("passed check", color("pass")),
        scatter("failed check", color("fail")),
        scatter("check without value (drawn on the threshold)", color("novalue")),
      ],
      hooks: {
        draw: [(u) => {
          const ctx = u.ctx;
          ctx.save();
          ctx.font = Math.round(11 * devicePixelRatio) + "px system-ui, sans-serif";
          ctx.textBaseline = "top";
          let row = 0;
          for (const mk of u.__marks) {
            const x = Math.round(u.valToPos(mk.t, "x", true));
            if (x < u.bbox.left - 1 || x > u.bbox.left + u.bbox.width + 1) continue;
            ctx.strokeStyle = mk.color;
            ctx.fillStyle = mk.color;
            ctx.lineWidth = 2 * devicePixelRatio;
            ctx.setLineDash([4 * devicePixelRatio, 3 * devicePixelRatio]);
            ctx.beginPath();
            ctx.moveTo(x, u.bbox.top);
            ctx.lineTo(x, u.bbox.top + u.bbox.height);
            ctx.stroke();
            const text = mk.label;
            const tw = ctx.measureText(text).width;
            const tx = x + 4 + tw > u.bbox.left + u.bbox.width ? x - 4 - tw : x + 4;
            ctx.fillText(text, tx, u.bbox.top + 4 + row * 14 * devicePixelRatio);
            row = (row + 1) % 3;
          }
          ctx.restore();
        }],
      },
    };
    const u = new uPlot(opts, data, (self, init) => { self.__marks = marks; self.__texts = texts; init(); });
    plotEl.append(u.root);
    plots.set(c.cluster, u);
  }
})();
