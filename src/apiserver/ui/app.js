/*
 * Corral's web dashboard (docs/observability.md). Plain JavaScript, no
 * framework, no build step: the API server serves this file as it is.
 *
 * Data: nodes, pods, Volcano Queues and PodGroups are listed, then watched
 * (?watch=1 from the list's resourceVersion, read as JSON lines from a
 * ReadableStream; re-listed on 410 Gone or a broken stream). Per-GPU
 * utilization comes from each node's DCGM exposition through the API
 * server's node proxy (/api/v1/nodes/NAME/proxy/metrics), polled; without
 * that route the grid shows allocation only. Accounting lists
 * corral.dev/v1 UsageRecords when the server has them. Every request carries
 * the bearer token; the token comes from the URL fragment (#token=..., never
 * sent to the server) or the sign-in box and lives in sessionStorage.
 *
 * Everything the page shows from the cluster goes into the DOM as text
 * (textContent, setAttribute), never as HTML.
 */
'use strict';

(() => {
    const POLL_MS = 3000;          /* metrics and history sample period */
    const USAGE_MS = 15000;        /* accounting refresh */
    const HISTORY_MAX = 2400;      /* samples kept for the chart (2 h at 3 s) */
    const MAX_ROWS = 300;          /* rows per table */
    const MAX_METRICS = 8 << 20;   /* bytes of one node's exposition parsed */
    const GPU = 'nvidia.com/gpu';
    const TOKEN_KEY = 'corral.dashboard.token';
    const SVGNS = 'http://www.w3.org/2000/svg';

    const $ = (id) => document.getElementById(id);
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

    /* --- DOM helpers: text only ------------------------------------------------ */

    const tips = new WeakMap();

    function h(tag, attrs, ...kids) {
        const el = document.createElement(tag);
        setAttrs(el, attrs);
        append(el, kids);
        return el;
    }

    function svg(tag, attrs, ...kids) {
        const el = document.createElementNS(SVGNS, tag);
        setAttrs(el, attrs);
        append(el, kids);
        return el;
    }

    function setAttrs(el, attrs) {
        for (const [k, v] of Object.entries(attrs || {})) {
            if (v === undefined || v === null || v === false)
                continue;
            if (k === 'text')
                el.textContent = String(v);
            else if (k === 'tip')
                tips.set(el, v);
            else if (k === 'width%')
                el.style.width = `${Math.max(0, Math.min(100, v))}%`;
            else if (k === 'left%')
                el.style.left = `${Math.max(0, Math.min(100, v))}%`;
            else if (k === 'height%')
                el.style.height = `${Math.max(0, Math.min(100, v))}%`;
            else if (k === 'bg')
                el.style.background = v;
            else
                el.setAttribute(k, String(v));
        }
    }

    function append(el, kids) {
        for (const c of kids.flat(Infinity)) {
            if (c === null || c === undefined || c === false)
                continue;
            el.append(c instanceof Node ? c : String(c));
        }
    }

    function replace(id, ...kids) {
        const el = $(id);
        el.replaceChildren();
        append(el, kids);
        return el;
    }

    /* --- formatting ------------------------------------------------------------- */

    function parseQty(q) {
        if (q === undefined || q === null)
            return NaN;
        if (typeof q === 'number')
            return q;
        const m = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$/.exec(String(q).trim());
        if (!m)
            return NaN;
        const mult = {
            '': 1, n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
            Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3, Ti: 1024 ** 4, Pi: 1024 ** 5, Ei: 1024 ** 6,
        }[m[2]];
        return mult === undefined ? NaN : parseFloat(m[1]) * mult;
    }

    function age(ts) {
        const t = Date.parse(ts || '');
        if (!Number.isFinite(t))
            return '';
        return dur(Math.max(0, (Date.now() - t) / 1000));
    }

    function dur(s) {
        if (!Number.isFinite(s))
            return '';
        if (s < 60)
            return `${Math.round(s)}s`;
        if (s < 3600)
            return `${Math.floor(s / 60)}m${s % 60 >= 1 ? `${Math.floor(s % 60)}s` : ''}`;
        if (s < 86400)
            return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60)}m`;
        return `${Math.floor(s / 86400)}d${Math.floor((s % 86400) / 3600)}h`;
    }

    function num(v, digits = 1) {
        if (!Number.isFinite(v))
            return '–';
        return Number.isInteger(v) ? String(v) : v.toFixed(digits);
    }

    const pct = (v) => (Number.isFinite(v) ? `${Math.round(v)}%` : '–');
    const nsName = (o) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name);
    const ann = (o, k) => (o.metadata.annotations || {})[k];
    const cond = (o, type) => ((o.status && o.status.conditions) || []).find((c) => c.type === type);

    /* --- authentication and requests ---------------------------------------------- */

    let token = '';
    let signedIn = false;

    function takeFragmentToken() {
        const m = /(?:^#|&)token=([^&]*)/.exec(location.hash);
        if (!m)
            return;
        try {
            sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
        } catch (e) {
            /* storage refused: the token is used for this page only */
            token = decodeURIComponent(m[1]);
        }
        /* Out of the address bar and history. */
        history.replaceState(null, '', location.pathname + location.search);
    }

    class HttpError extends Error {
        constructor(status, message) {
            super(message || `HTTP ${status}`);
            this.status = status;
        }
    }

    async function api(path, opts = {}) {
        const res = await fetch(path, {
            method: opts.method || 'GET',
            headers: Object.assign({
                Authorization: `Bearer ${token}`,
                Accept: opts.text ? 'text/plain' : 'application/json',
            }, opts.body ? { 'Content-Type': 'application/json' } : {}),
            body: opts.body,
            cache: 'no-store',
            credentials: 'omit',
            signal: opts.signal,
        });
        if (res.status === 401) {
            await res.body?.cancel().catch(() => {});
            signOut('The token was not accepted (401).');
            throw new HttpError(401);
        }
        return res;
    }

    async function getJSON(path) {
        const res = await api(path);
        if (!res.ok) {
            await res.body?.cancel().catch(() => {});
            throw new HttpError(res.status);
        }
        return res.json();
    }

    function signOut(why) {
        try {
            sessionStorage.removeItem(TOKEN_KEY);
        } catch (e) { /* nothing kept */ }
        if (signedIn) {
            /* Stop every watch and poll: a reload starts clean. */
            location.reload();
            return;
        }
        showLogin(why);
    }

    function showLogin(why) {
        $('main').hidden = true;
        $('login').hidden = false;
        $('signout').hidden = true;
        setLive('off', 'signed out');
        const err = $('login-error');
        err.hidden = !why;
        err.textContent = why || '';
        $('login-token').focus();
    }

    /* --- list and watch --------------------------------------------------------------- */

    const store = { nodes: new Map(), pods: new Map(), queues: new Map(), podgroups: new Map() };
    const watches = [];

    function keyOf(o) {
        return nsName(o);
    }

    function slim(o) {
        if (o && o.metadata)
            delete o.metadata.managedFields;
        return o;
    }

    class Watch {
        constructor(name, path, map) {
            this.name = name;
            this.path = path;
            this.map = map;
            this.rv = '';
            this.ok = false;
            this.missing = false;
        }

        async run() {
            let backoff = 500;
            for (;;) {
                try {
                    if (!this.rv)
                        await this.list();
                    await this.watch();
                    backoff = 500; /* the server ended the stream: watch on from rv */
                } catch (e) {
                    this.ok = false;
                    if (e && e.gone) {
                        this.rv = '';
                        continue;
                    }
                    if (e instanceof HttpError && e.status === 401)
                        return;
                    if (e instanceof HttpError && (e.status === 404 || e.status === 403)) {
                        this.missing = true;
                        changed();
                        await sleep(30000);
                    } else {
                        changed();
                        await sleep(backoff);
                        backoff = Math.min(backoff * 2, 10000);
                    }
                    this.rv = '';
                }
            }
        }

        async list() {
            const list = await getJSON(this.path);
            this.map.clear();
            for (const o of list.items || [])
                this.map.set(keyOf(o), slim(o));
            this.rv = (list.metadata && list.metadata.resourceVersion) || '';
            this.ok = true;
            this.missing = false;
            changed();
        }

        async watch() {
            const q = `watch=1&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(this.rv)}`;
            const res = await api(`${this.path}?${q}`);
            if (res.status === 410)
                throw { gone: true };
            if (!res.ok || !res.body) {
                await res.body?.cancel().catch(() => {});
                throw new HttpError(res.status);
            }
            this.ok = true;
            changed();
            const reader = res.body.getReader();
            const dec = new TextDecoder();
            let buf = '';
            try {
                for (;;) {
                    const { value, done } = await reader.read();
                    if (done)
                        return;
                    buf += dec.decode(value, { stream: true });
                    let nl;
                    while ((nl = buf.indexOf('\n')) >= 0) {
                        const line = buf.slice(0, nl).trim();
                        buf = buf.slice(nl + 1);
                        if (line)
                            this.event(JSON.parse(line));
                    }
                    if (buf.length > (32 << 20))
                        throw new Error(`${this.name}: watch event too long`);
                }
            } finally {
                reader.cancel().catch(() => {});
            }
        }

        event(ev) {
            const o = ev.object || {};
            if (ev.type === 'ERROR') {
                if (o.code === 410)
                    throw { gone: true };
                throw new Error(`${this.name}: ${o.message || 'watch error'}`);
            }
            if (o.metadata && o.metadata.resourceVersion)
                this.rv = o.metadata.resourceVersion;
            if (ev.type === 'BOOKMARK')
                return;
            if (ev.type === 'DELETED')
                this.map.delete(keyOf(o));
            else
                this.map.set(keyOf(o), slim(o));
            changed();
        }
    }

    /* --- GPU metrics through the node proxy ----------------------------------------- */

    const metrics = new Map(); /* node -> { at, gpus: Map(index -> sample) } */
    let proxy = 'unknown';     /* 'unknown' | 'ok' | 'missing' */
    let proxyTried = 0;

    const LINE = /^([A-Za-z_:][A-Za-z0-9_:]*)(?:\{(.*)\})?[ \t]+(\S+)/;
    const LABEL = /([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
    const FIELDS = {
        DCGM_FI_DEV_GPU_UTIL: 'util',
        DCGM_FI_DEV_FB_USED: 'fbUsed',
        DCGM_FI_DEV_FB_FREE: 'fbFree',
        DCGM_FI_DEV_GPU_TEMP: 'temp',
        DCGM_FI_DEV_POWER_USAGE: 'power',
        DCGM_FI_DEV_XID_ERRORS: 'xid',
    };

    /* The DCGM exporter's text: one sample per GPU per field. */
    function parseDcgm(text) {
        const gpus = new Map();
        for (const raw of text.split('\n')) {
            if (!raw.startsWith('DCGM_FI_DEV_'))
                continue;
            const m = LINE.exec(raw);
            if (!m || !(m[1] in FIELDS))
                continue;
            const labels = {};
            for (const l of (m[2] || '').matchAll(LABEL))
                labels[l[1]] = l[2].replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
            if (labels.gpu === undefined)
                continue;
            const g = gpus.get(labels.gpu) || { uuid: labels.UUID, model: labels.modelName, pod: labels.pod, namespace: labels.namespace };
            g[FIELDS[m[1]]] = parseFloat(m[3]);
            gpus.set(labels.gpu, g);
        }
        return gpus;
    }

    async function pollNode(name) {
        let res;
        try {
            res = await api(`/api/v1/nodes/${encodeURIComponent(name)}/proxy/metrics`, { text: true });
        } catch (e) {
            metrics.delete(name);
            return;
        }
        if (res.status === 404) {
            await res.body?.cancel().catch(() => {});
            /* No such route (an API server without the node proxy) unless the
             * node itself vanished; either way, no numbers for it. */
            if (store.nodes.has(name) && proxy !== 'ok')
                proxy = 'missing';
            metrics.delete(name);
            return;
        }
        if (!res.ok) {
            await res.body?.cancel().catch(() => {});
            metrics.delete(name);
            return;
        }
        const text = await res.text();
        proxy = 'ok';
        metrics.set(name, { at: Date.now(), gpus: parseDcgm(text.length > MAX_METRICS ? text.slice(0, MAX_METRICS) : text) });
    }

    async function pollMetrics() {
        const names = [...store.nodes.values()].filter(isReady).map((n) => n.metadata.name);
        /* Without the proxy route, one probe a minute. */
        if (!names.length || (proxy === 'missing' && Date.now() - proxyTried < 60000))
            return;
        proxyTried = Date.now();
        /* Two at a time: the browser keeps six connections per origin and the
         * watches hold four. */
        let next = 0;
        const worker = async () => {
            while (next < names.length && proxy !== 'missing')
                await pollNode(names[next++]);
        };
        await Promise.all([worker(), worker()]);
        for (const name of [...metrics.keys()])
            if (!store.nodes.has(name))
                metrics.delete(name);
    }

    /* --- accounting ------------------------------------------------------------------------- */

    let usage = { state: 'unknown', items: [] }; /* 'unknown' | 'ok' | 'missing' */

    async function pollUsage() {
        try {
            /* Discovery first, so that a server without accounting gets no
             * request that fails. */
            const groups = await getJSON('/apis');
            let served = (groups.groups || []).some((g) => g.name === 'corral.dev' && (g.versions || []).some((v) => v.version === 'v1'));
            if (served)
                served = ((await getJSON('/apis/corral.dev/v1')).resources || []).some((r) => r.name === 'usagerecords');
            if (!served) {
                usage = { state: 'missing', items: [] };
                return;
            }
            const list = await getJSON('/apis/corral.dev/v1/usagerecords');
            usage = { state: 'ok', items: (list.items || []).map(slim) };
        } catch (e) {
            if (!(e instanceof HttpError))
                usage.state = usage.state === 'ok' ? 'ok' : 'missing';
        }
        changed();
    }

    /* --- the model the views draw --------------------------------------------------------- */

    function isReady(n) {
        const c = cond(n, 'Ready');
        return !!c && c.status === 'True';
    }

    function gpuCount(n) {
        const s = n.status || {};
        const v = parseQty((s.capacity || {})[GPU] ?? (s.allocatable || {})[GPU] ?? (n.metadata.labels || {})['nvidia.com/gpu.count']);
        return Number.isFinite(v) ? Math.max(0, Math.min(1024, Math.floor(v))) : 0;
    }

    function podGpus(p) {
        let n = 0;
        for (const c of (p.spec && p.spec.containers) || []) {
            const r = c.resources || {};
            const v = parseQty((r.limits || {})[GPU] ?? (r.requests || {})[GPU]);
            if (Number.isFinite(v))
                n += v;
        }
        return n;
    }

    const finished = (p) => p.status && (p.status.phase === 'Succeeded' || p.status.phase === 'Failed');

    function podGroupOf(p) {
        const g = ann(p, 'scheduling.k8s.io/group-name');
        return g ? store.podgroups.get(`${p.metadata.namespace}/${g}`) : undefined;
    }

    function queueOf(p) {
        const pg = podGroupOf(p);
        return (pg && pg.spec && pg.spec.queue) || (p.metadata.labels || {})['volcano.sh/queue-name'] || '';
    }

    /* Per node: GPU index -> holding pod, from pods' corral.dev/gpu-ids. */
    function allocations() {
        const byNode = new Map();
        for (const p of store.pods.values()) {
            const node = p.spec && p.spec.nodeName;
            const ids = ann(p, 'corral.dev/gpu-ids');
            if (!node || !ids || finished(p))
                continue;
            if (!byNode.has(node))
                byNode.set(node, new Map());
            for (const id of ids.split(',')) {
                const i = id.trim();
                if (i !== '')
                    byNode.get(node).set(i, p);
            }
        }
        return byNode;
    }

    function model() {
        const nodes = [...store.nodes.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name, undefined, { numeric: true }));
        const alloc = allocations();
        let total = 0, allocated = 0, utilAll = 0, utilAlloc = 0, measuredAlloc = 0, measuredAll = 0;
        const rows = nodes.map((n) => {
            const name = n.metadata.name;
            const count = gpuCount(n);
            const held = alloc.get(name) || new Map();
            const m = metrics.get(name);
            const health = cond(n, 'GPUHealthy');
            const unhealthyMsg = health && health.status === 'False' ? `${health.reason || 'GPU unhealthy'}: ${health.message || ''}` : '';
            const gpus = [];
            for (let i = 0; i < count; i++) {
                const pod = held.get(String(i));
                const s = m && m.gpus.get(String(i));
                const util = s && Number.isFinite(s.util) ? s.util : undefined;
                const bad = !!unhealthyMsg && (new RegExp(`\\bGPU[ -]?${i}\\b`).test(health.message || '') || (s && s.uuid && (health.message || '').includes(s.uuid)));
                total++;
                if (pod)
                    allocated++;
                if (util !== undefined) {
                    measuredAll++;
                    utilAll += util;
                    if (pod) {
                        measuredAlloc++;
                        utilAlloc += util;
                    }
                }
                gpus.push({ index: i, pod, sample: s, util, bad });
            }
            return { node: n, name, ready: isReady(n), count, gpus, unhealthyMsg, measured: !!m };
        });
        return {
            rows, total, allocated,
            utilAllocMean: measuredAlloc ? utilAlloc / measuredAlloc : undefined,
            utilCluster: measuredAll && measuredAll === total ? utilAll / total : (measuredAll ? utilAll / measuredAll : undefined),
        };
    }

    /* --- rendering ------------------------------------------------------------------------- */

    let renderTimer = 0;
    function changed() {
        if (!renderTimer)
            renderTimer = setTimeout(() => {
                renderTimer = 0;
                render();
            }, 120);
    }

    function setLive(state, text) {
        $('live').dataset.state = state;
        $('live-text').textContent = text;
    }

    function render() {
        if (!signedIn)
            return;
        const m = model();
        const ok = watches.filter((w) => w.ok || w.missing).length;
        if (ok === watches.length)
            setLive('live', 'live');
        else
            setLive('stale', `reconnecting (${watches.length - ok} of ${watches.length} streams)`);
        renderStats(m);
        renderGrid(m);
        renderTopology();
        renderChart();
        renderQueues(m);
        renderJobs();
        renderPods();
        renderUsage();
        document.body.dataset.ready = watches.every((w) => w.ok || w.missing) ? '1' : '0';
    }

    function renderStats(m) {
        const nodes = m.rows.length;
        const ready = m.rows.filter((r) => r.ready).length;
        $('stat-nodes').textContent = `${ready} / ${nodes}`;
        const bad = m.rows.filter((r) => r.unhealthyMsg).length;
        $('stat-nodes-hint').textContent = bad ? `${bad} with unhealthy GPUs` : (nodes ? 'all GPUs healthy' : 'no nodes');
        $('stat-nodes-hint').className = bad ? 'hint bad' : 'hint';
        $('stat-gpus').textContent = `${m.allocated} / ${m.total}`;
        $('stat-gpus-bar').style.width = `${m.total ? (100 * m.allocated) / m.total : 0}%`;
        $('stat-util').textContent = pct(m.utilAllocMean);
        $('stat-util-hint').textContent = proxy === 'missing' ? 'no node metrics (proxy not served)'
            : (m.utilCluster !== undefined ? `${pct(m.utilCluster)} of the whole cluster` : 'waiting for metrics');
        let running = 0, pending = 0, runningGpus = 0, pendingGpus = 0;
        for (const p of store.pods.values()) {
            const ph = p.status && p.status.phase;
            if (ph === 'Running') {
                running++;
                runningGpus += podGpus(p);
            } else if (ph === 'Pending' || !ph) {
                pending++;
                pendingGpus += podGpus(p);
            }
        }
        $('stat-running').textContent = String(running);
        $('stat-running-hint').textContent = `${num(runningGpus)} GPUs`;
        $('stat-pending').textContent = String(pending);
        $('stat-pending-hint').textContent = pending ? `${num(pendingGpus)} GPUs waiting` : 'nothing waiting';
        $('stat-pending').className = pending ? 'value warn' : 'value';
    }

    /* Allocated GPUs: teal, brighter with utilization; unknown utilization: slate blue. */
    function utilColor(u) {
        if (u === undefined)
            return '#3b5b8c';
        const t = Math.max(0, Math.min(100, u)) / 100;
        const lerp = (a, b) => Math.round(a + (b - a) * t);
        return `rgb(${lerp(38, 32)},${lerp(66, 190)},${lerp(74, 160)})`;
    }

    function gpuTip(row, g) {
        const lines = [`GPU ${g.index} · ${row.name}`];
        const s = g.sample;
        if (s && s.uuid)
            lines.push(s.uuid);
        if (g.pod) {
            const q = queueOf(g.pod);
            lines.push(`pod ${nsName(g.pod)}${q ? ` (queue ${q})` : ''}`);
        } else {
            lines.push('free');
        }
        if (s) {
            const parts = [];
            if (Number.isFinite(s.util))
                parts.push(`util ${pct(s.util)}`);
            if (Number.isFinite(s.fbUsed))
                parts.push(`mem ${(s.fbUsed / 1024).toFixed(1)}${Number.isFinite(s.fbFree) ? `/${((s.fbUsed + s.fbFree) / 1024).toFixed(0)}` : ''} GiB`);
            if (Number.isFinite(s.temp))
                parts.push(`${Math.round(s.temp)} °C`);
            if (Number.isFinite(s.power))
                parts.push(`${Math.round(s.power)} W`);
            if (parts.length)
                lines.push(parts.join(' · '));
        }
        if (g.bad)
            lines.push(row.unhealthyMsg);
        return lines;
    }

    function renderGrid(m) {
        const grid = $('gpu-grid');
        grid.dataset.nodes = String(m.rows.length);
        grid.dataset.gpus = String(m.total);
        grid.dataset.allocated = String(m.allocated);
        grid.dataset.metrics = proxy;
        /* Many nodes: one line each, no pod names (they stay on hover). */
        grid.classList.toggle('compact', m.rows.length > 12);
        const rows = m.rows.map((r) => {
            const held = r.gpus.filter((g) => g.pod).length;
            const product = ((r.node.metadata.labels || {})['nvidia.com/gpu.product'] || '').replace(/^NVIDIA-/, '').replace(/-/g, ' ');
            const head = h('div', { class: 'node-head' },
                h('button', { type: 'button', class: 'node-name', text: r.name, title: 'show topology', 'data-topo': r.name }),
                h('span', { class: `badge ${r.ready ? 'ok' : 'bad'}`, text: r.ready ? 'Ready' : 'NotReady' }),
                r.unhealthyMsg ? h('span', { class: 'badge bad', text: 'GPU unhealthy', tip: [r.unhealthyMsg] }) : null,
                h('span', { class: 'muted small', text: product }),
                h('span', { class: 'node-count small', text: `${held}/${r.count} allocated` }));
            const cells = r.gpus.map((g) => {
                const state = g.bad ? 'unhealthy' : g.pod ? 'allocated' : 'free';
                const cell = h('div', {
                    class: `gpu ${state}`,
                    'data-node': r.name,
                    'data-gpu': g.index,
                    'data-state': state,
                    'data-pod': g.pod ? nsName(g.pod) : '',
                    'data-util': g.util !== undefined ? Math.round(g.util) : '',
                    tip: gpuTip(r, g),
                },
                h('span', { class: 'gpu-idx', text: g.index }),
                h('span', { class: 'gpu-util', text: g.pod ? (g.util !== undefined ? pct(g.util) : 'busy') : (g.util > 0 ? pct(g.util) : 'idle') }),
                h('span', { class: 'gpu-pod', text: g.pod ? g.pod.metadata.name : '' }),
                h('i', { class: 'gpu-meter', 'height%': g.util !== undefined ? g.util : 0 }));
                if (g.pod)
                    cell.style.background = utilColor(g.util);
                return cell;
            });
            const gpus = h('div', { class: 'gpus' }, cells);
            gpus.style.gridTemplateColumns = `repeat(${Math.max(1, Math.min(r.count, 16))}, minmax(0, 1fr))`;
            return h('div', { class: 'node-row', 'data-node': r.name }, head, gpus);
        });
        if (!rows.length)
            rows.push(h('p', { class: 'empty', text: 'No nodes have registered.' }));
        grid.replaceChildren(...rows);
        replace('grid-legend',
            legendSwatch('free', 'swatch free'),
            legendSwatch('allocated, 0% → 100% util', 'swatch ramp'),
            proxy === 'missing' ? legendSwatch('allocated (no metrics)', 'swatch nometrics') : null,
            legendSwatch('unhealthy', 'swatch unhealthy'));
        const note = $('metrics-note');
        note.hidden = proxy !== 'missing';
        note.textContent = 'Utilization is not shown: this API server does not proxy node metrics (/api/v1/nodes/NAME/proxy/metrics). Allocation comes from the pods.';
    }

    function legendSwatch(text, cls) {
        return h('span', { class: 'legend-item' }, h('i', { class: cls }), text);
    }

    /* --- NVLink topology ------------------------------------------------------------------ */

    let topoNode = '';

    function linkClass(v) {
        if (v === 'X')
            return ['self', '#1b222c'];
        const nv = /^NV(\d+)$/.exec(v);
        if (nv) {
            const k = Math.min(18, parseInt(nv[1], 10)) / 18;
            return ['nvlink', `rgb(${Math.round(30 + 10 * k)},${Math.round(110 + 80 * k)},${Math.round(100 + 60 * k)})`];
        }
        return {
            PIX: ['pcie', '#3d5a80'], PXB: ['pcie', '#34506f'], PHB: ['pcie', '#2f4560'],
            NODE: ['cpu', '#5a4a2a'], SYS: ['cpu', '#5e3535'],
        }[v] || ['other', '#2a313c'];
    }

    function renderTopology() {
        const sel = $('topo-node');
        const names = [...store.nodes.keys()].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
        if (!names.includes(topoNode))
            topoNode = names[0] || '';
        if (sel.options.length !== names.length || [...sel.options].some((o, i) => o.value !== names[i]))
            sel.replaceChildren(...names.map((n) => h('option', { value: n, text: n })));
        sel.value = topoNode;
        const node = store.nodes.get(topoNode);
        const text = node ? ann(node, 'corral.dev/gpu-topology') : '';
        if (!text) {
            replace('topo', h('p', { class: 'empty', text: node ? 'This node publishes no GPU topology.' : 'No nodes.' }));
            replace('topo-legend');
            return;
        }
        const rows = text.split(';').slice(0, 64).map((r) => r.split(',').slice(0, 64).map((c) => c.trim()));
        const n = rows.length;
        const cell = n <= 8 ? 30 : n <= 16 ? 18 : 9;
        const pad = 22;
        const size = pad + n * cell;
        const g = svg('svg', { viewBox: `0 0 ${size} ${size}`, width: size, height: size, class: 'topo', role: 'img', 'aria-label': `GPU topology of ${topoNode}`, 'data-node': topoNode, 'data-gpus': n });
        const counts = new Map();
        for (let i = 0; i < n; i++) {
            g.append(svg('text', { x: pad + i * cell + cell / 2, y: 14, class: 'axis', 'text-anchor': 'middle', text: i }));
            g.append(svg('text', { x: 14, y: pad + i * cell + cell / 2 + 4, class: 'axis', 'text-anchor': 'middle', text: i }));
            for (let j = 0; j < n; j++) {
                const v = (rows[i] && rows[i][j]) || '?';
                const [cls, color] = linkClass(v);
                if (j > i)
                    counts.set(v, (counts.get(v) || 0) + 1);
                const rect = svg('rect', { x: pad + j * cell + 1, y: pad + i * cell + 1, width: cell - 2, height: cell - 2, rx: 3, fill: color, class: `link ${cls}`, tip: [`GPU ${i} ↔ GPU ${j}`, v === 'X' ? 'itself' : v] });
                g.append(rect);
                if (cell >= 18 && v !== 'X')
                    g.append(svg('text', { x: pad + j * cell + cell / 2, y: pad + i * cell + cell / 2 + 3.5, class: 'cell-label', 'text-anchor': 'middle', text: v.replace(/^NV/, cell >= 30 ? 'NV' : '') }));
            }
        }
        replace('topo', g);
        const summary = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([v, c]) => {
            const [cls, color] = linkClass(v);
            const sw = h('i', { class: `swatch ${cls}` });
            sw.style.background = color;
            return h('span', { class: 'legend-item' }, sw, `${v} × ${c} pairs`);
        });
        replace('topo-legend', summary, h('span', { class: 'legend-item muted', text: 'NV#: NVLink lanes · PIX/PXB/PHB: PCIe · NODE/SYS: through the CPU' }));
    }

    /* --- cluster history chart ------------------------------------------------------------- */

    const samples = [];

    function sample(m) {
        samples.push({
            t: Date.now(),
            alloc: m.total ? (100 * m.allocated) / m.total : 0,
            util: m.utilCluster,
        });
        if (samples.length > HISTORY_MAX)
            samples.splice(0, samples.length - HISTORY_MAX);
    }

    function renderChart() {
        const box = $('chart');
        const W = Math.max(320, box.clientWidth || 600), H = 220;
        const L = 38, R = 12, T = 10, B = 24;
        const chart = svg('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': 'cluster GPU allocation and utilization over time', 'data-samples': samples.length });
        for (const y of [0, 25, 50, 75, 100]) {
            const py = T + (H - T - B) * (1 - y / 100);
            chart.append(svg('line', { x1: L, x2: W - R, y1: py, y2: py, class: y ? 'grid' : 'axis-line' }));
            chart.append(svg('text', { x: L - 6, y: py + 4, class: 'axis', 'text-anchor': 'end', text: `${y}%` }));
        }
        if (samples.length >= 2) {
            const t0 = samples[0].t, t1 = samples[samples.length - 1].t;
            const span = Math.max(1, t1 - t0);
            const px = (t) => L + ((W - L - R) * (t - t0)) / span;
            const py = (v) => T + (H - T - B) * (1 - Math.max(0, Math.min(100, v)) / 100);
            const path = (key) => {
                let d = '', pen = false;
                for (const s of samples) {
                    const v = s[key];
                    if (v === undefined) {
                        pen = false;
                        continue;
                    }
                    d += `${pen ? 'L' : 'M'}${px(s.t).toFixed(1)},${py(v).toFixed(1)}`;
                    pen = true;
                }
                return d;
            };
            const area = `M${px(t0).toFixed(1)},${py(0)}${samples.map((s) => `L${px(s.t).toFixed(1)},${py(s.alloc).toFixed(1)}`).join('')}L${px(t1).toFixed(1)},${py(0)}Z`;
            chart.append(svg('path', { d: area, class: 'area-alloc' }));
            chart.append(svg('path', { d: path('alloc'), class: 'line-alloc' }));
            const u = path('util');
            if (u)
                chart.append(svg('path', { d: u, class: 'line-util' }));
            const ticks = 5;
            for (let i = 0; i <= ticks; i++) {
                const t = t0 + (span * i) / ticks;
                const ago = (t1 - t) / 1000;
                chart.append(svg('text', { x: px(t), y: H - 6, class: 'axis', 'text-anchor': i === 0 ? 'start' : i === ticks ? 'end' : 'middle', text: ago < 1 ? 'now' : `-${dur(ago)}` }));
            }
        } else {
            chart.append(svg('text', { x: W / 2, y: H / 2, class: 'axis', 'text-anchor': 'middle', text: 'collecting samples…' }));
        }
        box.replaceChildren(chart);
        const last = samples[samples.length - 1];
        replace('chart-legend',
            h('span', { class: 'legend-item' }, h('i', { class: 'swatch line-alloc' }), `allocated ${last ? pct(last.alloc) : '–'}`),
            h('span', { class: 'legend-item' }, h('i', { class: 'swatch line-util' }), `utilized ${last ? pct(last.util) : '–'}`),
            h('span', { class: 'legend-item muted', text: 'since this page opened' }));
    }

    /* --- queues ----------------------------------------------------------------------------- */

    function renderQueues(m) {
        const qs = [...store.queues.values()].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
        if (!qs.length) {
            replace('queues', h('p', { class: 'empty', text: watches.find((w) => w.name === 'queues')?.missing ? 'Queues are not served.' : 'No queues.' }));
            return;
        }
        const open = qs.filter((q) => !q.status || q.status.state !== 'Closed');
        const wsum = open.reduce((s, q) => s + (q.spec && q.spec.weight > 0 ? q.spec.weight : 1), 0) || 1;
        const vals = qs.map((q) => {
            const spec = q.spec || {}, st = q.status || {};
            const allocated = parseQty((st.allocated || {})[GPU]) || 0;
            const deserved = parseQty((spec.deserved || {})[GPU]);
            const cap = parseQty((spec.capability || {})[GPU]);
            const weight = spec.weight > 0 ? spec.weight : 1;
            const share = (m.total * weight) / wsum;
            return { q, allocated, deserved, cap, share, weight };
        });
        const scale = Math.max(1, m.total, ...vals.map((v) => Math.max(v.allocated, v.deserved || 0, Number.isFinite(v.cap) ? v.cap : 0)));
        const head = h('tr', {}, ['queue', 'weight', 'GPUs', '', 'jobs waiting', 'running', 'state'].map((t) => h('th', { text: t })));
        const body = vals.map((v) => {
            const st = v.q.status || {};
            const des = Number.isFinite(v.deserved) ? v.deserved : v.share;
            const over = Number.isFinite(des) && v.allocated > des + 1e-9;
            const bar = h('div', { class: 'qbar', tip: [
                `allocated ${num(v.allocated)} GPUs`,
                Number.isFinite(v.deserved) ? `deserved ${num(v.deserved)}` : `deserved (by weight) ≈ ${num(v.share)}`,
                Number.isFinite(v.cap) ? `capability ${num(v.cap)}` : 'capability: unlimited',
            ] },
            Number.isFinite(v.cap) ? h('i', { class: 'qcap', 'width%': (100 * v.cap) / scale }) : h('i', { class: 'qcap open', 'width%': 100 }),
            h('i', { class: `qalloc${over ? ' over' : ''}`, 'width%': (100 * v.allocated) / scale }),
            Number.isFinite(des) ? h('i', { class: `qdes${Number.isFinite(v.deserved) ? '' : ' est'}`, 'left%': (100 * des) / scale }) : null);
            const nums = `${num(v.allocated)} / ${Number.isFinite(v.deserved) ? num(v.deserved) : `~${num(v.share)}`} / ${Number.isFinite(v.cap) ? num(v.cap) : '∞'}`;
            return h('tr', { 'data-queue': v.q.metadata.name, 'data-allocated': v.allocated },
                h('td', { class: 'mono', text: v.q.metadata.name }),
                h('td', { class: 'num', text: v.weight }),
                h('td', { class: 'qcell' }, bar),
                h('td', { class: 'num mono small', text: nums }),
                h('td', { class: 'num', text: (st.pending ?? 0) + (st.inqueue ?? 0) }),
                h('td', { class: 'num', text: st.running ?? 0 }),
                h('td', {}, h('span', { class: `badge ${st.state === 'Open' || !st.state ? 'ok' : 'warn'}`, text: st.state || 'Open' })));
        });
        replace('queues', h('table', { class: 'tbl' }, h('thead', {}, head), h('tbody', {}, body)),
            h('div', { class: 'legend' },
                h('span', { class: 'legend-item' }, h('i', { class: 'swatch qalloc' }), 'allocated'),
                h('span', { class: 'legend-item' }, h('i', { class: 'swatch qdes' }), 'deserved (dashed: by weight)'),
                h('span', { class: 'legend-item' }, h('i', { class: 'swatch qcap' }), 'capability')));
    }

    /* --- jobs (PodGroups) and pods ---------------------------------------------------------- */

    const PHASE_ORDER = { Pending: 0, Inqueue: 1, Unknown: 2, Running: 3, Completed: 4, Succeeded: 5, Failed: 6 };

    function phaseBadge(ph) {
        const cls = { Running: 'ok', Succeeded: 'done', Completed: 'done', Pending: 'warn', Inqueue: 'info', Failed: 'bad', Unknown: 'bad' }[ph] || 'info';
        return h('span', { class: `badge ${cls}`, text: ph || 'Pending' });
    }

    function table(cols, rows, empty) {
        if (!rows.length)
            return h('p', { class: 'empty', text: empty });
        return h('table', { class: 'tbl' }, h('thead', {}, h('tr', {}, cols.map((c) => h('th', { text: c })))), h('tbody', {}, rows));
    }

    function renderJobs() {
        const pgs = [...store.podgroups.values()].sort((a, b) =>
            (PHASE_ORDER[a.status?.phase] ?? 9) - (PHASE_ORDER[b.status?.phase] ?? 9) ||
            (b.metadata.creationTimestamp || '').localeCompare(a.metadata.creationTimestamp || ''));
        const rows = pgs.slice(0, MAX_ROWS).map((pg) => {
            const st = pg.status || {};
            const c = (st.conditions || []).find((x) => x.type === 'Unschedulable' && x.status === 'True');
            const why = c ? (c.message || c.reason || '') : '';
            return h('tr', { 'data-podgroup': nsName(pg), 'data-phase': st.phase || '' },
                h('td', { class: 'mono', text: nsName(pg) }),
                h('td', { text: (pg.spec && pg.spec.queue) || 'default' }),
                h('td', {}, phaseBadge(st.phase)),
                h('td', { class: 'num', text: `${st.running ?? 0}/${(pg.spec && pg.spec.minMember) ?? 1}` }),
                h('td', { class: 'num', text: age(pg.metadata.creationTimestamp) }),
                h('td', { class: 'reason', text: why, title: why }));
        });
        $('jobs-count').textContent = countText(pgs.length, rows.length, pgs.filter((p) => (p.status?.phase || 'Pending') === 'Pending').length);
        replace('jobs', table(['job (PodGroup)', 'queue', 'phase', 'running/min', 'age', 'why waiting'], rows,
            watches.find((w) => w.name === 'podgroups')?.missing ? 'PodGroups are not served.' : 'No jobs.'));
    }

    function countText(all, shown, pending) {
        return `${all} total${pending ? `, ${pending} pending` : ''}${shown < all ? ` (showing ${shown})` : ''}`;
    }

    function renderPods() {
        const pods = [...store.pods.values()].sort((a, b) =>
            (PHASE_ORDER[a.status?.phase || 'Pending'] ?? 9) - (PHASE_ORDER[b.status?.phase || 'Pending'] ?? 9) ||
            (a.metadata.creationTimestamp || '').localeCompare(b.metadata.creationTimestamp || ''));
        const rows = pods.slice(0, MAX_ROWS).map((p) => {
            const ph = p.status?.phase || 'Pending';
            const sc = cond(p, 'PodScheduled');
            let why = '';
            if (ph === 'Pending' && sc && sc.status === 'False')
                why = sc.message || sc.reason || '';
            else if (ph === 'Pending' && !p.spec?.nodeName)
                why = 'not scheduled yet';
            else if (ph === 'Failed')
                why = p.status?.message || p.status?.reason || '';
            const gpus = podGpus(p);
            const ids = ann(p, 'corral.dev/gpu-ids');
            return h('tr', { 'data-pod': nsName(p), 'data-phase': ph },
                h('td', { class: 'mono', text: nsName(p) }),
                h('td', {}, phaseBadge(ph)),
                h('td', { text: p.spec?.nodeName || '' }),
                h('td', { class: 'num', text: gpus ? `${num(gpus)}${ids ? ` [${ids}]` : ''}` : '' }),
                h('td', { text: queueOf(p) }),
                h('td', { class: 'num', text: age(p.metadata.creationTimestamp) }),
                h('td', { class: 'reason', text: why, title: why }));
        });
        $('pods-count').textContent = countText(pods.length, rows.length, pods.filter((p) => (p.status?.phase || 'Pending') === 'Pending').length);
        replace('pods', table(['pod', 'phase', 'node', 'GPUs', 'queue', 'age', 'why waiting'], rows, 'No pods.'));
    }

    /* --- accounting --------------------------------------------------------------------------- */

    /* UsageRecords (src/model/usage.c): one finished pod each, newest first,
     * with totals of GPU time allocated and used. */
    function renderUsage() {
        if (usage.state !== 'ok') {
            $('usage-count').textContent = '';
            replace('usage', h('p', { class: 'empty', text: usage.state === 'missing' ? 'Accounting is not served by this API server (no corral.dev/v1 usagerecords).' : 'Loading…' }));
            return;
        }
        const when = (o) => (o.spec && (o.spec.finishedAt || o.spec.startedAt)) || o.metadata.creationTimestamp || '';
        const items = [...usage.items].sort((a, b) => when(b).localeCompare(when(a)));
        const n = (v) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
        /* Use unknown (the agent wrote none) is left out, not counted as 0:
         * efficiency only over records that know it. */
        let alloc = 0, used = 0, allocKnown = 0;
        for (const o of items) {
            const a = n(o.spec?.gpuSecondsAllocated) || 0;
            const u = n(o.spec?.gpuSecondsUsed);
            alloc += a;
            if (u !== undefined) {
                used += u;
                allocKnown += a;
            }
        }
        const gpuh = (v) => (v === undefined ? '' : v === 0 ? '0' : v < 3600 ? (v / 3600).toPrecision(2) : (v / 3600).toFixed(1));
        const eff = (u, a) => (u !== undefined && a ? pct((100 * u) / a) : '');
        const rows = items.slice(0, MAX_ROWS).map((o) => {
            const sp = o.spec || {};
            const ga = n(sp.gpuSecondsAllocated), gu = n(sp.gpuSecondsUsed);
            const exit = n(sp.exitCode);
            return h('tr', { 'data-usage': nsName(o), 'data-pod': `${o.metadata.namespace}/${sp.pod || ''}` },
                h('td', { class: 'num', text: sp.finishedAt ? `${age(sp.finishedAt)} ago` : '' }),
                h('td', { class: 'mono', text: `${o.metadata.namespace || ''}/${sp.pod || o.metadata.name}` }),
                h('td', { text: sp.job || '' }),
                h('td', { text: sp.queue || '' }),
                h('td', { text: sp.node || '' }),
                h('td', { class: 'num', text: n(sp.gpus) !== undefined ? `${sp.gpus}${sp.gpuModel ? ` × ${String(sp.gpuModel).replace(/^NVIDIA-/, '')}` : ''}` : '' }),
                h('td', { class: 'num', text: dur(n(sp.waitSeconds)) }),
                h('td', { class: 'num', text: dur(n(sp.runSeconds)) }),
                h('td', { class: 'num', text: gpuh(ga) }),
                h('td', { class: 'num', text: gpuh(gu) }),
                h('td', { class: 'num', text: eff(gu, ga) }),
                h('td', {}, sp.phase ? phaseBadge(sp.phase) : null, exit !== undefined && exit !== 0 ? h('span', { class: 'muted small', text: ` exit ${exit}` }) : null));
        });
        if (rows.length)
            rows.push(h('tr', { class: 'total' }, h('td', { text: 'total' }), h('td', { text: `${items.length} pods` }),
                ['', '', '', '', '', ''].map((t) => h('td', { text: t })),
                h('td', { class: 'num', text: gpuh(alloc) }), h('td', { class: 'num', text: gpuh(used) }),
                h('td', { class: 'num', text: eff(used, allocKnown) }), h('td', {})));
        $('usage-count').textContent = items.length ? `${countText(items.length, Math.min(items.length, MAX_ROWS), 0)} · ${gpuh(alloc)} GPU-h allocated, ${gpuh(used)} used` : '';
        replace('usage', table(['finished', 'pod', 'job', 'queue', 'node', 'GPUs', 'waited', 'ran', 'GPU-h alloc', 'GPU-h used', 'used', 'status'], rows, 'No finished pods recorded yet.'));
    }

    /* --- tooltip --------------------------------------------------------------------------------- */

    function initTip() {
        const tip = $('tip');
        document.addEventListener('mouseover', (e) => {
            let el = e.target;
            while (el && el !== document && !tips.has(el))
                el = el.parentNode;
            if (!el || el === document) {
                tip.hidden = true;
                return;
            }
            tip.replaceChildren(...tips.get(el).map((l, i) => h('div', { class: i ? '' : 'tip-head', text: l })));
            tip.hidden = false;
        });
        document.addEventListener('mousemove', (e) => {
            if (tip.hidden)
                return;
            const x = Math.min(e.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
            const y = e.clientY + 16 + tip.offsetHeight > window.innerHeight ? e.clientY - tip.offsetHeight - 10 : e.clientY + 16;
            tip.style.left = `${x}px`;
            tip.style.top = `${y}px`;
        });
    }

    /* --- start ------------------------------------------------------------------------------------ */

    async function tick() {
        for (;;) {
            if (signedIn) {
                await pollMetrics().catch(() => {});
                /* From the first complete lists on: no false zero at the start. */
                if (watches.every((w) => w.ok || w.missing))
                    sample(model());
                changed();
            }
            await sleep(POLL_MS);
        }
    }

    async function usageLoop() {
        for (;;) {
            if (signedIn)
                await pollUsage();
            await sleep(USAGE_MS);
        }
    }

    async function whoami() {
        try {
            const res = await api('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
                method: 'POST',
                body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
            });
            if (!res.ok) {
                await res.body?.cancel().catch(() => {});
                return;
            }
            const r = await res.json();
            $('whoami').textContent = r.status?.userInfo?.username || '';
        } catch (e) { /* shown without a name */ }
    }

    async function start() {
        signedIn = true;
        $('login').hidden = true;
        $('main').hidden = false;
        $('signout').hidden = false;
        setLive('stale', 'connecting');
        whoami();
        watches.push(new Watch('nodes', '/api/v1/nodes', store.nodes),
            new Watch('pods', '/api/v1/pods', store.pods),
            new Watch('queues', '/apis/scheduling.volcano.sh/v1beta1/queues', store.queues),
            new Watch('podgroups', '/apis/scheduling.volcano.sh/v1beta1/podgroups', store.podgroups));
        for (const w of watches)
            w.run();
        tick();
        usageLoop();
    }

    async function tryToken(t) {
        token = t;
        const res = await fetch('/api/v1/nodes?limit=1', { headers: { Authorization: `Bearer ${t}`, Accept: 'application/json' }, cache: 'no-store', credentials: 'omit' });
        await res.body?.cancel().catch(() => {});
        return res.status !== 401;
    }

    function init() {
        initTip();
        takeFragmentToken();
        try {
            token = sessionStorage.getItem(TOKEN_KEY) || token;
        } catch (e) { /* kept in memory only */ }
        $('signout').addEventListener('click', () => signOut(''));
        $('topo-node').addEventListener('change', (e) => {
            topoNode = e.target.value;
            renderTopology();
        });
        $('gpu-grid').addEventListener('click', (e) => {
            const b = e.target.closest('[data-topo]');
            if (b) {
                topoNode = b.dataset.topo;
                renderTopology();
            }
        });
        window.addEventListener('resize', () => changed());
        $('login-form').addEventListener('submit', async (e) => {
            e.preventDefault();
            const t = $('login-token').value.trim();
            if (!t)
                return;
            try {
                if (!(await tryToken(t))) {
                    showLogin('The token was not accepted (401).');
                    return;
                }
            } catch (err) {
                showLogin(`Cannot reach the API server: ${err.message}`);
                return;
            }
            try {
                sessionStorage.setItem(TOKEN_KEY, t);
            } catch (err) { /* this page only */ }
            start();
        });
        if (!token) {
            showLogin('');
            return;
        }
        tryToken(token).then((ok) => {
            if (ok) {
                start();
            } else {
                try {
                    sessionStorage.removeItem(TOKEN_KEY);
                } catch (e) { /* nothing kept */ }
                showLogin('The token was not accepted (401).');
            }
        }, (err) => showLogin(`Cannot reach the API server: ${err.message}`));
    }

    /* For tests (tests/cli/test_ui.sh): the exposition parser. */
    window.corralDashboard = Object.freeze({ parseDcgm: (text) => Object.fromEntries(parseDcgm(String(text))) });

    init();
})();
