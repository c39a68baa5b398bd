/*
 * history.js - draws flimflam's history page from the JSON ff-history
 * report puts in #history-data: one section per case and machine, one SVG
 * chart per metric, with the segments' medians, the change points and the
 * newest point's verdict. No library, no network.
 */
(function () {
	"use strict";
	var SVG = "http://www.w3.org/2000/svg";
	var data = JSON.parse(document.getElementById("history-data").textContent);

	function el(tag, attrs, text) {
		var e = document.createElement(tag);
		for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
		if (text !== undefined) e.textContent = text;
		return e;
	}
	function sv(tag, attrs, title) {
		var e = document.createElementNS(SVG, tag);
		for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
		if (title) {
			var t = document.createElementNS(SVG, "title");
			t.textContent = title;
			e.appendChild(t);
		}
		return e;
	}
	function fmt(metric, v) {
		if (v === null || v === undefined || !isFinite(v)) return "-";
		var unit = "", base = 1000, p = ["", "K", "M", "G", "T"];
		if (/bits_per_s$/.test(metric)) unit = "bit/s";
		else if (/_per_s$/.test(metric)) unit = "/s";
		else if (/_us$/.test(metric)) return sig3(v) + " us";
		else if (/bytes$/.test(metric)) { unit = "B"; base = 1024; p = ["", "Ki", "Mi", "Gi", "Ti"]; }
		var i = 0;
		while (unit && Math.abs(v) >= base - 0.5 && i < p.length - 1) { v /= base; i++; }
		return sig3(v) + (unit ? " " + p[i] + unit : "");
	}
	function sig3(v) {
		var a = Math.abs(v);
		return a >= 99.95 ? v.toFixed(0) : a >= 9.995 ? v.toFixed(1) : a >= 0.9995 ? v.toFixed(2) :
			v.toPrecision(3);
	}
	function pct(v) { return v === null ? "-" : (v >= 0 ? "+" : "") + v.toFixed(1) + "%"; }
	function who(p) {
		return (p.commit ? "commit " + p.commit.slice(0, 12) : "no commit") + ", " + (p.time || "");
	}

	function cpText(s, c) {
		var a = s.points[c.at - 1], b = s.points[c.at];
		return "change at point " + (c.at + 1) + ": " + (a.commit || a.time) + ".." + (b.commit || b.time) +
			": " + fmt(s.metric, c.before) + " -> " + fmt(s.metric, c.after) + ", " + pct(c.step_pct) +
			" [" + pct(c.lo_pct) + ", " + pct(c.hi_pct) + "], p " + c.p.toFixed(3) + ": " + c.verdict;
	}

	/* The segments between change points, each with its median. */
	function segments(s) {
		var bounds = [0].concat(s.change_points.map(function (c) { return c.at; }), [s.points.length]);
		var out = [];
		for (var i = 0; i + 1 < bounds.length; i++) {
			var v = s.points.slice(bounds[i], bounds[i + 1]).map(function (p) { return p.value; })
				.sort(function (x, y) { return x - y; });
			var n = v.length, med = n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
			out.push({ from: bounds[i], to: bounds[i + 1], median: med });
		}
		return out;
	}

	function chart(s) {
		var W = 720, H = 200, L = 70, R = 16, T = 22, B = 24;
		var svg = sv("svg", { "class": "chart", viewBox: "0 0 " + W + " " + H, width: W, height: H,
			role: "img", "aria-label": s.metric + " of " + s["case"], "data-metric": s.metric });
		var vals = s.points.map(function (p) { return p.value; });
		var lo = Math.min.apply(null, vals), hi = Math.max.apply(null, vals);
		if (lo === hi) { lo -= Math.abs(lo) * 0.05 || 1; hi += Math.abs(hi) * 0.05 || 1; }
		var pad = (hi - lo) * 0.08; lo -= pad; hi += pad;
		var n = s.points.length;
		function x(i) { return L + (n > 1 ? i * (W - L - R) / (n - 1) : (W - L - R) / 2); }
		function y(v) { return T + (hi - v) * (H - T - B) / (hi - lo); }
		svg.appendChild(sv("text", { x: L, y: 14, "class": "title" })).textContent =
			s.metric + " (" + (s.higher_better ? "higher" : "lower") + " is better)";
		[lo + pad, (lo + hi) / 2, hi - pad].forEach(function (v) {
			svg.appendChild(sv("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), "class": "grid", stroke: "#e3e3e3" }));
			svg.appendChild(sv("text", { x: L - 4, y: y(v) + 4, "text-anchor": "end" })).textContent = fmt(s.metric, v);
		});
		segments(s).forEach(function (g) {
			svg.appendChild(sv("line", { x1: x(g.from), x2: x(g.to - 1), y1: y(g.median), y2: y(g.median), "class": "seg" },
				"segment of points " + (g.from + 1) + "-" + g.to + ": median " + fmt(s.metric, g.median)));
		});
		s.change_points.forEach(function (c) {
			var cls = c.verdict === "worse" ? "worse" : c.verdict === "better" ? "better" : "same";
			var cx = (x(c.at - 1) + x(c.at)) / 2;
			svg.appendChild(sv("line", { x1: cx, x2: cx, y1: T - 4, y2: H - B + 4, "class": "cp " + cls,
				"data-at": c.at }, cpText(s, c)));
		});
		s.points.forEach(function (p, i) {
			svg.appendChild(sv("circle", { cx: x(i), cy: y(p.value), r: n > 200 ? 1.5 : 3, "class": "pt" },
				fmt(s.metric, p.value) + "\n" + who(p) + (p.version ? "\nbuild " + p.version : "") +
				(p.sha256 ? " sha256 " + p.sha256.slice(0, 12) : "") + (p.proton ? "\nProton " + p.proton : "")));
		});
		var last = s.points[n - 1], v = s.newest.verdict;
		svg.appendChild(sv("circle", { cx: x(n - 1), cy: y(last.value), r: 6, "class": "newest",
			stroke: v === "regression" ? "#c0392b" : v === "improvement" ? "#1e8449" : "#333" },
			"newest: " + fmt(s.metric, last.value) + ", " + who(last) + ": " + v));
		svg.appendChild(sv("text", { x: L, y: H - 6 })).textContent = (s.points[0].time || "") + " .. " + (last.time || "") +
			" (" + n + " point" + (n === 1 ? "" : "s") + ")";
		return svg;
	}

	function verdictLine(s) {
		var nv = s.newest, p = el("p");
		p.appendChild(document.createTextNode("Newest " + fmt(s.metric, s.points[s.points.length - 1].value) + ": "));
		if (nv.verdict !== "too few points")
			p.appendChild(document.createTextNode(pct(nv.change_pct) + " from the last stable segment (points " +
				(nv.stable_from + 1) + "-" + nv.stable_to + ", median " + fmt(s.metric, nv.stable_median) + "): "));
		p.appendChild(el("span", { "class": "verdict " + nv.verdict.replace(/ /g, "-") }, nv.verdict));
		return p;
	}

	var list = document.getElementById("series-list"), toc = document.getElementById("toc");
	var groups = [], byKey = {};
	data.series.forEach(function (s) {
		var k = s["case"] + "\n" + s.machine;
		if (!byKey[k]) { byKey[k] = { title: s["case"], machine: s.machine, series: [] }; groups.push(byKey[k]); }
		byKey[k].series.push(s);
	});
	document.getElementById("subtitle").textContent = data.series.length + " series of " + groups.length +
		" case" + (groups.length === 1 ? "" : "s") + " from " + data.db + "; threshold " + data.threshold_pct + "%";
	groups.forEach(function (g, gi) {
		var sec = el("section", { id: "case-" + gi, "class": "case" });
		sec.appendChild(el("h2", {}, g.title));
		sec.appendChild(el("p", { "class": "note" }, "on " + g.machine));
		toc.appendChild(el("a", { href: "#case-" + gi }, g.title));
		g.series.forEach(function (s) {
			var d = el("div", { "class": "series" });
			d.appendChild(chart(s));
			d.appendChild(verdictLine(s));
			if (s.change_points.length) {
				var ul = el("ul", { "class": "cps" });
				s.change_points.forEach(function (c) { ul.appendChild(el("li", {}, cpText(s, c))); });
				d.appendChild(ul);
			}
			sec.appendChild(d);
		});
		list.appendChild(sec);
	});
})();
