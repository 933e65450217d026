// liqoctl dashboard: draws the state the server pushes on /api/stream
// (the same JSON as /api/state). Every string from the clusters goes
// through textContent, never through HTML parsing.
'use strict';

const SVG = 'http://www.w3.org/2000/svg';
const W = 900, H = 560, R = 46;
let state = null;
let selected = null; // {kind: 'cluster'|'peering', id}

// el builds an element: el('td', {class: 'num'}, 'text', child, ...).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  setAttrs(e, attrs);
  for (const c of children) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  return e;
}
function sv(tag, attrs, ...children) {
  const e = document.createElementNS(SVG, tag);
  setAttrs(e, attrs);
  for (const c of children) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  return e;
}
function setAttrs(e, attrs) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
}
function badge(word) { return el('span', {class: 'badge ' + word}, word); }
function mark(status) { return {Healthy: '✓', Pending: '…', Unhealthy: '✕', Disabled: '–'}[status] || '?'; }
function resources(m) {
  if (!m) return '—';
  return Object.keys(m).sort().map(k => k + ' ' + m[k]).join(', ');
}
function table(headers, rows, caption) {
  if (!rows.length) return el('p', {class: 'empty'}, caption);
  const t = el('table', {}, el('thead', {}, el('tr', {}, ...headers.map(h => el('th', {scope: 'col'}, h)))));
  const body = el('tbody');
  for (const r of rows) body.append(el('tr', r.attrs || {}, ...r.cells.map(c => c instanceof Node && c.tagName === 'TD' ? c : el('td', {}, c))));
  t.append(body);
  return t;
}
function selectButton(kind, id, label) {
  return el('button', {class: 'link', type: 'button', 'data-select': kind + ':' + id, onclick: () => select(kind, id, true)}, label);
}

// The topology: clusters on a circle, peerings as curved arrows.
function layout(clusters) {
  const pos = {};
  const n = clusters.length;
  const cx = W / 2, cy = H / 2, rad = Math.min(W, H) / 2 - R - 30;
  clusters.forEach((c, i) => {
    if (n === 1) { pos[c.id] = {x: cx, y: cy}; return; }
    const a = -Math.PI / 2 + (2 * Math.PI * i) / n;
    pos[c.id] = {x: cx + rad * Math.cos(a) * 1.45, y: cy + rad * Math.sin(a)};
  });
  return pos;
}

