/*
 * flamegraph.js - draws the flame graph that ff-flame embeds in the page.
 *
 * The data (in #flame-data) is the tree of stacks in preorder, three
 * numbers per node: frame, depth, samples; frames index the names,
 * modules and kinds tables; "detail" holds a process tower's pids (by
 * frame), which its name does not. A differential graph adds "base", each
 * node's samples in the base recording, and "too_few_samples" when either
 * side has fewer than "min_samples": too few to rank the changes.
 *
 * Only what can be seen is drawn, as positioned <div>s: a frame narrower
 * than MIN_PX is not drawn alone; runs of such siblings are merged into one
 * hatched block, and their subtrees are skipped. So a page with a hundred
 * thousand distinct stacks draws a few thousand elements.
 *
 * window.flame is the page's interface, for people and tests alike.
 * The location hash can ask for a view on load: #search=REGEX&zoom=REGEX&icicle
 * (zoom: into the widest frame whose name matches; tip=REGEX shows the
 * tooltip of the widest frame whose name matches).
 */
(function () {
	'use strict';

	var ROW = 18, MIN_PX = 2, LABEL_PX = 24, started = performance.now();
	var D = JSON.parse(document.getElementById('flame-data').textContent);
	var $ = function (id) { return document.getElementById(id); };
	var graph = $('graph'), tip = $('tip');

	var n = D.nodes.length / 3;
	var F = new Int32Array(n), DEP = new Int32Array(n), V = new Float64Array(n);
	var X = new Float64Array(n), P = new Int32Array(n), END = new Int32Array(n);
	var B = D.diff ? new Float64Array(D.base) : null;
	var total = n ? D.nodes[2] : 0, baseTotal = D.base_total || 0;
	var zoom = 0, inverted = false, frameMatch = null, query = '';
	var colours = new Array(D.names.length), maxDelta = 0;

	/* Parents, subtree ends and x offsets, in one pass over the preorder. */
	(function build() {
		var path = [], cursor = new Float64Array(n), i, d, p;

		for (i = 0; i < n; i++) {
			F[i] = D.nodes[3 * i];
			d = DEP[i] = D.nodes[3 * i + 1];
			V[i] = D.nodes[3 * i + 2];
			while (path.length > d)
				END[path.pop()] = i;
			p = P[i] = d ? path[d - 1] : -1;
			if (p >= 0) {
				X[i] = cursor[p];
				cursor[p] += V[i];
			}
			cursor[i] = X[i];
			path.push(i);
		}
		while (path.length)
			END[path.pop()] = n;
	})();

	function share(v, of) {
		return of > 0 ? v / of : 0;
	}

	function pct(x) {
		return (100 * x).toFixed(2) + '%';
	}

	function num(v) {
		return Math.round(v).toLocaleString('en-US');
	}

	function esc(s) {
		return String(s).replace(/[&<>"]/g, function (c) {
			return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c];
		});
	}

	/* Colours: a hue per kind of frame, varied a little by name. */
	var PALETTE = {
		root: [0, 0, 78], process: [205, 35, 72], kernel: [28, 90, 62],
		exe: [4, 78, 64], proton: [275, 55, 70], lib: [48, 90, 58],
		libc: [110, 45, 60], unknown: [0, 0, 70], user: [16, 80, 62]
	};
	var KIND_TEXT = {
		root: 'all samples', process: 'process', kernel: 'kernel',
		exe: "the program's own binary", proton: 'Proton', lib: 'libraries',
		libc: 'libc', unknown: 'unknown', user: 'user code'
	};

	function hashOf(s) {
		var h = 2166136261, k;

		for (k = 0; k < s.length; k++)
			h = Math.imul(h ^ s.charCodeAt(k), 16777619);
		return h >>> 0;
	}

	function kindOf(f) {
		return D.kinds[D.fkind[f]];
	}

	function frameColour(f) {
		var c = colours[f], pal, h;

		if (c)
			return c;
		pal = PALETTE[kindOf(f)] || PALETTE.user;
		h = hashOf(D.names[f]);
		c = 'hsl(' + (pal[0] + (h % 17) - 8) + ',' + pal[1] + '%,' +
			(pal[2] + ((h >>> 8) % 13) - 6) + '%)';
		return (colours[f] = c);
	}

	/* Differential graphs: the change in a node's share of all samples. */
	function delta(i) {
		return share(V[i], total) - share(B[i], baseTotal);
	}

	if (B) {
		for (var i = 1; i < n; i++)
			maxDelta = Math.max(maxDelta, Math.abs(delta(i)));
	}

	function diffClass(i) {
		var t = maxDelta > 0 ? delta(i) / maxDelta : 0;

		var dark = Math.abs(t) > 0.6 ? ' dark' : '';

		if (t >= 0.1)
			return ' grew' + dark;
		if (t <= -0.1)
			return ' shrank' + dark;
		return '';
	}

	function diffColour(i) {
		var t = maxDelta > 0 ? delta(i) / maxDelta : 0, c;

		c = Math.round(242 - 200 * Math.abs(t));
		if (t > 0)
			return 'rgb(255,' + c + ',' + c + ')';
		if (t < 0)
			return 'rgb(' + c + ',' + c + ',255)';
		return 'rgb(242,242,242)';
	}

	/* Drawing */

	function box(cls, attrs, l, w, d, bg, label) {
		return '<div class="f' + cls + '" ' + attrs + ' style="left:' +
			l.toFixed(1) + 'px;width:' + w.toFixed(1) + 'px;' +
			(inverted ? 'top:' : 'bottom:') + d * ROW + 'px' +
			(bg ? ';background:' + bg : '') + '">' + label + '</div>';
	}

	function frameBox(i, l, w, cls) {
		var name = D.names[F[i]];

		if (frameMatch && frameMatch[F[i]])
			cls += ' match';
		if (B)
			cls += diffClass(i);
		return box(cls, 'data-i="' + i + '"', l, w, DEP[i],
			   B ? diffColour(i) : frameColour(F[i]),
			   w >= LABEL_PX ? esc(name) : '');
	}

	function render() {
		var t0 = performance.now();
		var W = graph.clientWidth || 1200, z = zoom;
		var scale = W / (V[z] || 1), x0 = X[z];
		var out = [], maxd = DEP[z], drawn = 0, run = null;
		var i, e, w, l, a;

		function flush() {
			if (run && run.w >= 1) {
				out.push(box(' merged', 'data-p="' + run.p + '" data-n="' +
					     run.n + '" data-v="' + run.v + '"',
					     run.l, run.w, run.d, '', ''));
				drawn++;
			}
			run = null;
		}

		for (a = P[z]; a >= 0; a = P[a]) {
			out.push(frameBox(a, 0, W, ' anc'));
			drawn++;
		}
		for (i = z, e = END[z]; i < e; ) {
			w = V[i] * scale;
			l = (X[i] - x0) * scale;
			if (w < MIN_PX) {
				if (run && run.p === P[i] && Math.abs(run.l + run.w - l) < 0.01) {
					run.w += w;
					run.n++;
					run.v += V[i];
				} else {
					flush();
					run = { p: P[i], d: DEP[i], l: l, w: w, n: 1, v: V[i] };
				}
				i = END[i];
				continue;
			}
			flush();
			out.push(frameBox(i, l, w, i === z && z ? ' zoom' : ''));
			drawn++;
			if (DEP[i] > maxd)
				maxd = DEP[i];
			i++;
		}
		flush();
		graph.style.height = (maxd + 1) * ROW + 'px';
		graph.innerHTML = out.join('');
		var st = $('status');
		st.dataset.nodes = n;
		st.dataset.rendered = drawn;
		st.dataset.renderMs = (performance.now() - t0).toFixed(1);
		st.dataset.zoom = z;
		return drawn;
	}

	var resizeTimer = 0;
	window.addEventListener('resize', function () {
		clearTimeout(resizeTimer);
		resizeTimer = setTimeout(render, 100);
	});

	/* Zoom */

	function setZoom(i) {
		zoom = i > 0 && i < n ? i : 0;
		var z = $('zoomed');
		if (zoom) {
			z.hidden = false;
			z.textContent = 'Zoomed into ' + D.names[F[zoom]] + ': ' +
				num(V[zoom]) + ' samples, ' + pct(share(V[zoom], total)) +
				' of all. Click the root or press Esc to see everything.';
		} else {
			z.hidden = true;
		}
		render();
		if (frameMatch)
			showMatched();
	}

	graph.addEventListener('click', function (ev) {
		var t = ev.target.closest('.f');

		if (!t)
			return;
		if (t.dataset.i !== undefined)
			setZoom(+t.dataset.i);
		else if (t.dataset.p !== undefined)
			setZoom(+t.dataset.p);
	});
	$('reset').addEventListener('click', function () { setZoom(0); });

	/* Search */

	function toRegExp(q) {
		if (q instanceof RegExp)
			return q;
		try {
			return new RegExp(q);
		} catch (err) {
			return new RegExp(q.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
		}
	}

	/* Samples under matching frames, each counted once (not again below a match). */
	function matchedIn(root) {
		var sum = 0, i = root, e = END[root];

		while (i < e) {
			if (frameMatch[F[i]]) {
				sum += V[i];
				i = END[i];
			} else {
				i++;
			}
		}
		return sum;
	}

	function showMatched() {
		var o = $('matched'), all = matchedIn(0), s = share(all, total);

		o.dataset.share = s;
		o.dataset.samples = all;
		o.textContent = 'Matched ' + pct(s) + ' of samples (' + num(all) + ')' +
			(zoom ? ', ' + pct(share(matchedIn(zoom), V[zoom])) + ' of the zoomed frame' : '');
		return s;
	}

	function search(q) {
		var re = toRegExp(q), k;

		query = re.source;
		frameMatch = new Uint8Array(D.names.length);
		for (k = 0; k < D.names.length; k++)
			frameMatch[k] = re.test(D.names[k]) ? 1 : 0;
		frameMatch[F[0] || 0] = 0;	/* the root "all" is no match */
		render();
		return showMatched();
	}

	function clearSearch() {
		frameMatch = null;
		query = '';
		$('search').value = '';
		var o = $('matched');
		o.textContent = '';
		delete o.dataset.share;
		delete o.dataset.samples;
		render();
	}

	$('search-form').addEventListener('submit', function (ev) {
		ev.preventDefault();
		var q = $('search').value;
		if (q)
			search(q);
		else
			clearSearch();
	});
	$('clear').addEventListener('click', clearSearch);

	/* Orientation */

	function setInverted(on) {
		inverted = !!on;
		$('icicle').checked = inverted;
		render();
	}
	$('icicle').addEventListener('change', function () {
		setInverted(this.checked);
	});

	document.addEventListener('keydown', function (ev) {
		if (ev.key === 'Escape') {
			setZoom(0);
		} else if (ev.key === '/' && document.activeElement !== $('search')) {
			ev.preventDefault();
			$('search').focus();
		}
	});

	/* Tooltip */

	function row(k, v) {
		return '<tr><td>' + esc(k) + '</td><td>' + esc(v) + '</td></tr>';
	}

	function tipHtml(t) {
		if (t.dataset.i === undefined) {
			return '<b>' + esc(t.dataset.n) + ' frames too narrow to draw</b><table>' +
				row('samples', num(+t.dataset.v) + ' (' +
				    pct(share(+t.dataset.v, total)) + ' of all)') +
				row('click', 'zoom into their parent') + '</table>';
		}
		return nodeTip(+t.dataset.i);
	}

	/* The tooltip of node i: function, module, samples and shares. */
	function nodeTip(i) {
		var f, p, mod, h, self, c, d;

		f = F[i];
		p = P[i];
		mod = D.modules[D.fmod[f]];
		self = V[i];
		for (c = i + 1; c < END[i]; c = END[c])
			self -= V[c];
		h = '<b>' + esc(D.names[f]) + '</b><table>';
		if (mod)
			h += row('module', mod);
		h += row('kind', KIND_TEXT[kindOf(f)] || kindOf(f));
		if (D.detail && D.detail[f])
			h += row('processes', D.detail[f]);
		h += row('samples', num(V[i]) + ' (' + pct(share(V[i], total)) + ' of all' +
			 (p >= 0 ? ', ' + pct(share(V[i], V[p])) + ' of parent' : '') + ')');
		h += row('self', num(self) + ' (' + pct(share(self, total)) + ' of all)');
		if (B) {
			d = delta(i);
			h += row('base', num(B[i]) + ' (' + pct(share(B[i], baseTotal)) + ' of base)');
			h += row('new', num(V[i]) + ' (' + pct(share(V[i], total)) + ' of new)');
			h += row('change', (d >= 0 ? '+' : '') + (100 * d).toFixed(2) +
				 ' points of share' + (B[i] > 0 ? ', ' + (d >= 0 ? '+' : '') +
				 (100 * (share(V[i], total) / share(B[i], baseTotal) - 1)).toFixed(1) +
				 '% relative' : ', new'));
		}
		return h + '</table>';
	}

	graph.addEventListener('mousemove', function (ev) {
		var t = ev.target.closest('.f'), x, y;

		if (!t) {
			tip.hidden = true;
			return;
		}
		if (tip.dataset.for !== (t.dataset.i || 'p' + t.dataset.p)) {
			tip.innerHTML = tipHtml(t);
			tip.dataset.for = t.dataset.i || 'p' + t.dataset.p;
		}
		tip.hidden = false;
		x = ev.clientX + 14;
		y = ev.clientY + 16;
		if (x + tip.offsetWidth > window.innerWidth)
			x = Math.max(0, ev.clientX - tip.offsetWidth - 8);
		if (y + tip.offsetHeight > window.innerHeight)
			y = Math.max(0, ev.clientY - tip.offsetHeight - 8);
		tip.style.left = x + 'px';
		tip.style.top = y + 'px';
	});
	graph.addEventListener('mouseleave', function () { tip.hidden = true; });

	/* Header */

	function header() {
		var m = D.meta || {}, facts = $('facts'), legend = $('legend');
		var title = m.title || 'Flame graph', k;

		function fact(name, value) {
			if (value === undefined || value === null || value === '')
				return;
			var div = document.createElement('div'), dt, dd;
			dt = document.createElement('dt');
			dt.textContent = name;
			dd = document.createElement('dd');
			dd.textContent = value;
			div.appendChild(dt);
			div.appendChild(dd);
			facts.appendChild(div);
		}

		function swatch(text, bg) {
			var li = document.createElement('li'), sw = document.createElement('i');
			sw.style.background = bg;
			li.appendChild(sw);
			li.appendChild(document.createTextNode(text));
			legend.appendChild(li);
		}

		document.title = title;
		$('title').textContent = title;
		fact('date', m.date);
		fact('workload', m.workload);
		fact('relay', m.relay);
		fact('protocol', m.protocol);
		fact('samples', num(total));
		if (B) {
			fact('base samples', num(baseTotal));
			fact('base', m.base_source);
			fact('new', m.source);
		} else {
			fact('source', m.source);
		}
		if (B && D.too_few_samples) {
			$('thin').hidden = false;
			$('thin').textContent = 'Too few samples to rank the changes: the base has ' +
				num(baseTotal) + ', the new ' + num(total) + '; at least ' +
				num(D.min_samples) + ' on each side are needed. Shares this coarse ' +
				'move by chance: read the colours with caution.';
		}
		if (B) {
			swatch('share grew', 'rgb(255,60,60)');
			swatch('share shrank', 'rgb(60,60,255)');
			swatch('unchanged', 'rgb(242,242,242)');
			swatch('width: samples in new', '#ddd');
			return;
		}
		for (k in KIND_TEXT) {
			if (k !== 'root' && D.fkind.indexOf(D.kinds.indexOf(k)) >= 0) {
				var p = PALETTE[k];
				swatch(KIND_TEXT[k], 'hsl(' + p[0] + ',' + p[1] + '%,' + p[2] + '%)');
			}
		}
	}

	/* The interface, and the view the location hash asks for */

	window.flame = {
		data: D,
		nodes: n,
		total: total,
		search: function (q) { $('search').value = q instanceof RegExp ? q.source : q; return search(q); },
		clear: clearSearch,
		zoom: setZoom,
		reset: function () { setZoom(0); },
		invert: setInverted,
		render: render,
		/* The node of the widest frame whose name matches, or -1. */
		find: function (q) {
			var re = toRegExp(q), i, best = -1;
			for (i = 1; i < n; i++)
				if ((best < 0 || V[i] > V[best]) && re.test(D.names[F[i]]))
					best = i;
			return best;
		},
		delta: function (i) { return B ? delta(i) : null; },
		/* The tooltip of node i, shown as if the pointer were on it. */
		tip: function (i) {
			tip.innerHTML = nodeTip(i);
			tip.hidden = false;
			return tip.textContent;
		}
	};

	header();
	if (!n || !total) {
		$('empty').hidden = false;
		graph.hidden = true;
		$('controls').hidden = true;
		$('status').dataset.nodes = 0;
		$('status').dataset.rendered = 0;
		return;
	}
	var params = {};
	location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
		var eq = kv.indexOf('=');
		if (kv)
			params[decodeURIComponent(eq < 0 ? kv : kv.slice(0, eq))] =
				eq < 0 ? '' : decodeURIComponent(kv.slice(eq + 1));
	});
	inverted = 'icicle' in params;
	$('icicle').checked = inverted;
	if (params.zoom && window.flame.find(params.zoom) > 0)
		setZoom(window.flame.find(params.zoom));
	else
		render();
	if (params.search)
		window.flame.search(params.search);
	if (params.tip && window.flame.find(params.tip) > 0)
		window.flame.tip(window.flame.find(params.tip));
	$('status').dataset.loadMs = (performance.now() - started).toFixed(1);
})();
