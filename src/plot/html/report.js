/* src/plot/html/report.js - the behaviour of `spent report --html`'s page: reads the profile
 * JSON html_report.c embedded (#spent-data) and builds the tables, the flame graph (click to
 * zoom, search), the time heat map (FlameScope: columns are seconds, rows slices of a second;
 * a selected range redraws the flame graph) and the plots. Errors go into #errors so a
 * headless browser's DOM shows them (tests/e2e/report_html.sh). The URL hash
 * "#search=RE&range=FROM-TO&task=I" (seconds from the start) selects the same as the controls. */
'use strict';
(function () {
	var errorBox = document.getElementById('errors');
	function showError(msg) {
		errorBox.textContent += msg + '\n';
		errorBox.style.display = 'block';
	}
	window.addEventListener('error', function (e) {
		showError('error: ' + e.message + ' (' + e.filename + ':' + e.lineno + ')');
	});
	window.addEventListener('unhandledrejection', function (e) {
		showError('unhandled rejection: ' + e.reason);
	});
	var consoleError = console.error;
	console.error = function () {
		showError('console.error: ' + Array.prototype.join.call(arguments, ' '));
		consoleError.apply(console, arguments);
	};

	var D = JSON.parse(document.getElementById('spent-data').textContent);
	var el = function (id) { return document.getElementById(id); };
	var names = D.names, chains = D.chains, total = D.event.total;

	function make(tag, cls, text) {
		var e = document.createElement(tag);
		if (cls)
			e.className = cls;
		if (text !== undefined)
			e.textContent = text;
		return e;
	}
	function pct(v, t) { return t ? (100 * v / t).toFixed(2) + '%' : '-'; }
	function base(path) { var i = path.lastIndexOf('/'); return i >= 0 && i + 1 < path.length ? path.slice(i + 1) : path; }
	function secs(us) { return (us / 1e6).toFixed(3) + ' s'; }

	/* ---- state: what the flame graph shows ------------------------------------------------ */
	var view = { range: null, task: null, zoom: null, search: '' };
	var detail = D.detail;
	var timed = detail ? detail.rows.filter(function (r) { return r[0] >= 0; }) : [];

	/* ---- the flame graph ------------------------------------------------------------------- */
	function Node(name, parent) {
		this.name = name;
		this.value = 0;
		this.parent = parent;
		this.kids = new Map();
	}
	function addChain(root, chain, count) {
		var n = root;
		n.value += count;
		for (var i = 0; i < chain.length; i++) {
			var k = n.kids.get(chain[i]);
			if (!k) {
				k = new Node(chain[i], n);
				n.kids.set(chain[i], k);
			}
			k.value += count;
			n = k;
		}
	}
	/* The tree of what VIEW selects: detail rows when a range or a task is chosen, else the
	 * profile's stacks. */
	function buildTree() {
		var root = new Node(-1, null);
		if (!view.range && view.task === null) {
			D.stacks.forEach(function (s) { addChain(root, chains[s[0]], s[1]); });
			return root;
		}
		detail.rows.forEach(function (r) {
			if (view.task !== null && r[1] !== view.task)
				return;
			if (view.range && (r[0] < 0 || r[0] < view.range[0] || r[0] >= view.range[1]))
				return;
			addChain(root, chains[r[2]], r[3]);
		});
		return root;
	}
	function hue(name) {
		var h = 0;
		for (var i = 0; i < name.length; i++)
			h = (h * 31 + name.charCodeAt(i)) >>> 0;
		return 'hsl(' + (h % 55) + ',' + (70 + h % 20) + '%,' + (58 + (h >> 8) % 14) + '%)';
	}
	var tree = null;
	var FRAME_H = 17, MIN_FRACTION = 0.0005;
	function drawFlame() {
		var box = el('flame');
		box.textContent = '';
		var zoom = view.zoom || tree;
		if (!tree.value) {
			box.style.height = '2em';
			box.appendChild(make('div', 'empty', 'no samples in this selection'));
			return;
		}
		var frames = [], depth = 0;
		/* the zoomed frame's ancestors span the width, dimmed */
		var anc = [];
		for (var a = zoom.parent; a && a.parent; a = a.parent)
			anc.unshift(a);
		anc.forEach(function (n, i) { frames.push([n, 0, 1, i, true]); });
		(function lay(n, x, d) {
			if (n !== tree) {
				frames.push([n, (x - 0) / zoom.value, n.value / zoom.value, d, false]);
				depth = Math.max(depth, d);
			}
			/* siblings in name order, as flamegraph.pl: the same function sits in the same
			 * place in the whole profile's graph and in a range's */
			var cx = x, kids = Array.from(n.kids.values()).sort(function (p, q) {
				return names[p.name] < names[q.name] ? -1 : names[p.name] > names[q.name] ? 1 : 0;
			});
			kids.forEach(function (k) {
				if (k.value / zoom.value >= MIN_FRACTION)
					lay(k, cx, d + 1);
				cx += k.value;
			});
		})(zoom, 0, zoom === tree ? -1 : anc.length);
		depth = Math.max(depth, anc.length);
		box.style.height = (depth + 1) * FRAME_H + 'px';
		var re = searchRegex();
		frames.forEach(function (f) {
			var n = f[0], name = names[n.name];
			var d = make('div', 'fr' + (f[4] ? ' anc' : '') + (re && re.test(name) ? ' match' : ''), name);
			d.style.left = 100 * f[1] + '%';
			d.style.width = 100 * f[2] + '%';
			d.style.top = (depth - f[3]) * FRAME_H + 'px';
			d.style.background = hue(name);
			d.title = name + ' (' + n.value + ' samples, ' + pct(n.value, tree.value) + ')';
			d.node = n;
			box.appendChild(d);
		});
		updateSearchResult();
	}
	el('flame').addEventListener('click', function (e) {
		var n = e.target.node;
		if (!n)
			return;
		view.zoom = n;
		el('frame-detail').textContent = e.target.title;
		drawFlame();
	});
	el('reset').addEventListener('click', function () {
		view.zoom = null;
		el('frame-detail').textContent = '';
		drawFlame();
	});

	/* ---- search: matching frames highlighted, and the share of samples under them ---------- */
	function searchRegex() {
		if (!view.search)
			return null;
		try {
			return new RegExp(view.search, 'i');
		} catch (e) {	/* not a regular expression: the text itself */
			return new RegExp(view.search.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
		}
	}
	function updateSearchResult() {
		var out = el('search-result'), re = searchRegex();
		if (!re) {
			out.textContent = '';
			out.removeAttribute('data-percent');
			return;
		}
		var matched = 0, frames = 0;
		(function walk(n, under) {
			var m = n !== tree && re.test(names[n.name]);
			if (m)
				frames++;
			if (m && !under)
				matched += n.value;	/* nested matches are counted once, at the top one */
			n.kids.forEach(function (k) { walk(k, under || m); });
		})(tree, false);
		var p = tree.value ? 100 * matched / tree.value : 0;
		out.textContent = 'matched ' + p.toFixed(2) + '% (' + matched + ' of ' + tree.value +
			' samples, ' + frames + ' frames)';
		out.setAttribute('data-percent', p.toFixed(2));
		out.setAttribute('data-frames', frames);
	}
	el('search').addEventListener('input', function (e) {
		view.search = e.target.value;
		drawFlame();
	});

	/* ---- what is selected, said once for the flame graph ---------------------------------- */
	function redraw() {
		tree = buildTree();
		view.zoom = null;
		var what = [];
		if (view.range)
			what.push('from ' + secs(view.range[0]) + ' to ' + secs(view.range[1]));
		if (view.task !== null)
			what.push('task ' + taskName(view.task));
		el('flame-info').textContent = (what.length ? what.join(', ') : 'whole profile') + ': ' +
			tree.value + ' samples of ' + D.event.name;
		el('range-info').textContent = view.range ? 'selected ' + what[0] : '';
		drawFlame();
		markHeat();
		markTasks();
	}
	el('whole').addEventListener('click', function () {
		view.range = null;
		view.task = null;
		pending = null;
		redraw();
	});

	/* ---- the time heat map ----------------------------------------------------------------- */
	var heat = null, pending = null;
	function setupHeat() {
		var box = el('heatmap');
		if (!timed.length) {
			box.textContent = detail ? 'the samples carry no times' :
				'no sample times in this profile (record it with a spent that keeps them)';
			box.style.background = 'none';
			return;
		}
		var bucket = Math.max(detail.bucket_us, 1);
		var rowsPerSec = Math.max(1, Math.min(50, Math.floor(1e6 / Math.max(bucket, 20000))));
		var sliceUs = 1e6 / rowsPerSec, spanUs = detail.span_us;
		timed.forEach(function (r) { spanUs = Math.max(spanUs, r[0] + bucket); });
		var seconds = Math.max(1, Math.ceil(spanUs / 1e6));
		/* a long profile: several seconds per column, so the map stays a screen wide */
		var secPerCol = Math.ceil(seconds / 300), cols = Math.ceil(seconds / secPerCol);
		var colUs = secPerCol * 1e6, rowUs = sliceUs * secPerCol;
		var cw = Math.max(4, Math.min(28, Math.floor((box.clientWidth - 50) / cols)));
		var ch = rowsPerSec > 1 ? 6 : 24, left = 44;
		box.style.width = left + cols * cw + 'px';
		box.style.height = rowsPerSec * ch + 16 + 'px';
		heat = { cells: [], task: undefined, rowsPerSec: rowsPerSec, colUs: colUs, rowUs: rowUs,
			 cw: cw, ch: ch, left: left };
		for (var s = 0; s < cols; s += Math.max(1, Math.ceil(cols / 12))) {
			var lab = make('div', 'axis', s * secPerCol + 's');
			lab.style.left = left + s * cw + 'px';
			lab.style.top = rowsPerSec * ch + 2 + 'px';
			box.appendChild(lab);
		}
		[[0, '0 ms'], [rowsPerSec - 1, Math.round((rowsPerSec - 1) * sliceUs / 1000) + ' ms']].forEach(function (a) {
			var lab = make('div', 'axis', a[1]);
			lab.style.left = '0';
			lab.style.top = a[0] * ch + 'px';
			box.appendChild(lab);
		});
		var down = null;
		box.addEventListener('mousedown', function (e) {
			if (e.target.cell !== undefined)
				down = e.target.cell;
			e.preventDefault();
		});
		box.addEventListener('mouseup', function (e) {
			var k = e.target.cell;
			if (k === undefined || down === null) {
				down = null;
				return;
			}
			if (k !== down)		/* dragged across cells */
				selectCells(down, k);
			else if (pending === null) {	/* first click: the start cell */
				pending = k;
				markHeat();
			} else
				selectCells(pending, k);
			down = null;
		});
	}
	/* The cells of the samples of the chosen thread (or of all): only cells with samples are
	 * elements, the empty ones are the map's background. */
	function drawHeatCells() {
		var box = el('heatmap'), h = heat, counts = new Map(), max = 0;
		h.cells.forEach(function (d) { box.removeChild(d); });
		h.cells = [];
		h.task = view.task;
		timed.forEach(function (r) {
			if (view.task !== null && r[1] !== view.task)
				return;
			var c = Math.floor(r[0] / h.colUs), row = Math.floor((r[0] % h.colUs) / h.rowUs);
			var k = c * h.rowsPerSec + row, v = (counts.get(k) || 0) + r[3];
			counts.set(k, v);
			max = Math.max(max, v);
		});
		counts.forEach(function (v, k) {
			var c = Math.floor(k / h.rowsPerSec), row = k % h.rowsPerSec;
			var d = make('div', 'hc');
			d.style.left = h.left + c * h.cw + 'px';
			d.style.top = row * h.ch + 'px';
			d.style.width = h.cw - 1 + 'px';
			d.style.height = h.ch - 1 + 'px';
			/* white to red by the square root: a few samples still show */
			var t = Math.sqrt(v / max), g = Math.round(235 * (1 - t));
			d.style.background = 'rgb(' + (240 - Math.round(40 * t)) + ',' + g + ',' + g + ')';
			d.cell = k;
			d.setAttribute('data-n', v);
			d.title = secs(cellStart(k)) + ' +' + (h.rowUs / 1000) + ' ms: ' + v + ' samples';
			box.appendChild(d);
			h.cells.push(d);
		});
	}
	function cellStart(k) {
		return Math.floor(k / heat.rowsPerSec) * heat.colUs + (k % heat.rowsPerSec) * heat.rowUs;
	}
	function selectCells(a, b) {
		var from = Math.min(cellStart(a), cellStart(b)), to = Math.max(cellStart(a), cellStart(b)) + heat.rowUs;
		pending = null;
		view.range = [from, to];
		redraw();
	}
	function markHeat() {
		if (!heat)
			return;
		if (heat.task !== view.task)
			drawHeatCells();
		heat.cells.forEach(function (d) {
			var t = cellStart(d.cell);
			d.classList.toggle('sel', !!view.range && t >= view.range[0] && t < view.range[1]);
			d.classList.toggle('pending', d.cell === pending);
		});
	}

	/* ---- tables ---------------------------------------------------------------------------- */
	/* A sortable table: COLS are [title, kind ('num', 'pct' or 'text')], ROWS arrays of values;
	 * ONPICK(row) makes rows clickable. Only the first TABLE_ROWS rows (in the current sort)
	 * become DOM rows, then one row saying how many are left out: a shell loop leaves
	 * thousands of short-lived tasks, and a <tr> each made a 50k-sample page take seconds
	 * to load. */
	var TABLE_ROWS = 200;
	function fillTable(table, cols, rows, onpick) {
		table.textContent = '';
		var head = make('tr');
		cols.forEach(function (c, i) {
			var th = make('th', c[1] === 'text' ? 'text' : '', c[0]);
			th.addEventListener('click', function () {
				rows.sort(function (x, y) {
					return c[1] === 'text' ? String(x[i]).localeCompare(String(y[i])) : y[i] - x[i];
				});
				body();
			});
			head.appendChild(th);
		});
		function body() {
			while (table.rows.length > 1)
				table.deleteRow(1);
			rows.slice(0, TABLE_ROWS).forEach(function (r) {
				var tr = make('tr', onpick ? 'pick' : '');
				cols.forEach(function (c, i) {
					var v = r[i];
					tr.appendChild(make('td', c[1] === 'text' ? 'text' : '',
						c[1] === 'pct' ? pct(v, total) : String(v)));
				});
				if (onpick) {
					tr.row = r;
					tr.addEventListener('click', function () { onpick(r); });
				}
				table.appendChild(tr);
			});
			if (rows.length > TABLE_ROWS) {
				var more = make('tr', 'more'), td = make('td', 'text', (rows.length - TABLE_ROWS) +
					' more rows not shown (sort by a column to bring others to the top)');
				td.colSpan = cols.length;
				more.appendChild(td);
				table.appendChild(more);
			}
		}
		table.appendChild(head);
		body();
	}
	function fillTables() {
		var evs = D.events.map(function (e) { return e.name; });
		var fcols = [['self %', 'pct'], ['self', 'num']];
		if (D.have_stacks)
			fcols.push(['children %', 'pct']);
		evs.slice(1).forEach(function (n) { fcols.push([n, 'num']); });
		fcols.push(['function', 'text'], ['image', 'text']);
		fillTable(el('functions'), fcols, D.functions.map(function (f) {
			var r = [f[3], f[3]];
			if (D.have_stacks)
				r.push(f[2]);
			return r.concat(f.slice(4), [f[0], base(f[1])]);
		}));
		fillTable(el('images'), [['samples %', 'pct'], ['samples', 'num']]
			.concat(evs.slice(1).map(function (n) { return [n, 'num']; }), [['image', 'text']]),
			D.images.map(function (i) { return [i[1], i[1]].concat(i.slice(2), [i[0]]); }));
		if (!detail || !detail.rows.length) {
			el('task-tables').style.display = 'none';
			return;
		}
		var byTask = new Map(), byComm = new Map();
		detail.rows.forEach(function (r) {
			byTask.set(r[1], (byTask.get(r[1]) || 0) + r[3]);
		});
		var threads = [];
		byTask.forEach(function (v, t) {
			var task = t >= 0 ? D.tasks[t] : ['[unknown]', 0, 0, null];
			threads.push([v, v, task[0], task[1], task[2], t]);
			byComm.set(task[0], (byComm.get(task[0]) || 0) + v);
		});
		threads.sort(function (a, b) { return b[0] - a[0]; });
		var comms = [];
		byComm.forEach(function (v, c) { comms.push([v, v, c]); });
		comms.sort(function (a, b) { return b[0] - a[0]; });
		fillTable(el('comms'), [['samples %', 'pct'], ['samples', 'num'], ['command', 'text']], comms);
		fillTable(el('threads'), [['samples %', 'pct'], ['samples', 'num'], ['command', 'text'],
			['pid', 'num'], ['tid', 'num']], threads, function (r) {
			view.task = view.task === r[5] ? null : r[5];
			redraw();
		});
	}
	function taskName(t) {
		var task = t >= 0 ? D.tasks[t] : null;
		return task ? task[0] + ' ' + task[1] + '/' + task[2] : '[unknown]';
	}
	function markTasks() {
		Array.prototype.forEach.call(el('threads').rows, function (tr) {
			tr.classList.toggle('chosen', !!tr.row && tr.row[5] === view.task);
		});
	}

	/* ---- plots ----------------------------------------------------------------------------- */
	function fillPlots() {
		if (!D.plots.length) {
			el('plots-section').style.display = 'none';
			return;
		}
		D.plots.forEach(function (p) {
			el('plots').appendChild(make('h3', '', p.title));
			var img = make('img');
			img.alt = p.title;
			img.addEventListener('load', function () { img.setAttribute('data-width', img.naturalWidth); });
			img.addEventListener('error', function () { showError('plot ' + p.title + ' does not load'); });
			img.src = p.uri;	/* a data: URI: the bytes are in this page */
			el('plots').appendChild(img);
		});
	}

	/* ---- the URL hash: #search=RE&range=FROM-TO&task=I ------------------------------------- */
	function applyHash() {
		var h = {};
		location.hash.replace(/^#/, '').split('&').forEach(function (kv) {
			var i = kv.indexOf('=');
			if (i > 0)
				h[decodeURIComponent(kv.slice(0, i))] = decodeURIComponent(kv.slice(i + 1));
		});
		if (h.range !== undefined && detail) {
			var m = /^([0-9.]+)-([0-9.]+)$/.exec(h.range);
			view.range = m ? [parseFloat(m[1]) * 1e6, parseFloat(m[2]) * 1e6] : null;
		}
		if (h.task !== undefined && detail)
			view.task = /^-?[0-9]+$/.test(h.task) ? parseInt(h.task, 10) : null;
		if (h.search !== undefined) {
			view.search = h.search;
			el('search').value = h.search;
		}
		redraw();
	}

	document.title = D.title + ' - spent report';
	el('title').textContent = D.title;
	el('summary').textContent = total + ' samples of ' + D.event.name +
		(D.event.freq ? ' at ' + D.event.period + ' Hz' : ' (period ' + D.event.period + ')') +
		(D.event.unknown ? ', ' + D.event.unknown + ' not placed in an image' : '') +
		(detail && detail.start_ms ? ', from ' + new Date(detail.start_ms).toISOString() +
		 ' for ' + secs(detail.span_us) : '') + ' - ' + D.generator;
	fillTables();
	fillPlots();
	setupHeat();
	applyHash();
	window.addEventListener('hashchange', applyHash);
	document.body.setAttribute('data-ready', '1');
})();