function renderTopology() {
  const nodes = document.getElementById('nodes'), edges = document.getElementById('edges');
  const pos = layout(state.clusters);
  const items = [];
  edges.replaceChildren();
  nodes.replaceChildren();
  for (const c of state.clusters) {
    const p = pos[c.id];
    const cls = ['cluster', c.watched ? '' : 'unwatched', c.error ? 'error' : ''].join(' ').trim();
    const sub = c.error ? (c.error === 'connecting' ? 'connecting…' : 'error') : (c.watched ? 'context ' + c.context : 'not in kubeconfig');
    const label = 'Cluster ' + c.id + ', ' + (c.error ? 'error: ' + c.error : sub) + (c.watchError ? ', watch failing' : '');
    const g = sv('g', {class: cls, tabindex: '0', role: 'button', 'aria-label': label, 'data-cluster': c.id, 'data-key': 'cluster:' + c.id},
      sv('title', {}, label),
      sv('circle', {cx: p.x, cy: p.y, r: R}),
      sv('text', {x: p.x, y: p.y + 2, class: 'name'}, c.id),
      sv('text', {x: p.x, y: p.y + 19, class: 'sub'}, sub + (c.watchError ? ' ⚠' : '')));
    hook(g, 'cluster', c.id);
    nodes.append(g);
    items.push(g);
  }
  for (const pe of state.peerings) {
    const a = pos[pe.consumer], b = pos[pe.provider];
    if (!a || !b) continue;
    const dx = b.x - a.x, dy = b.y - a.y, len = Math.hypot(dx, dy) || 1;
    const ux = dx / len, uy = dy / len, nx = -uy, ny = ux, bend = 34;
    const mx = (a.x + b.x) / 2 + nx * bend, my = (a.y + b.y) / 2 + ny * bend;
    // Start and end on the circles, towards the control point.
    const s = towards(a, {x: mx, y: my}, R), e = towards(b, {x: mx, y: my}, R + 2);
    const d = `M${s.x},${s.y} Q${mx},${my} ${e.x},${e.y}`;
    const mods = `A${mark(pe.authentication.status)} O${mark(pe.offloading.status)} N${mark(pe.networking.status)}`;
    const pod = (pe.cidrs || []).find(c => c.kind === 'pod' && c.on === pe.consumer && c.remapped);
    const lines = [pe.health + (pe.health === 'Unhealthy' ? ' ✕' : ''), mods + (pe.latency ? ' · ' + pe.latency : '')];
    if (pod) lines.push(pod.cidr + ' → ' + pod.remapped);
    const label = `Peering ${pe.consumer} consumes from ${pe.provider}: ${pe.health}; authentication ${pe.authentication.status}, ` +
      `offloading ${pe.offloading.status}, networking ${pe.networking.status}` + (pe.latency ? `; latency ${pe.latency}` : '');
    const lx = (a.x + b.x) / 2 + nx * bend * 0.55, ly = (a.y + b.y) / 2 + ny * bend * 0.55;
    const lw = Math.max(...lines.map(l => l.length)) * 6.6 + 12, lh = lines.length * 15 + 6;
    const tag = sv('g', {class: 'edge-label'}, sv('rect', {x: lx - lw / 2, y: ly - lh / 2, width: lw, height: lh, rx: 4}));
    lines.forEach((l, i) => tag.append(sv('text', {x: lx, y: ly - lh / 2 + 15 * (i + 1), class: i === 0 ? 'health ' + pe.health : ''}, l)));
    const g = sv('g', {class: 'peering', tabindex: '0', role: 'button', 'aria-label': label, 'data-peering': pe.id,
      'data-health': pe.health, 'data-key': 'peering:' + pe.id},
    sv('title', {}, label),
    sv('path', {d, class: 'edge-hit'}),
    sv('path', {d, class: 'edge-line health-' + pe.health, 'marker-end': 'url(#arrow)'}),
    tag);
    hook(g, 'peering', pe.id);
    edges.append(g);
    items.push(g);
  }
  return items;
}
function towards(p, q, r) {
  const dx = q.x - p.x, dy = q.y - p.y, len = Math.hypot(dx, dy) || 1;
  return {x: +(p.x + dx / len * r).toFixed(1), y: +(p.y + dy / len * r).toFixed(1)};
}
function hook(g, kind, id) {
  if (selected && selected.kind === kind && selected.id === id) g.classList.add('selected');
  g.addEventListener('click', () => select(kind, id, false));
  g.addEventListener('keydown', ev => {
    if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); select(kind, id, false); }
  });
}

// Arrow keys move between the topology's items, in their tab order.
document.addEventListener('keydown', ev => {
  const items = [...document.querySelectorAll('#topology [data-key]')];
  const i = items.indexOf(document.activeElement);
  if (ev.key === 'Escape') { select(null); return; }
  if (i < 0) return;
  let j = -1;
  if (ev.key === 'ArrowRight' || ev.key === 'ArrowDown') j = (i + 1) % items.length;
  if (ev.key === 'ArrowLeft' || ev.key === 'ArrowUp') j = (i - 1 + items.length) % items.length;
  if (j >= 0) { ev.preventDefault(); items[j].focus(); }
});

function select(kind, id, focusDetails) {
  selected = kind ? {kind, id} : null;
  for (const g of document.querySelectorAll('#topology [data-key]')) {
    g.classList.toggle('selected', !!selected && g.dataset.key === kind + ':' + id);
  }
  renderDetails();
  if (focusDetails) document.getElementById('details').focus();
}

