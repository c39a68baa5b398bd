/*
 * curves.js - the report page's sweeps, drawn after report.js with its
 * helpers (window.report.lib): the cases that differ in one dimension only
 * (--jobs, --request-size, --response-size, --rate, a relay's workers)
 * are the points of a sweep, and each sweep is a set of curves of the
 * figures against that dimension: throughput, latency p50 and p99, relay
 * CPU, and relay RSS at the window's end (against jobs: what a connection
 * costs); one line per series (a relay, or a build), each point the median of
 * its ok runs. An axis is logarithmic where its values span two decades or
 * more. A rate sweep of bench --slo marks each series' knee: the highest
 * rate that met the target.
 *
 * Every curve is an svg[data-chart="sweep"] with data-dim, data-metric,
 * data-points and data-scale-x/-y; each point a circle.pt with data-x,
 * data-value, data-series; the knee a line.knee with data-rate.
 */
(function () {
	'use strict';

	var R = window.report, D = R.data, L = R.lib, h = L.h, s = L.s;
	var DIMS = [
		{ key: 'jobs', title: 'Jobs (connections)' },
		{ key: 'workers', title: 'Relay workers' },
		{ key: 'request_size', title: 'Request size (bytes)' },
		{ key: 'response_size', title: 'Response size (bytes)' },
		{ key: 'rate_per_s', title: 'Rate asked (/s)' }
	];
	var FIGS = [
		{ key: 'bits_per_s', title: 'Throughput', unit: 'bit/s', fmt: L.si },
		{ key: 'ops_per_s', title: 'Operations', unit: 'ops/s', fmt: L.si },
		{ key: 'latency_p50_us', title: 'Latency p50', unit: 'µs', fmt: L.us, tick: L.usTick },
		{ key: 'latency_p99_us', title: 'Latency p99', unit: 'µs', fmt: L.us, tick: L.usTick },
		{ key: 'relay_cpu_fraction', title: 'Relay CPU, all relays', unit: '% of one CPU', fmt: L.sig3, scale: 100 },
		{ key: 'relay_rss_end_bytes', title: 'Relay RSS at the end, all relays', unit: 'MiB', fmt: L.sig3,
		  scale: 1 / 1048576 }
	];
	var DECADES = 2;	/* a span of 10^2 or more: a log axis */

	/* The cases' key but for dimension `dim`: the sweeps of dim group by it. */
	function keyBut(c, dim) {
		return [c.workload, c.protocol, c.cpu_limit, c.duration_s].concat(DIMS.filter(function (d) {
			return d.key !== dim;
		}).map(function (d) { return c[d.key]; })).join('\u0000');
	}
	function sweeps() {
		var out = [];
		DIMS.forEach(function (d) {
			var groups = {}, order = [];
			D.cases.forEach(function (c) {
				if (typeof c[d.key] !== 'number')
					return;
				var k = keyBut(c, d.key);
				if (!(k in groups)) {
					groups[k] = [];
					order.push(k);
				}
				groups[k].push(c);
			});
			order.forEach(function (k) {
				var cs = groups[k].slice().sort(function (a, b) { return a[d.key] - b[d.key]; });
				if (cs.length >= 2)
					out.push({ dim: d, cases: cs });
			});
		});
		return out;
	}
	function median(v) {
		v = v.slice().sort(function (a, b) { return a - b; });
		return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
	}
	/* A sweep's lines: per series name, [x, median, runs] at each case it ran ok. */
	function lines(sw, fig) {
		var by = {}, order = [];
		sw.cases.forEach(function (c) {
			c.series.forEach(function (i) {
				var se = D.series[i], v = [];
				L.runsOf[i].forEach(function (r) {
					if (r.status === 'ok' && typeof r.v[fig.key] === 'number')
						v.push(r.v[fig.key] * (fig.scale || 1));
				});
				if (!v.length)
					return;
				if (!(se.label in by)) {
					by[se.label] = { se: se, pts: [] };
					order.push(se.label);
				}
				by[se.label].pts.push([c[sw.dim.key], median(v), v.length]);
			});
		});
		return order.map(function (k) { return by[k]; });
	}
	function logSpan(lo, hi) { return lo > 0 && hi / lo >= Math.pow(10, DECADES); }
	/* An axis over [lo, hi]: {scale, ticks, log}, into the range r0..r1. */
	function axis(lo, hi, r0, r1) {
		if (logSpan(lo, hi)) {
			var l0 = Math.floor(Math.log10(lo)), l1 = Math.ceil(Math.log10(hi)), ls = L.linear(l0, l1, r0, r1);
			return { log: true, ticks: L.logTicks(l0, l1), scale: function (v) { return ls(Math.log10(v)); } };
		}
		var tv = L.ticks(0, hi > 0 ? hi * 1.05 : 1, 5);
		return { log: false, ticks: tv, scale: L.linear(0, tv[tv.length - 1], r0, r1) };
	}
	/* The knee of series `label` in a rate sweep: the highest rate whose run met --slo. */
	function knee(sw, label) {
		var best = null, target = null;
		sw.cases.forEach(function (c) {
			c.series.forEach(function (i) {
				if (D.series[i].label !== label)
					return;
				L.runsOf[i].forEach(function (r) {
					if (r.slo && r.slo.met && (best === null || c.rate_per_s > best))
						best = c.rate_per_s;
					if (r.slo)
						target = r.slo;
				});
			});
		});
		return best === null ? null : { rate: best, slo: target };
	}
	function curve(parent, sw, fig) {
		var ls = lines(sw, fig);
		if (!ls.length)
			return;
		var xs = sw.cases.map(function (c) { return c[sw.dim.key]; });
		var ymin = Infinity, ymax = 0, npts = 0;
		ls.forEach(function (l) {
			l.pts.forEach(function (p) {
				ymax = Math.max(ymax, p[1]);
				if (p[1] > 0)
					ymin = Math.min(ymin, p[1]);
			});
		});
		var m = { l: 64, r: 18, t: 26, b: 40 };
		var f = L.frame(parent, 560, 250, m, fig.title + ' against ' + sw.dim.key.replace(/_per_s$/, '').replace('_', ' '),
			{ 'data-chart': 'sweep', 'data-dim': sw.dim.key, 'data-metric': fig.key });
		var ax = axis(Math.min.apply(null, xs), Math.max.apply(null, xs), f.x0, f.x1);
		var ay = axis(ymin, ymax, f.y1, f.y0);
		/* A linear x axis of points far from 0 still starts at 0: the shape of the curve is the point. */
		L.xAxis(f, ax.scale, ax.ticks, L.si, sw.dim.title + (ax.log ? ' (log scale)' : ''));
		L.yAxis(f, ay.scale, ay.ticks, fig.tick || fig.fmt, fig.title + ' (' + fig.unit + (ay.log ? ', log scale' : '') + ')');
		f.svg.setAttribute('data-scale-x', ax.log ? 'log' : 'linear');
		f.svg.setAttribute('data-scale-y', ay.log ? 'log' : 'linear');
		ls.forEach(function (l) {
			var col = L.colour(l.se), g = s('g', { 'data-series': l.se.label }, f.svg);
			var pts = l.pts.filter(function (p) { return !ay.log || p[1] > 0; });
			s('path', { class: 'line', stroke: col, 'stroke-dasharray': L.dash(l.se), fill: 'none',
				d: pts.map(function (p, i) {
					return (i ? 'L' : 'M') + ax.scale(p[0]).toFixed(1) + ' ' + ay.scale(p[1]).toFixed(1);
				}).join('') }, g);
			pts.forEach(function (p) {
				L.tip(s('circle', { class: 'pt', cx: ax.scale(p[0]), cy: ay.scale(p[1]), r: 3, fill: col,
					'data-x': L.num(p[0]), 'data-value': L.num(p[1]), 'data-series': l.se.label, 'data-runs': p[2] }, g),
				l.se.label + ', ' + sw.dim.key + ' ' + p[0] + ': ' + fig.fmt(p[1]) + ' (median of ' + p[2] + ')');
				npts++;
			});
			var k = sw.dim.key === 'rate_per_s' ? knee(sw, l.se.label) : null;
			if (k) {
				var kx = ax.scale(k.rate);
				L.tip(s('line', { class: 'knee', x1: kx, x2: kx, y1: f.y0, y2: f.y1, stroke: col,
					'stroke-width': 1.5, 'stroke-dasharray': '4 3', 'data-rate': k.rate, 'data-series': l.se.label }, g),
				l.se.label + ': the knee, ' + k.rate + '/s, the highest rate that met ' + k.slo.percentile + ' <= ' + k.slo.ms + ' ms');
				s('text', { class: 'knee-label', x: kx + 3, y: f.y0 + 10, fill: col }, g, 'knee ' + k.rate + '/s');
			}
		});
		f.svg.setAttribute('data-points', npts);
	}
	function drawSweeps() {
		var sws = sweeps(), list = document.getElementById('sweep-list');
		if (!sws.length)
			return;
		document.getElementById('sweeps').hidden = false;
		document.getElementById('sweeps-note').textContent = 'Each point is the median of a series\' ok runs at ' +
			'one value of the sweep; an axis is logarithmic where its values span two decades or more. ' +
			'A --slo search marks each series\' knee: the highest rate that met its target.';
		var toc = document.getElementById('toc'), first = toc.querySelector('a[href="#intervals"]');
		toc.insertBefore(h('a', { href: '#sweeps' }, null, 'Sweeps'), first);
		sws.forEach(function (sw, i) {
			var c = sw.cases[0], sec = h('div', { class: 'sweep', id: 'sweep-' + i }, list);
			h('h3', {}, sec, c.workload + ' ' + c.protocol + ': ' + sw.dim.title.toLowerCase() + ' ' +
				sw.cases.map(function (x) { return x[sw.dim.key]; }).join(', '));
			var charts = h('div', { class: 'charts' }, sec);
			FIGS.forEach(function (fig) { curve(charts, sw, fig); });
			L.legend(sec, lines(sw, { key: 'bits_per_s' }).concat(lines(sw, { key: 'ops_per_s' }))
				.map(function (l) { return l.se; }).filter(function (se, k, a) {
					return a.findIndex(function (o) { return o.label === se.label; }) === k;
				}));
		});
	}

	drawSweeps();
	document.documentElement.setAttribute('data-drawn', 'yes');
})();
