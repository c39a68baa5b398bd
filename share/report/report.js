/*
 * report.js - draws the charts of the report page as SVG, from the data
 * ff-bench report embeds in #report-data (its cases, series, runs,
 * changes and environments; see bin/ff-bench.d/report.c).
 *
 * Every drawn point carries its numbers in data- attributes (data-value,
 * data-run, data-series...), and every chart says what it is (data-chart,
 * data-case, data-metric) and how many points it holds (data-points): the
 * tests read them from the DOM, and so can anyone. Hovering a point shows
 * its <title>.
 *
 * window.report is the page's interface: report.data, and
 * report.showRun(id) to draw a run's intervals (the location hash #run=ID
 * asks for one on load).
 */
(function () {
	'use strict';

	var started = performance.now();
	var D = JSON.parse(document.getElementById('report-data').textContent);
	var SVG = 'http://www.w3.org/2000/svg';
	/* Okabe and Ito's palette, safe for colour-blind readers (black last). */
	var PALETTE = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#000000'];
	/* Dashes for the lines of series beside their colour, for print in grey too. */
	var DASHES = ['', '6 3', '2 3', '9 3 2 3'];
	var VERDICT = { better: '#0072B2', worse: '#D55E00' };
	function verdictColour(v) { return VERDICT[v] || '#777777'; }
	var $ = function (id) { return document.getElementById(id); };

	/* Metrics: titles with units, and formats */

	var SI = [[1e12, 'T'], [1e9, 'G'], [1e6, 'M'], [1e3, 'K']];
	function sig3(v) {
		var a = Math.abs(v);
		return a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : a >= 1 ? v.toFixed(2) :
			a === 0 ? '0' : v.toPrecision(3);
	}
	function si(v) {
		for (var i = 0; i < SI.length; i++)
			if (Math.abs(v) >= SI[i][0])
				return sig3(v / SI[i][0]) + SI[i][1];
		return sig3(v);
	}
	function us(v) {
		return v >= 1e6 ? sig3(v / 1e6) + ' s' : v >= 1e3 ? sig3(v / 1e3) + ' ms' : sig3(v) + ' µs';
	}
	/* A tick of a latency axis: its own unit, no trailing zeros ("100 µs", "1 ms", "2.5 ms"). */
	function usTick(v) {
		return v >= 1e6 ? +(v / 1e6).toPrecision(3) + ' s' : v >= 1e3 ? +(v / 1e3).toPrecision(3) + ' ms' :
			+v.toPrecision(3) + ' µs';
	}
	function pct(v) { return (v > 0 ? '+' : '') + v.toFixed(1) + '%'; }
	var METRIC = {
		bits_per_s: { title: 'Throughput', unit: 'bit/s', fmt: si },
		ops_per_s: { title: 'Operations', unit: 'ops/s: requests, transactions or connections', fmt: si },
		relay_cpu_s_per_gb: { title: 'Relay CPU per GB, R1 + R2', unit: 'CPU seconds per 10⁹ bytes', fmt: sig3 },
		relay_cpu_s_per_1k_requests: { title: 'Relay CPU per 1,000 requests, R1 + R2', unit: 'CPU seconds per 1,000 operations', fmt: sig3 },
		latency_avg_us: { title: 'Average latency', unit: 'µs', fmt: us },
		latency_p50_us: { title: 'Latency p50', unit: 'µs', fmt: us },
		latency_p99_us: { title: 'Latency p99', unit: 'µs', fmt: us },
		relay_ctx_switches_per_mb: { title: 'Relay context switches per MB, R1 + R2', unit: 'switches per 10⁶ bytes', fmt: sig3 },
		relay_ctx_switches_per_1k_ops: { title: 'Relay context switches per 1,000 operations, R1 + R2', unit: 'switches per 1,000 operations', fmt: sig3 },
		relay_wakeups_per_mb: { title: 'Relay wakeups per MB, R1 + R2', unit: 'wakeups per 10⁶ bytes', fmt: sig3 },
		relay_wakeups_per_1k_ops: { title: 'Relay wakeups per 1,000 operations, R1 + R2', unit: 'wakeups per 1,000 operations', fmt: sig3 },
		relay_syscalls_per_mb: { title: 'Relay read and write syscalls per MB, R1 + R2', unit: 'syscalls per 10⁶ bytes', fmt: sig3 },
		relay_syscalls_per_1k_ops: { title: 'Relay read and write syscalls per 1,000 operations, R1 + R2', unit: 'syscalls per 1,000 operations', fmt: sig3 }
	};
	var higherBetter = {};
	D.metrics.forEach(function (mt) { higherBetter[mt.key] = mt.higher_better; });
	var STRIPS = ['bits_per_s', 'ops_per_s', 'relay_cpu_s_per_gb', 'relay_cpu_s_per_1k_requests'];

	/* Elements */

	function node(ns, tag, attrs, parent, text) {
		var e = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
		for (var k in attrs)
			if (attrs[k] !== undefined && attrs[k] !== null)
				e.setAttribute(k, attrs[k]);
		if (text !== undefined)
			e.textContent = text;
		if (parent)
			parent.appendChild(e);
		return e;
	}
	function h(tag, attrs, parent, text) { return node(null, tag, attrs, parent, text); }
	function s(tag, attrs, parent, text) { return node(SVG, tag, attrs, parent, text); }
	function tip(e, text) { s('title', {}, e, text); return e; }
	function num(v) { return v === null || v === undefined ? null : String(v); }

	/*
	 * Colours: one per series across the page (a file's relay, or a
	 * build), in order of appearance, so that base and new differ; dashes:
	 * by file when there are several (the base solid), else by series.
	 */
	var seriesIndex = {};
	D.series.forEach(function (se) {
		if (!(se.label in seriesIndex))
			seriesIndex[se.label] = Object.keys(seriesIndex).length;
	});
	function colour(se) { return PALETTE[seriesIndex[se.label] % PALETTE.length]; }
	function dash(se) {
		var i = seriesIndex[se.label], k = Math.floor(i / PALETTE.length);
		return DASHES[(D.files.length > 1 ? se.file + k : i + k) % DASHES.length];
	}

	/* Scales and axes */

	function linear(d0, d1, r0, r1) {
		var k = d1 === d0 ? 0 : (r1 - r0) / (d1 - d0);
		return function (v) { return r0 + (v - d0) * k; };
	}
	function ticks(d0, d1, n) {
		var span = d1 - d0, step, mag, t = [], v;
		if (!(span > 0))
			return [d0];
		mag = Math.pow(10, Math.floor(Math.log10(span / n)));
		step = [1, 2, 5, 10].map(function (m) { return m * mag; })
			.filter(function (st) { return span / st <= n; })[0] || 10 * mag;
		/* From the step at or below d0 to the one at or above d1: every value is inside. */
		for (v = Math.floor(d0 / step + 1e-9) * step; v < d1 + step * (1 - 1e-9); v += step)
			t.push(Math.abs(v) < step * 1e-9 ? 0 : v);
		return t;
	}
	/* A frame: the svg, its plot area, and its title. */
	function frame(parent, w, hgt, m, title, attrs) {
		attrs.class = 'chart';
		attrs.width = w;
		attrs.height = hgt;
		attrs.viewBox = '0 0 ' + w + ' ' + hgt;
		attrs.role = 'img';
		attrs['aria-label'] = title;
		var svg = s('svg', attrs, parent);
		s('text', { class: 'title', x: m.l, y: 16 }, svg, title);
		return { svg: svg, x0: m.l, x1: w - m.r, y0: m.t, y1: hgt - m.b };
	}
	function xAxis(f, scale, tv, fmt, label) {
		var g = s('g', { class: 'axis' }, f.svg), gr = s('g', { class: 'grid' }, f.svg);
		s('line', { x1: f.x0, x2: f.x1, y1: f.y1, y2: f.y1 }, g);
		tv.forEach(function (v) {
			var x = scale(v);
			s('line', { x1: x, x2: x, y1: f.y0, y2: f.y1 }, gr);
			s('line', { x1: x, x2: x, y1: f.y1, y2: f.y1 + 4 }, g);
			s('text', { class: 'tick x', x: x, y: f.y1 + 15, 'text-anchor': 'middle' }, g, fmt(v));
		});
		s('text', { class: 'axis-title x', x: (f.x0 + f.x1) / 2, y: f.y1 + 30, 'text-anchor': 'middle' }, g, label);
	}
	function yAxis(f, scale, tv, fmt, label) {
		var g = s('g', { class: 'axis' }, f.svg), gr = s('g', { class: 'grid' }, f.svg);
		s('line', { x1: f.x0, x2: f.x0, y1: f.y0, y2: f.y1 }, g);
		tv.forEach(function (v) {
			var y = scale(v);
			s('line', { x1: f.x0, x2: f.x1, y1: y, y2: y }, gr);
			s('text', { class: 'tick y', x: f.x0 - 5, y: y + 4, 'text-anchor': 'end' }, g, fmt(v));
		});
		s('text', { class: 'axis-title y', x: 12, y: (f.y0 + f.y1) / 2, 'text-anchor': 'middle',
			transform: 'rotate(-90 12 ' + (f.y0 + f.y1) / 2 + ')' }, g, label);
	}
	/* Ticks of a log axis from 10^l0 to 10^l1: the decades, and 2 and 5 of each when they are few. */
	function logTicks(l0, l1) {
		var tv = [], k, few = l1 - l0 <= 2;
		for (k = l0; k <= l1; k++) {
			tv.push(Math.pow(10, k));
			if (few && k < l1)
				tv.push(2 * Math.pow(10, k), 5 * Math.pow(10, k));
		}
		return tv;
	}
	function short(t, n) { return t.length > n ? t.slice(0, n - 1) + '…' : t; }

	function legend(parent, series) {
		var l = h('div', { class: 'legend' }, parent);
		series.forEach(function (se) {
			var sp = h('span', {}, l), sv = s('svg', { viewBox: '0 0 12 12' }, sp);
			s('line', { x1: 0, x2: 12, y1: 6, y2: 6, stroke: colour(se), 'stroke-width': 3,
				'stroke-dasharray': dash(se) }, sv);
			h('span', {}, sp, se.label);
		});
	}

	/* Runs by series, ok ones */
	var runsOf = D.series.map(function () { return []; });
	D.runs.forEach(function (r) { runsOf[r.series].push(r); });
	function runName(r) {
		var se = D.series[r.series];
		return D.cases[se.case].title + ', ' + se.label + ', run ' + r.repeat;
	}

	/*
	 * Strip chart: a row per series, each ok run a dot at its value (spread
	 * over the row so that equal values stay visible), the median a bar, its
	 * interval a whisker.
	 */
	function stripChart(parent, c, key) {
		var ser = c.series.map(function (i) { return D.series[i]; })
			.filter(function (se) { return se.stats[key]; });
		if (!ser.length)
			return;
		var mt = METRIC[key], row = 26, w = 560, m = { l: 150, r: 18, t: 26, b: 40 };
		var max = 0, npts = 0;
		ser.forEach(function (se) {
			max = Math.max(max, se.stats[key].hi);
			runsOf[se.id].forEach(function (r) {
				if (r.status === 'ok' && key in r.v)
					max = Math.max(max, r.v[key]);
			});
		});
		var f = frame(parent, w, m.t + m.b + row * ser.length, m, mt.title,
			{ 'data-chart': 'strip', 'data-case': c.id, 'data-metric': key });
		var tv = ticks(0, max > 0 ? max * 1.05 : 1, 5), x = linear(0, tv[tv.length - 1], f.x0, f.x1);
		xAxis(f, x, tv, mt.fmt, mt.title + ' (' + mt.unit + ')');
		ser.forEach(function (se, k) {
			var y = f.y0 + row * k + row / 2, st = se.stats[key], col = colour(se), i = 0;
			var label = s('text', { x: f.x0 - 6, y: y + 4, 'text-anchor': 'end' }, f.svg, short(se.label, 24));
			tip(label, se.label);
			runsOf[se.id].forEach(function (r) {
				if (r.status !== 'ok' || !(key in r.v))
					return;
				var jitter = ((i++ * 0.6180339887) % 1 - 0.5) * row * 0.6;
				tip(s('circle', { class: 'dot', cx: x(r.v[key]), cy: y + jitter, r: 3.2, fill: col,
					stroke: col, 'data-run': r.id, 'data-series': se.id, 'data-value': num(r.v[key]) }, f.svg),
				'run ' + r.repeat + ': ' + mt.fmt(r.v[key]) + ' ' + mt.unit.split(':')[0]);
				npts++;
			});
			s('line', { class: 'ci', x1: x(st.lo), x2: x(st.hi), y1: y, y2: y, stroke: '#333',
				'data-series': se.id, 'data-lo': num(st.lo), 'data-hi': num(st.hi) }, f.svg);
			tip(s('line', { class: 'median', x1: x(st.median), x2: x(st.median), y1: y - row * 0.42,
				y2: y + row * 0.42, stroke: '#222', 'data-series': se.id, 'data-value': num(st.median),
				'data-lo': num(st.lo), 'data-hi': num(st.hi), 'data-n': st.n,
				'data-coverage': num(st.coverage) }, f.svg),
			'median of ' + st.n + ': ' + mt.fmt(st.median) + '; interval ' + mt.fmt(st.lo) + ' to ' +
			mt.fmt(st.hi) + ' (' + Math.round(st.coverage * 1000) / 10 + '% coverage)');
		});
		f.svg.setAttribute('data-points', npts);
	}

	/*
	 * Latency percentile curves: one per run, percentiles on the "nines"
	 * scale (90, 99, 99.9...: -log10(1 - p)), the maximum at the end,
	 * latency on a log scale.
	 */
	var MAXNINES = 6;
	function nines(p) { return p >= 100 ? MAXNINES : Math.min(-Math.log10(1 - p / 100), MAXNINES - 0.5); }
	function latencyChart(parent, c) {
		var runs = [];
		c.series.forEach(function (i) {
			runsOf[i].forEach(function (r) { if (r.status === 'ok' && r.latency) runs.push(r); });
		});
		if (!runs.length)
			return;
		var lo = Infinity, hi = 0, w = 560, m = { l: 64, r: 18, t: 26, b: 40 };
		runs.forEach(function (r) {
			r.latency.forEach(function (pt) {
				if (pt[1] > 0) {
					lo = Math.min(lo, pt[1]);
					hi = Math.max(hi, pt[1]);
				}
			});
		});
		var f = frame(parent, w, 260, m, 'Latency by percentile',
			{ 'data-chart': 'latency', 'data-case': c.id, 'data-points': runs.length, 'data-scale': 'log' });
		var l0 = Math.floor(Math.log10(lo)), l1 = Math.ceil(Math.log10(hi));
		if (l1 === l0)
			l1++;
		var x = linear(0, MAXNINES, f.x0, f.x1), ly = linear(l0, l1, f.y1, f.y0);
		var y = function (v) { return ly(Math.log10(Math.max(v, Math.pow(10, l0)))); };
		var pv = [0, 1, 2, 3, 4, 5, MAXNINES], tv = logTicks(l0, l1);
		xAxis(f, x, pv, function (v) {
			return v === MAXNINES ? 'max' : v === 0 ? '0' : (100 - 100 * Math.pow(10, -v)).toPrecision(v + 2).replace(/\.?0+$/, '');
		}, 'Percentile (%), on a scale of nines');
		yAxis(f, y, tv, usTick, 'Latency (log scale)');
		runs.forEach(function (r) {
			var se = D.series[r.series];
			tip(s('path', { class: 'curve', stroke: colour(se), 'stroke-dasharray': dash(se),
				d: r.latency.map(function (pt, i) { return (i ? 'L' : 'M') + x(nines(pt[0])).toFixed(1) + ' ' + y(pt[1]).toFixed(1); }).join(''),
				'data-run': r.id, 'data-series': se.id, 'data-values': JSON.stringify(r.latency) }, f.svg),
			runName(r));
		});
		legend(parent, c.series.map(function (i) { return D.series[i]; })
			.filter(function (se) { return runs.some(function (r) { return r.series === se.id; }); }));
	}

	function drawCases() {
		var list = $('case-list'), toc = $('toc');
		D.cases.forEach(function (c) {
			var sec = h('div', { class: 'case', id: 'case-' + c.id }, list);
			h('h3', {}, sec, c.title);
			h('a', { href: '#case-' + c.id }, toc, c.title);
			var charts = h('div', { class: 'charts' }, sec);
			STRIPS.forEach(function (key) { stripChart(charts, c, key); });
			var lat = h('div', {}, sec);
			latencyChart(lat, c);
			if (!charts.children.length && !lat.children.length)
				h('p', { class: 'note' }, sec, 'No run of this case succeeded: nothing to draw.');
		});
	}

	/*
	 * Builds that are one binary: labels that share a sha256. Their
	 * changes can only be noise, wherever a verdict is given.
	 */
	function sameBuilds() {
		var bySha = {}, out = [];
		D.runs.forEach(function (r) {
			var b = r.build;
			if (b && b.label !== null && b.label !== undefined && b.sha256) {
				bySha[b.sha256] = bySha[b.sha256] || [];
				if (bySha[b.sha256].indexOf(b.label) < 0)
					bySha[b.sha256].push(b.label);
			}
		});
		Object.keys(bySha).forEach(function (sha) {
			if (bySha[sha].length > 1)
				out.push({ sha256: sha, labels: bySha[sha] });
		});
		return out;
	}
	function sameBuildsText(sb) {
		return 'Builds ' + sb.labels.join(' and ') + ' are one binary (sha256 ' + sb.sha256.slice(0, 12) +
			'…): their changes can only be noise.';
	}

	/*
	 * The change scale, one for every metric: symmetric log ("symlog"), so
	 * that ±1% and ±60% both show, linear within ±1% of zero; positions in
	 * % of the track's width.
	 */
	var SYMLOG_C = 1;
	function symlog(v) { return (v < 0 ? -1 : 1) * Math.log10(1 + Math.abs(v) / SYMLOG_C); }
	function changeScale(changes) {
		var lim = D.threshold_pct * 2;
		changes.forEach(function (ch) {
			[ch.pct, ch.lo, ch.hi, ch.median_pct].forEach(function (v) {
				if (v !== null && v !== undefined && isFinite(v))
					lim = Math.max(lim, Math.abs(v));
			});
		});
		/* Up to 1, 2 or 5 times a power of ten. */
		var mag = Math.pow(10, Math.floor(Math.log10(lim)));
		lim = [1, 2, 5, 10].map(function (k) { return k * mag; }).filter(function (v) { return v >= lim; })[0];
		var half = symlog(lim);
		var pos = function (v) { return 50 + 50 * symlog(Math.max(-lim, Math.min(lim, v))) / half; };
		/*
		 * Ticks: 0 and lim, then 1, 2, 5 of each decade below lim, kept
		 * when 12% of the track from the last and from lim.
		 */
		var tv = [0, lim, -lim], last = 50, k, c, v;
		for (k = 0; Math.pow(10, k) < lim; k++)
			for (c = 0; c < 3; c++) {
				v = [1, 2, 5][c] * Math.pow(10, k);
				if (v < lim && pos(v) - last >= 12 && pos(lim) - pos(v) >= 12) {
					tv.push(v, -v);
					last = pos(v);
				}
			}
		tv.sort(function (a, b) { return a - b; });
		return { lim: lim, pos: pos, ticks: tv };
	}
	function at(e, left) { e.style.left = left.toFixed(3) + '%'; return e; }

	/*
	 * A change: its case and series on a row of their own, whole (the sizes
	 * tell cases apart), then its figures, verdict and track. 1 if a point
	 * is drawn.
	 */
	function changeRow(tb, ch, key, sc) {
		var mt = METRIC[key], thr = D.threshold_pct;
		var b = D.series[ch.base], n = D.series[ch.new];
		var name = D.cases[ch.case].title + ' · ' + n.label + ' vs ' + b.label;
		h('th', { class: 'case-name', colspan: 5 }, h('tr', { class: 'name-row' }, tb), name);
		var tr = h('tr', {}, tb);
		var spread = ch.too_spread, shown = spread ? 'too spread to tell' : ch.verdict;
		var col = spread ? verdictColour('') : verdictColour(ch.verdict);
		h('td', { class: 'num' }, tr, mt.fmt(ch.base_median) + ' → ' + mt.fmt(ch.new_median));
		h('td', { class: 'num', 'data-median-pct': num(ch.median_pct) }, tr,
			ch.median_pct === null ? 'n/a' : pct(ch.median_pct));
		h('td', { class: 'num' }, tr, ch.pct === null ? 'n/a (base median 0)' : pct(ch.pct) +
			(ch.lo !== null && ch.hi !== null ? ' [' + pct(ch.lo) + ', ' + pct(ch.hi) + ']' : ' [no interval]'));
		var vd = h('td', { class: 'verdict', 'data-shown': shown }, tr);
		h('span', { style: 'color:' + col }, vd, shown);
		h('span', { class: 'stats' }, vd, (spread ? 'compare: ' + ch.verdict + '; ' : '') + 'p=' + ch.p.toPrecision(2) +
			(ch.q !== null ? ', q=' + ch.q.toPrecision(2) : '') + ', n=' + ch.n_base + '+' + ch.n_new);
		var track = h('div', { class: 'track' }, h('td', { class: 'track-cell' }, tr));
		var band = at(h('div', { class: 'band', 'data-lo': -thr, 'data-hi': thr }, track), sc.pos(-thr));
		band.style.width = (sc.pos(thr) - sc.pos(-thr)).toFixed(3) + '%';
		sc.ticks.forEach(function (v) { at(h('div', { class: v === 0 ? 'grid zero' : 'grid' }, track), sc.pos(v)); });
		if (ch.pct === null)
			return 0;
		if (ch.lo !== null && ch.hi !== null) {
			var ci = at(h('div', { class: 'change-ci' }, track), sc.pos(ch.lo));
			ci.style.width = (sc.pos(ch.hi) - sc.pos(ch.lo)).toFixed(3) + '%';
			ci.style.background = col;
		}
		if (ch.median_pct !== null)
			at(h('div', { class: 'median-change', 'data-value': num(ch.median_pct),
				title: 'medians: ' + pct(ch.median_pct) }, track), sc.pos(ch.median_pct));
		var dot = at(h('div', { class: 'change', 'data-case': ch.case, 'data-metric': key,
			'data-base': ch.base, 'data-new': ch.new, 'data-value': num(ch.pct), 'data-lo': num(ch.lo),
			'data-hi': num(ch.hi), 'data-median-pct': num(ch.median_pct), 'data-p': num(ch.p),
			'data-q': num(ch.q), 'data-verdict': ch.verdict, 'data-spread': spread ? 'yes' : 'no',
			title: name + '\nshift ' + pct(ch.pct) + ', medians ' + (ch.median_pct === null ? 'n/a' : pct(ch.median_pct)) +
				': ' + shown }, track), sc.pos(ch.pct));
		dot.style.borderColor = col;
		dot.style.background = ch.significant && !spread ? col : '#fff';
		return 1;
	}

	/*
	 * Changes: a table per metric, a row per case and pair of series, on
	 * one scale for the page: the medians of base and new and their change,
	 * the Hodges-Lehmann shift with its interval (what compare's verdict
	 * judges), the verdict, and a track drawing the shift (the dot), its
	 * interval (the bar), the medians' change (the diamond) and the band
	 * within which the verdict says "no change".
	 */
	function drawChanges() {
		if (!D.changes.length)
			return;
		$('changes').hidden = false;
		h('a', { href: '#changes' }, $('toc'), 'Changes');
		var thr = D.threshold_pct, sc = changeScale(D.changes), list = $('change-list');
		$('changes-note').textContent = (D.files.length === 2 ?
			'Each series of ' + D.files[1].label + ' against the same series of ' + D.files[0].label :
			'Each build against the first build of its case') +
			', as flimflam compare judges it. Shift: the Hodges-Lehmann shift, the median of every ' +
			'difference new run − base run, in percent of the base median, with its 95% confidence ' +
			'interval (none with fewer than 4 runs a side): the dot and its bar. Medians: the change of ' +
			'the median of the new runs from the median of the base runs, in percent of the base median: ' +
			'the diamond. When the two point opposite ways, the runs are too spread to tell. The verdict ' +
			'is better (blue) or worse (vermillion) when q < 0.05 (p adjusted by Benjamini-Hochberg over ' +
			'the page) and the whole interval lies beyond ±' + thr + '% (the shaded band), else no change ' +
			'or inconclusive (grey); a filled dot is significant. Every table has the same scale, ' +
			'logarithmic away from zero (linear within ±' + SYMLOG_C + '%).';
		sameBuilds().forEach(function (sb) {
			h('p', { class: 'warn same-builds' }, list, sameBuildsText(sb));
		});
		Object.keys(METRIC).forEach(function (key) {
			var rows = D.changes.filter(function (ch) { return ch.metric === key; });
			if (!rows.length)
				return;
			var mt = METRIC[key], npts = 0;
			var box = h('div', { class: 'change-chart', 'data-chart': 'change', 'data-metric': key,
				'data-lim': sc.lim, 'data-threshold': thr }, list);
			h('h3', {}, box, mt.title + ' (' + (higherBetter[key] ? 'higher' : 'lower') + ' is better)');
			var t = h('table', { class: 'changes' }, box), hr = h('tr', {}, h('thead', {}, t));
			['Medians, base → new', 'Change of the medians', 'Shift [95% interval]', 'Verdict']
				.forEach(function (c) { h('th', {}, hr, c); });
			var axis = h('div', { class: 'track axis-track' }, h('th', { class: 'track-cell' }, hr));
			sc.ticks.forEach(function (v) {
				at(h('span', { class: 'tick', 'data-tick': v }, axis, v === 0 ? '0' : pct(v).replace('.0%', '%')), sc.pos(v));
			});
			var tb = h('tbody', {}, t);
			rows.forEach(function (ch) { npts += changeRow(tb, ch, key, sc); });
			box.setAttribute('data-points', npts);
		});
	}

	/* The intervals of a run: a time series per figure. */
	var IV = [
		{ key: 'bits_per_s', title: 'Throughput', unit: 'bit/s', fmt: si, lines: function (iv) {
			return [['bits/s', iv.map(function (e) { return e.dt_s > 0 ? e.bytes * 8 / e.dt_s : null; })]];
		} },
		{ key: 'ops_per_s', title: 'Operations', unit: 'ops/s', fmt: si, lines: function (iv) {
			return [['ops/s', iv.map(function (e) { return e.operations !== null && e.operations !== undefined && e.dt_s > 0 ? e.operations / e.dt_s : null; })]];
		} },
		{ key: 'latency', title: 'Latency', unit: 'log scale', fmt: us, tick: usTick, log: true, lines: function (iv) {
			/* A log axis: p50 at 84 µs stays apart from p99.9 at 10 ms (0: no value on it). */
			return ['p50', 'p99', 'p99.9'].map(function (p) {
				return [p, iv.map(function (e) { return e.latency_us && e.latency_us[p] > 0 ? e.latency_us[p] : null; })];
			});
		} },
		{ key: 'cpu', title: 'Relay CPU', unit: '% of one CPU', fmt: sig3, lines: function (iv) {
			return roles(iv).map(function (role) {
				return [role, iv.map(function (e) { var r = relayIn(e, role); return r && r.cpu_fraction !== null ? r.cpu_fraction * 100 : null; })];
			});
		} },
		{ key: 'rss', title: 'Relay memory (RSS)', unit: 'MiB', fmt: sig3, fit: 'rss', scale: 1048576, lines: function (iv) {
			return roles(iv).map(function (role) {
				return [role, iv.map(function (e) { var r = relayIn(e, role); return r && r.rss_bytes !== null ? r.rss_bytes / 1048576 : null; })];
			});
		} },
		{ key: 'fds', title: 'Relay open files', unit: 'descriptors', fmt: sig3, fit: 'fds', scale: 1, lines: function (iv) {
			return roles(iv).map(function (role) {
				return [role, iv.map(function (e) { var r = relayIn(e, role); return r && typeof r.fds === 'number' ? r.fds : null; })];
			});
		} }
	];
	/*
	 * A relay's fitted growth (r.growth, per hour, in bytes or files: the
	 * figure times `scale`) as a line through the intervals' points: the
	 * Theil-Sen slope, its intercept the median of y - slope t.
	 */
	function fitLine(g, f, x, y, r, spec, role, vals, col) {
		var fit = (r.growth || []).filter(function (e) { return e.role === role; })[0], k = [], a, t0, t1;
		fit = fit && fit[spec.fit];
		if (!fit || typeof fit.per_h !== 'number')
			return;
		var per_s = fit.per_h / 3600 / spec.scale;
		vals.forEach(function (v, i) {
			if (v !== null && v !== undefined)
				k.push(v - per_s * r.intervals[i].t_s);
		});
		k.sort(function (p, q) { return p - q; });
		a = k.length % 2 ? k[(k.length - 1) / 2] : (k[k.length / 2 - 1] + k[k.length / 2]) / 2;
		t0 = r.intervals[0].t_s;
		t1 = r.intervals[r.intervals.length - 1].t_s;
		tip(s('line', { class: 'fit', x1: x(t0), x2: x(t1), y1: y(a + per_s * t0), y2: y(a + per_s * t1),
			stroke: col, 'stroke-width': 1.5, 'stroke-dasharray': '1 3', 'data-line': role,
			'data-per-h': num(fit.per_h), 'data-low': num(fit.low_per_h), 'data-high': num(fit.high_per_h),
			'data-verdict': fit.verdict }, g),
		role + ': ' + (fit.per_h > 0 ? '+' : '') + sig3(per_s * 3600) + ' ' + spec.unit + ' an hour (95%: ' +
		sig3(fit.low_per_h / spec.scale) + ' to ' + sig3(fit.high_per_h / spec.scale) + '), ' + fit.verdict);
	}
	function roles(iv) {
		var out = [];
		iv.forEach(function (e) {
			(e.relays || []).forEach(function (r) { if (out.indexOf(r.role) < 0) out.push(r.role); });
		});
		return out;
	}
	function relayIn(e, role) {
		return (e.relays || []).filter(function (r) { return r.role === role; })[0];
	}
	function intervalChart(box, r, spec) {
		var parent = h('div', {}, box), iv = r.intervals, lines = spec.lines(iv).filter(function (l) {
			return l[1].some(function (v) { return v !== null && v !== undefined; });
		});
		if (!lines.length)
			return;
		var w = 560, m = { l: 64, r: 18, t: 26, b: 40 }, max = 0, min = Infinity, tmax = 0, npts = 0, y, ty;
		lines.forEach(function (l) {
			l[1].forEach(function (v) {
				if (v !== null && v !== undefined) {
					max = Math.max(max, v);
					min = Math.min(min, v);
				}
			});
		});
		iv.forEach(function (e) { tmax = Math.max(tmax, e.t_s + (e.dt_s || 0)); });
		var f = frame(parent, w, 230, m, spec.title, { 'data-chart': 'interval', 'data-run': r.id, 'data-metric': spec.key,
			'data-scale': spec.log ? 'log' : 'linear' });
		var tx = ticks(0, tmax || 1, 8), x = linear(0, tx[tx.length - 1], f.x0, f.x1);
		if (spec.log) {
			var l0 = Math.floor(Math.log10(min)), l1 = Math.max(Math.ceil(Math.log10(max)), l0 + 1);
			var ly = linear(l0, l1, f.y1, f.y0);
			y = function (v) { return ly(Math.log10(v)); };
			ty = logTicks(l0, l1);
		} else {
			ty = ticks(0, max > 0 ? max * 1.05 : 1, 5);
			y = linear(0, ty[ty.length - 1], f.y1, f.y0);
		}
		xAxis(f, x, tx, sig3, 'Time in the window (s)');
		yAxis(f, y, ty, spec.tick || spec.fmt, spec.title + ' (' + spec.unit + ')');
		lines.forEach(function (l, k) {
			var col = PALETTE[k % PALETTE.length], d = '', g = s('g', { 'data-line': l[0] }, f.svg);
			l[1].forEach(function (v, i) {
				if (v === null || v === undefined)
					return;
				d += (d ? 'L' : 'M') + x(iv[i].t_s).toFixed(1) + ' ' + y(v).toFixed(1);
			});
			s('path', { class: 'line', d: d, stroke: col, 'stroke-dasharray': DASHES[k % DASHES.length] }, g);
			if (spec.fit)
				fitLine(g, f, x, y, r, spec, l[0], l[1], col);
			l[1].forEach(function (v, i) {
				if (v === null || v === undefined)
					return;
				tip(s('circle', { class: 'pt', cx: x(iv[i].t_s), cy: y(v), r: 2.5, fill: col,
					'data-line': l[0], 'data-t': num(iv[i].t_s), 'data-value': num(v) }, g),
				l[0] + ' at ' + iv[i].t_s + ' s: ' + spec.fmt(v) + (spec.log ? '' : ' ' + spec.unit));
				npts++;
			});
		});
		f.svg.setAttribute('data-points', npts);
		if (lines.length > 1) {
			var lg = h('div', { class: 'legend' }, parent);
			lines.forEach(function (l, k) {
				var sp = h('span', {}, lg), sv = s('svg', { viewBox: '0 0 12 12' }, sp);
				s('line', { x1: 0, x2: 12, y1: 6, y2: 6, stroke: PALETTE[k % PALETTE.length], 'stroke-width': 3,
					'stroke-dasharray': DASHES[k % DASHES.length] }, sv);
				h('span', {}, sp, l[0]);
			});
		}
	}
	function showRun(id) {
		var box = $('interval-charts'), r = D.runs[id];
		box.textContent = '';
		if (!r || !r.intervals || !r.intervals.length)
			return false;
		$('run-select').value = String(id);
		h('p', {}, box, runName(r) + ': ' + r.intervals.length + ' intervals');
		if (r.steadiness) {
			var st = r.steadiness, p = h('p', { class: 'steady' + (st.steady === false ? ' unsteady' : '') }, box);
			p.textContent = (st.steady === false ? 'Not steady' : 'Steady') +
				(st.cv_pct !== null && st.cv_pct !== undefined ? ': throughput varied ' + sig3(st.cv_pct) + '% (coefficient of variation)' : '') +
				(st.trend_pct !== null && st.trend_pct !== undefined ? ', trend ' + pct(st.trend_pct) + ' from the first half to the second' : '') +
				(st.reason ? ' (' + st.reason + ')' : '');
		}
		var charts = h('div', { class: 'charts' }, box);
		IV.forEach(function (spec) { intervalChart(charts, r, spec); });
		return true;
	}
	function drawIntervals() {
		var sel = $('run-select'), with_iv = D.runs.filter(function (r) { return r.intervals && r.intervals.length; });
		h('a', { href: '#intervals' }, $('toc'), 'Intervals');
		if (!with_iv.length) {
			$('intervals-note').textContent = 'No run in these files has intervals (they are recorded by versions of flimflam that take --interval).';
			return;
		}
		$('intervals-note').textContent = with_iv.length + ' run' + (with_iv.length === 1 ? ' has' : 's have') +
			' intervals: choose one. Each point is an interval, at its start.';
		$('run-choice').hidden = false;
		with_iv.forEach(function (r) {
			h('option', { value: r.id }, sel, runName(r) + (r.steadiness && r.steadiness.steady === false ? ' (not steady)' : ''));
		});
		sel.addEventListener('change', function () { showRun(+sel.value); });
		var want = /(?:^#|&)run=(\d+)/.exec(location.hash);
		if (!(want && showRun(+want[1])))
			showRun(with_iv[0].id);
	}

	/* Tables */

	function table(parent, head, rows) {
		var t = h('table', {}, parent), tr = h('tr', {}, h('thead', {}, t)), tb = h('tbody', {}, t);
		head.forEach(function (c) { h('th', {}, tr, c); });
		rows.forEach(function (r) {
			var row = h('tr', {}, tb);
			r.forEach(function (c) { h('td', typeof c === 'number' ? { class: 'num' } : {}, row, c === null || c === undefined ? '-' : String(c)); });
		});
		return t;
	}
	function drawFailures() {
		var bad = D.runs.filter(function (r) { return r.status !== 'ok'; });
		if (!bad.length)
			return;
		$('failures').hidden = false;
		h('a', { href: '#failures' }, $('toc'), 'Failed and skipped runs');
		table($('failure-list'), ['Case', 'Series', 'Run', 'Status', 'Reason', 'Run directory'],
			bad.map(function (r) {
				var se = D.series[r.series];
				return [D.cases[se.case].title, se.label, r.repeat, r.status, r.reason, r.run_dir];
			}));
	}
	function drawOptions() {
		var box = $('option-list'), builds = {}, warm;
		h('a', { href: '#options' }, $('toc'), 'Files and options');
		table(box, ['File', 'Path', 'Runs ok', 'Failed', 'Skipped'], D.files.map(function (f) {
			return [f.label, f.path, f.ok, f.failed, f.skipped];
		}));
		table(box, ['Workload', 'Protocol', 'Jobs', 'CPU limit', 'Duration (s)', 'Warmup (s)',
			'Request (B)', 'Response (B)', 'Rate (/s)', 'Series: runs'], D.cases.map(function (c) {
			warm = {};
			c.series.forEach(function (i) { runsOf[i].forEach(function (r) { warm[r.warmup_s] = 1; }); });
			return [c.workload, c.protocol, c.jobs, c.cpu_limit, c.duration_s, Object.keys(warm).join(', '),
				c.request_size, c.response_size, c.rate_per_s === undefined ? null :
				c.rate_per_s === null ? 'closed loop' : c.rate_per_s,
				c.series.map(function (i) { return D.series[i].label + ': ' + runsOf[i].length; }).join('; ')];
		}));
		D.runs.forEach(function (r) {
			if (r.build && r.build.label !== null && r.build.label !== undefined)
				builds[r.build.label + '\u0000' + r.build.sha256] = r.build;
		});
		if (Object.keys(builds).length) {
			h('h3', {}, box, 'Builds');
			sameBuilds().forEach(function (sb) { h('p', { class: 'warn same-builds' }, box, sameBuildsText(sb)); });
			table(box, ['Label', 'Relay', 'Version', 'Path', 'SHA-256'], Object.keys(builds).map(function (k) {
				var b = builds[k];
				return [b.label, b.relay, b.version, b.path, b.sha256];
			}));
		}
	}
	function envValue(v) {
		if (v === null || v === undefined)
			return '-';
		if (typeof v !== 'object')
			return String(v);
		if ('version' in v || 'path' in v)
			return (v.version || 'version unknown') + (v.path ? ' (' + v.path + ')' : '');
		return short(JSON.stringify(v), 300);
	}
	function drawEnvironment() {
		var box = $('env-list');
		h('a', { href: '#environment' }, $('toc'), 'Environment');
		if (!D.environments.length) {
			h('p', { class: 'note' }, box, 'The results hold no environment.');
			return;
		}
		D.environments.forEach(function (env, i) {
			var files = {};
			D.runs.forEach(function (r) { if (r.env === i) files[D.files[D.series[r.series].file].label] = 1; });
			if (D.environments.length > 1)
				h('h3', {}, box, 'Environment ' + (i + 1) + ' (' + Object.keys(files).join(', ') + ')');
			table(box, ['', ''], Object.keys(env).filter(function (k) { return k !== 'event'; }).map(function (k) {
				return [k, envValue(env[k])];
			}));
		});
	}

	function header() {
		var n = D.runs.length, ok = D.runs.filter(function (r) { return r.status === 'ok'; }).length;
		var names = D.files.map(function (f) { return f.label; }).join(', ');
		document.title = 'flimflam report: ' + names;
		$('title').textContent = 'flimflam report: ' + names;
		$('subtitle').textContent = D.cases.length + ' case' + (D.cases.length === 1 ? '' : 's') + ', ' +
			n + ' run' + (n === 1 ? '' : 's') + ' (' + ok + ' ok); written ' + D.generated +
			' by flimflam ' + D.version + '.';
	}

	header();
	drawCases();
	drawChanges();
	drawIntervals();
	drawFailures();
	drawOptions();
	drawEnvironment();
	/* For curves.js, which draws after this script: its helpers. */
	window.report = { data: D, showRun: showRun, lib: { h: h, s: s, tip: tip, num: num, frame: frame,
		xAxis: xAxis, yAxis: yAxis, ticks: ticks, logTicks: logTicks, linear: linear, legend: legend,
		colour: colour, dash: dash, sig3: sig3, si: si, us: us, usTick: usTick, runsOf: runsOf,
		PALETTE: PALETTE, DASHES: DASHES } };
	document.documentElement.setAttribute('data-draw-ms', Math.round(performance.now() - started));
})();