function renderDetails() {
  const body = document.getElementById('details-body');
  if (!state || !selected) { body.replaceChildren(el('p', {}, 'Select a cluster or a peering.')); return; }
  if (selected.kind === 'cluster') {
    const c = state.clusters.find(x => x.id === selected.id);
    if (!c) { body.replaceChildren(el('p', {}, 'Cluster ' + selected.id + ' is gone.')); return; }
    const dl = el('dl', {}, el('dt', {}, 'Cluster ID'), el('dd', {}, c.id),
      el('dt', {}, 'Context'), el('dd', {}, c.context || 'none: known from its peers'),
      el('dt', {}, 'API server'), el('dd', {}, c.apiServer || '—'),
      el('dt', {}, 'Labels'), el('dd', {}, c.labels ? Object.entries(c.labels).map(([k, v]) => k + '=' + v).join(', ') : '—'));
    if (c.error) dl.append(el('dt', {}, 'Error'), el('dd', {}, c.error));
    if (c.watchError) dl.append(el('dt', {}, 'Watch error'), el('dd', {}, c.watchError));
    const prov = state.peerings.filter(p => p.consumer === c.id), cons = state.peerings.filter(p => p.provider === c.id);
    body.replaceChildren(el('h3', {}, 'Cluster ' + c.id), dl,
      el('h3', {}, 'Its providers'), peeringList(prov, p => p.provider),
      el('h3', {}, 'Its consumers'), peeringList(cons, p => p.consumer));
    return;
  }
  const p = state.peerings.find(x => x.id === selected.id);
  if (!p) { body.replaceChildren(el('p', {}, 'The peering ' + selected.id.replace('->', ' → ') + ' is gone.')); return; }
  const mods = el('dl');
  for (const [name, m] of [['Authentication', p.authentication], ['Offloading', p.offloading], ['Networking', p.networking]]) {
    const dd = el('dd', {}, badge(m.status));
    if (m.problems && m.problems.length) dd.append(el('ul', {class: 'problems'}, ...m.problems.map(x => el('li', {}, x))));
    mods.append(el('dt', {}, name), dd);
  }
  mods.append(el('dt', {}, 'Latency'), el('dd', {}, p.latency || '—'), el('dt', {}, 'Seen by'), el('dd', {}, p.seenBy.join(', ')));
  const names = new Set();
  for (const s of p.slices || []) for (const m of [s.requested, s.granted]) for (const k of Object.keys(m || {})) names.add(k);
  for (const k of Object.keys(p.used || {})) names.add(k);
  const resRows = [...names].sort().map(k => ({cells: [k,
    (p.slices || []).map(s => (s.requested || {})[k]).filter(Boolean).join(' + ') || '—',
    (p.slices || []).map(s => (s.granted || {})[k]).filter(Boolean).join(' + ') || '—',
    (p.used || {})[k] || '—',
    ((p.slices || []).find(s => s.largestFree) || {largestFree: {}}).largestFree[k] || '—']}));
  body.replaceChildren(el('h3', {}, 'Peering ' + p.consumer + ' → ' + p.provider), badge(p.health), mods,
    el('h3', {}, 'Resources'),
    table(['resource', 'asked', 'granted', 'used', 'largest free on one node'], resRows, 'No ResourceSlice.'),
    table(['slice', 'authentication', 'resources'], (p.slices || []).map(s => ({cells: [s.name, s.authentication, s.resources]})), ''),
    el('h3', {}, 'Remapped CIDRs'),
    table(['of', 'on', 'kind', 'CIDR', 'reached as'], (p.cidrs || []).map(c => ({cells: [c.of, c.on, c.kind, c.cidr, c.remapped || 'not remapped yet']})), 'No network fabric.'),
    el('h3', {}, 'Virtual nodes'),
    table(['node', 'ready', 'reason'], (p.virtualNodes || []).map(v => ({cells: [v.name, v.ready ? 'yes' : 'no', v.reason || '']})), 'None.'));
}
function peeringList(list, other) {
  if (!list.length) return el('p', {class: 'empty'}, 'None.');
  return el('ul', {}, ...list.map(p => el('li', {}, selectButton('peering', p.id, other(p)), ' ', badge(p.health))));
}

function renderPeerings() {
  const rows = state.peerings.map(p => ({attrs: {'data-peering': p.id}, cells: [
    el('td', {}, selectButton('peering', p.id, p.consumer + ' → ' + p.provider)), el('td', {}, badge(p.health)),
    p.authentication.status, p.offloading.status, p.networking.status, p.latency || '—',
    resources(sumSlices(p.slices, 'requested')), resources(sumSlices(p.slices, 'granted')), resources(p.used)]}));
  document.getElementById('peerings').replaceChildren(table(
    ['consumer → provider', 'health', 'authentication', 'offloading', 'networking', 'latency', 'asked', 'granted', 'used'], rows,
    'No peering among these clusters.'));
}
function sumSlices(slices, field) {
  const out = {};
  for (const s of slices || []) for (const [k, v] of Object.entries(s[field] || {})) out[k] = out[k] ? out[k] + ' + ' + v : v;
  return Object.keys(out).length ? out : null;
}

function renderNamespaces() {
  const clusters = state.clusters.map(c => c.id);
  const rows = state.namespaces.map(ns => {
    const cells = [ns.name, ns.cluster, badge(ns.phase)];
    for (const c of clusters) {
      if (c === ns.cluster) { cells.push('home: ' + ns.localPods + ' local' + (ns.pendingPods ? ', ' + ns.pendingPods + ' pending' : '')); continue; }
      const t = ns.twins.find(x => x.cluster === c);
      if (!t) { cells.push('—'); continue; }
      const pods = (ns.remotePods || {})[c] || 0;
      const td = el('td', {'data-twin': c}, el('span', {}, t.name || '?'), ' ', badge(t.state), ' ', pods + ' remote');
      if (t.reason) td.title = t.reason;
      cells.push(td);
    }
    return {attrs: {'data-namespace': ns.cluster + '/' + ns.name}, cells};
  });
  document.getElementById('namespaces').replaceChildren(table(['namespace', 'home', 'phase', ...clusters], rows, 'No namespace is offloaded.'));
}

function renderPods() {
  const rows = state.troubledPods.map(p => ({attrs: {'data-pod': p.cluster + '/' + p.namespace + '/' + p.name}, cells: [
    p.cluster, p.namespace + '/' + p.name, p.provider || p.node || '—', badge(p.trouble), p.message || '']}));
  document.getElementById('pods').replaceChildren(table(['cluster', 'pod', 'provider', 'trouble', 'reason given'], rows, 'No pod in trouble.'));
}

function renderEvents() {
  if (!state.events.length) { document.getElementById('events').replaceChildren(el('p', {class: 'empty'}, 'No peering event.')); return; }
  // Scrollable, so focusable: the keyboard scrolls it too.
  const ol = el('ol', {class: 'timeline', tabindex: '0', 'aria-label': 'Peering events, newest first'});
  for (const e of state.events) {
    const t = new Date(e.time);
    ol.append(el('li', {}, el('time', {datetime: e.time}, t.toLocaleString()), badge(e.type), ' ',
      el('strong', {}, e.reason), ' ', e.cluster + ': ' + e.kind + ' ' + e.object + (e.count > 1 ? ' (×' + e.count + ')' : ''), ' — ', e.message));
  }
  document.getElementById('events').replaceChildren(ol);
}

function render() {
  const key = document.activeElement && document.activeElement.dataset ? document.activeElement.dataset.key || document.activeElement.dataset.select : null;
  renderTopology();
  renderDetails();
  renderPeerings();
  renderNamespaces();
  renderPods();
  renderEvents();
  // The redrawn item of the one that had the focus gets it back.
  if (key) {
    const again = document.querySelector(`[data-key="${CSS.escape(key)}"], [data-select="${CSS.escape(key)}"]`);
    if (again) again.focus();
  }
  const st = document.getElementById('status');
  st.classList.remove('stale');
  st.textContent = `Live · ${state.clusters.length} clusters, ${state.peerings.length} peerings · updated ${new Date(state.updated).toLocaleTimeString()}`;
  document.body.dataset.version = state.version;
  document.body.dataset.peerings = state.peerings.length;
}

function connect() {
  const es = new EventSource('api/stream');
  es.addEventListener('state', ev => { state = JSON.parse(ev.data); render(); });
  es.onerror = () => {
    const st = document.getElementById('status');
    st.classList.add('stale');
    st.textContent = 'The dashboard server is unreachable: showing the last picture, reconnecting…';
  };
}
connect();
