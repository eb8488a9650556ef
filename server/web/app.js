// The installer page. Plain JavaScript, no build step, no dependencies.
//
// Rules this file keeps:
//  - Everything that came from a plugin, a marketplace, a source or the
//    daemon goes into the page as text (el(), textContent), never as HTML,
//    and control, escape and bidi characters are shown as visible escapes
//    (visible()), as the terminal does. innerHTML is never used.
//  - Every request that can change something carries the session's CSRF
//    token (X-Reasonix-CSRF); the bearer token never reaches this page.
//  - Install sends exactly the planId on screen.
'use strict';

(() => {
  const $ = (id) => document.getElementById(id);

  const CSRF_HEADER = 'X-Reasonix-CSRF';
  const PROGRESS_HEADER = 'X-Reasonix-Progress';

  const state = {
    csrf: null,
    add: {
      source: '',
      full: null, // the whole marketplace's plan (for the checkboxes), or null
      shown: null, // the plan on screen: what Install applies
      selected: new Set(),
      busy: false,
      result: null,
    },
    installed: { plugins: [], open: new Set(), busy: false },
  };

  // ---- text and elements -------------------------------------------------

  // visible shows control, escape and bidi characters as escapes (\x1b,
  // \u202e), so text cannot hide or reorder itself.
  const INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;
  function visible(s) {
    return String(s).replace(INVISIBLE, (c) => {
      const n = c.charCodeAt(0);
      return n < 0x80 ? '\\x' + n.toString(16).padStart(2, '0') : '\\u' + n.toString(16).padStart(4, '0');
    });
  }

  // el builds an element. props: class, text, on* listeners, booleans and
  // attributes (set with setAttribute, which never parses markup).
  // Children: nodes, or strings that become text nodes.
  function el(tag, props, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = visible(v);
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else if (k === 'hidden') e.hidden = true;
      else if (k === 'checked') e.checked = true;
      else if (k === 'disabled') e.disabled = true;
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const k of kids.flat(Infinity)) {
      if (k === undefined || k === null || k === false) continue;
      e.append(k instanceof Node ? k : document.createTextNode(visible(String(k))));
    }
    return e;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  }

  const plural = (n, one, many) => n + ' ' + (n === 1 ? one : many || one + 's');
  const short = (sha) => (sha ? String(sha).slice(0, 12) : '');

  function human(bytes) {
    const units = ['B', 'KB', 'MB', 'GB'];
    let n = Number(bytes) || 0;
    let i = 0;
    while (n >= 1024 && i < units.length - 1) {
      n /= 1024;
      i++;
    }
    return (i === 0 ? String(n) : n.toFixed(1)) + ' ' + units[i];
  }

  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

  function newID() {
    const b = new Uint8Array(16);
    crypto.getRandomValues(b);
    return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  }

  function notice(id, kind, ...content) {
    const n = $(id);
    clear(n);
    if (!content.length) {
      n.hidden = true;
      return;
    }
    n.className = 'notice ' + kind;
    n.append(...content.map((c) => (c instanceof Node ? c : el('p', { text: c }))));
    n.hidden = false;
  }

  // errorText is "message (code)" for a daemon error body.
  function errorText(body, fallback) {
    if (body && body.error) {
      const msg = String(body.error);
      return msg.charAt(0).toUpperCase() + msg.slice(1) + (body.errorCode ? ' (' + body.errorCode + ')' : '');
    }
    return fallback;
  }

  // ---- the daemon's API ----------------------------------------------------

  class Unauthorized extends Error {}

  // api calls the daemon. It returns {status, body} for every answer and
  // throws only when the daemon is unreachable or the session ended.
  async function api(method, path, body, opts = {}) {
    const headers = {};
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (method !== 'GET' && method !== 'HEAD') headers[CSRF_HEADER] = state.csrf || '';
    if (opts.progress) headers[PROGRESS_HEADER] = opts.progress;
    let res;
    try {
      res = await fetch(path, {
        method, headers, credentials: 'same-origin', cache: 'no-store', redirect: 'error',
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      throw new Error('The daemon did not answer (' + err.message + '). Is reasonix serve still running?');
    }
    if (res.status === 401) {
      signedOut('Your session ended: it expired, or the daemon restarted.');
      throw new Unauthorized('signed out');
    }
    if (opts.raw) return res;
    const text = await res.text();
    let data = null;
    if (text) {
      try {
        data = JSON.parse(text);
      } catch {
        data = { error: 'the daemon answered ' + res.status + ' with something that is not JSON' };
      }
    }
    return { status: res.status, body: data };
  }

  // report shows what went wrong with a request in notice box id.
  function report(id, err) {
    if (err instanceof Unauthorized) return;
    notice(id, 'error', err.message || String(err));
  }

  // ---- sign-in -------------------------------------------------------------

  function signedOut(reason) {
    state.csrf = null;
    $('tabs').hidden = true;
    $('account').hidden = true;
    $('loading').hidden = true;
    for (const s of document.querySelectorAll('.screen')) s.hidden = true;
    $('signin-reason').textContent = visible(reason);
    $('screen-signin').hidden = false;
  }

  async function boot() {
    let res;
    try {
      res = await fetch('/session', { credentials: 'same-origin', cache: 'no-store' });
    } catch (err) {
      signedOut('The daemon did not answer (' + err.message + ').');
      return;
    }
    if (res.status !== 200) {
      signedOut(res.status === 401 ? 'This page is not signed in.' : 'The daemon refused the session check (' + res.status + ').');
      return;
    }
    const s = await res.json();
    state.csrf = s.csrf;
    $('loading').hidden = true;
    $('tabs').hidden = false;
    $('account').hidden = false;
    route();
  }

  async function signOut() {
    try {
      await api('POST', '/logout');
    } catch (err) {
      // The session is gone either way.
    }
    signedOut('You signed out.');
  }

  // ---- screens -------------------------------------------------------------

  // SCREENS lists the screens the tabs lead to. A Marketplaces screen is one
  // more entry ({section: 'screen-marketplaces', show: showMarketplaces})
  // with its tab in index.html.
  const SCREENS = {
    add: { section: 'screen-add', show: showAdd },
    installed: { section: 'screen-installed', show: showInstalled },
  };

  function route() {
    if (!state.csrf) return;
    const want = location.hash.replace(/^#/, '');
    const current = Object.hasOwn(SCREENS, want) ? want : 'add';
    for (const [name, s] of Object.entries(SCREENS)) $(s.section).hidden = name !== current;
    $('screen-signin').hidden = true;
    for (const a of document.querySelectorAll('#tabs a')) {
      if (a.dataset.screen === current) a.setAttribute('aria-current', 'page');
      else a.removeAttribute('aria-current');
    }
    SCREENS[current].show();
  }

  // ---- live progress (server-sent events) ---------------------------------

  const PHASES = {
    waiting: 'Starting', planning: 'Planning', resolving: 'Resolving', resolved: 'Reading manifests',
    installing: 'Installing', applying: 'Applying', done: 'Done',
  };

  function progressLine(p) {
    const parts = [];
    if (p.total > 0) parts.push(p.entries + ' of ' + plural(p.total, 'entry', 'entries') + ' resolved');
    if (p.repos > 0 || p.bytes > 0) parts.push(plural(p.repos, 'repository', 'repositories') + ' fetched (' + human(p.bytes) + ')');
    return parts.join(' · ');
  }

  function showProgress(label, p) {
    const bar = $('add-progress-bar');
    if (p && p.total > 0) {
      bar.max = p.total;
      bar.value = Math.min(p.entries, p.total);
    } else {
      bar.removeAttribute('value');
    }
    const phase = p ? PHASES[p.phase] || p.phase : label;
    const line = p ? progressLine(p) : '';
    $('add-progress-text').textContent = visible(phase + '…' + (line ? ' ' + line : ''));
  }

  // withProgress runs op(progressId) while following its stream. The
  // stream is opened first; one that opens late still gets the latest state.
  // doneLabel names the end by the response's status (default: any other).
  async function withProgress(label, doneLabel, op) {
    const id = newID();
    const box = $('add-progress');
    box.hidden = false;
    box.classList.remove('finished');
    showProgress(label, null);
    let last = null;
    let finish;
    const done = new Promise((r) => (finish = r));
    const es = new EventSource('/events?progress=' + encodeURIComponent(id));
    const onEvent = (ev) => {
      try {
        last = JSON.parse(ev.data);
      } catch {
        return;
      }
      if (ev.type === 'done') {
        es.close();
        finish();
      } else {
        showProgress(label, last);
      }
    };
    es.addEventListener('progress', onEvent);
    es.addEventListener('done', onEvent);
    await Promise.race([new Promise((r) => es.addEventListener('open', r, { once: true })), sleep(500)]);
    const started = performance.now();
    try {
      return await op(id);
    } finally {
      await Promise.race([done, sleep(1500)]);
      es.close();
      const ms = last && last.elapsedMs ? last.elapsedMs : performance.now() - started;
      const took = ms < 1000 ? Math.max(1, Math.round(ms)) + ' ms' : (ms / 1000).toFixed(1) + ' s';
      const line = last ? progressLine(last) : '';
      const bar = $('add-progress-bar');
      if (last && last.total > 0) {
        bar.max = last.total;
        bar.value = last.entries;
      } else {
        bar.max = 1;
        bar.value = 1;
      }
      box.classList.add('finished');
      const label = (last && doneLabel[last.status]) || doneLabel.default;
      $('add-progress-text').textContent = visible(label + ' in ' + took + (line ? ': ' + line : '') + '.');
    }
  }

  // ---- Add: source → plan → install ---------------------------------------

  function showAdd() {
    if (!state.add.shown) $('source').focus();
  }

  const isMarketplace = (r) => !!(r && r.resolved && r.resolved.kind === 'marketplace');
  const readyNames = (r) => (r && r.actions ? r.actions.filter((a) => a.status === 'ready').map((a) => a.name) : []);

  function selectionMatches() {
    const add = state.add;
    if (!add.full) return true;
    const shown = readyNames(add.shown);
    return shown.length === add.selected.size && shown.every((n) => add.selected.has(n));
  }

  function setAddBusy(busy) {
    state.add.busy = busy;
    $('plan-button').disabled = busy;
    $('plan').setAttribute('aria-busy', busy ? 'true' : 'false');
    for (const b of document.querySelectorAll('#plan button, #plan input')) b.disabled = busy || b.dataset.off === 'true';
  }

  async function planSource(source, names) {
    const add = state.add;
    if (add.busy) return;
    notice('add-notice', '');
    source = source.trim();
    if (!source) {
      notice('add-notice', 'error', 'Enter a source: a repository, a folder of one, a git URL or an absolute local path.');
      $('source').focus();
      return;
    }
    const body = { source };
    if (names) body.names = names;
    setAddBusy(true);
    let res;
    try {
      res = await withProgress('Planning', { default: 'Plan ready', refused: 'Planned (nothing installable)', failed: 'Planning failed' }, (pid) => api('POST', '/plugins/plan', body, { progress: pid }));
    } catch (err) {
      setAddBusy(false);
      report('add-notice', err);
      return;
    }
    setAddBusy(false);
    const r = res.body;
    if (!r || !Array.isArray(r.actions) || (!r.ok && !r.actions.length)) {
      // Refused before any plan: the error says it all.
      $('add-progress').hidden = true;
      notice('add-notice', 'error', 'Could not plan ' + source + ': ' + errorText(r, 'the daemon answered ' + res.status));
      return;
    }
    if (!names) {
      add.full = isMarketplace(r) ? r : null;
      add.selected = new Set(readyNames(r));
    }
    add.source = source;
    add.shown = r;
    add.result = null;
    renderPlan();
    const head = $('plan-title');
    if (head) head.focus();
  }

  async function installShown() {
    const add = state.add;
    const plan = add.shown;
    if (add.busy || !plan || !plan.ok || !selectionMatches()) return;
    setAddBusy(true);
    let res;
    try {
      res = await withProgress('Installing', { default: 'Install finished', refused: 'Install refused', failed: 'Install failed' }, (pid) => api('POST', '/plugins/install', { planId: plan.planId }, { progress: pid }));
    } catch (err) {
      setAddBusy(false);
      report('add-notice', err);
      return;
    }
    add.result = res.body || { ok: false, status: 'failed', error: 'the daemon answered ' + res.status };
    setAddBusy(false);
    renderPlan();
    const r = $('install-result');
    if (r) r.focus();
  }

  function renderPlan() {
    const add = state.add;
    const r = add.shown;
    const root = clear($('plan'));
    if (!r) {
      root.hidden = true;
      return;
    }
    root.hidden = false;
    const market = !!add.full;
    const counts = {};
    for (const a of r.actions) counts[a.status] = (counts[a.status] || 0) + 1;
    const resolved = r.resolved || {};
    const where = [resolved.kind, resolved.repo, resolved.ref && 'at ' + resolved.ref, resolved.commit && 'commit ' + short(resolved.commit), resolved.subdir && 'folder ' + resolved.subdir]
      .filter(Boolean).join(' · ');

    // The plan's warnings repeat each entry that is not installable
    // ("skipped NAME: reason"); those are listed with their entry below.
    const listed = new Set(r.actions.filter((a) => a.status !== 'ready').map((a) => a.status + ' ' + a.name + ':'));
    const warnings = (r.warnings || []).filter((w) => !Array.from(listed).some((prefix) => w.startsWith(prefix)));
    const head = el('div', { class: 'panel plan-head' },
      el('h3', { id: 'plan-title', tabindex: '-1' }, 'Plan for ', el('code', { class: 'wrap', text: r.source || add.source })),
      el('dl', { class: 'facts' },
        where && [el('dt', {}, 'Resolved'), el('dd', { text: where })],
        el('dt', {}, 'Plan'), el('dd', {}, el('code', { id: 'plan-id', class: 'wrap', text: r.planId || '—' })),
        el('dt', {}, 'Plugins'), el('dd', { id: 'plan-counts' }, Object.entries(counts).map(([s, n]) => n + ' ' + s).join(' · ') || 'none'),
      ),
      warnings.length ? el('ul', { class: 'warnings', 'aria-label': 'Plan warnings' }, warnings.map((w) => el('li', { text: w }))) : null,
      !r.ok && r.error ? el('p', { class: 'refused', id: 'plan-error' }, el('strong', {}, 'Cannot be installed: '), errorText(r, '')) : null,
    );
    root.append(head);

    // The cards: for a marketplace, every entry of the full plan, each
    // shown from the narrowed plan when it is in it.
    const shownByName = new Map(r.actions.map((a) => [a.name, a]));
    const list = market ? add.full.actions : r.actions;
    const installable = list.filter((a) => a.status === 'ready' || (shownByName.get(a.name) || {}).status === 'ready');
    const other = list.filter((a) => !installable.includes(a));

    if (market) root.append(selectionBar());
    const cards = el('div', { class: 'cards' + (installable.length === 1 ? ' one' : ''), id: 'plan-cards' });
    for (const a of installable) {
      const inPlan = shownByName.get(a.name);
      cards.append(planCard(inPlan || a, { market, inPlan: !!inPlan, open: list.length <= 3 }));
    }
    root.append(cards);
    if (other.length) {
      root.append(el('section', { class: 'panel skipped', id: 'plan-skipped', 'aria-labelledby': 'skipped-title' },
        el('h3', { id: 'skipped-title' }, 'Not installable (' + other.length + ')'),
        el('ul', { class: 'reasons' }, other.map((a) => {
          const cur = shownByName.get(a.name) || a;
          return el('li', { 'data-name': cur.name },
            el('span', { class: 'badge status-' + cur.status, text: cur.status }), ' ',
            el('strong', { text: cur.name }), ': ', el('span', { class: 'reason', text: errorText(cur, 'no reason given') }));
        })),
      ));
    }
    root.append(installBar());
    if (add.result) root.append(resultPanel(add.result));
    setAddBusy(add.busy);
  }

  function selectionBar() {
    const add = state.add;
    const all = readyNames(add.full);
    const matches = selectionMatches();
    const bar = el('div', { class: 'panel selection', id: 'selection' },
      el('span', { id: 'selection-count' }, add.selected.size + ' of ' + plural(all.length, 'installable plugin') + ' selected'),
      el('button', { type: 'button', class: 'quiet', onclick: () => select(all) }, 'Select all'),
      el('button', { type: 'button', class: 'quiet', onclick: () => select([]) }, 'Select none'),
    );
    if (!matches) {
      bar.classList.add('changed');
      bar.append(el('span', { class: 'changed-note', id: 'selection-note' }, 'The selection differs from the plan shown: review it before installing.'),
        el('button', {
          type: 'button', id: 'review-selection', class: 'primary', 'data-off': add.selected.size === 0 ? 'true' : 'false',
          onclick: reviewSelection,
        }, add.selected.size === 0 ? 'Select at least one plugin' : 'Review selection'));
    }
    return bar;
  }

  function select(names) {
    state.add.selected = new Set(names);
    renderPlan();
  }

  function toggle(name, on) {
    if (on) state.add.selected.add(name);
    else state.add.selected.delete(name);
    renderPlan();
    const box = document.querySelector('#plan-cards input[data-name="' + CSS.escape(name) + '"]');
    if (box) box.focus();
  }

  function reviewSelection() {
    const add = state.add;
    const all = readyNames(add.full);
    const names = Array.from(add.selected).sort();
    if (!names.length) return;
    // Everything selected is the whole marketplace: plan it as such.
    planSource(add.source, names.length === all.length ? undefined : names);
  }

  function installBar() {
    const add = state.add;
    const r = add.shown;
    const ready = readyNames(r).length;
    const matches = selectionMatches();
    const done = add.result && add.result.applied;
    const refused = add.result && !add.result.applied;
    const can = r.ok && ready > 0 && matches && !done && !refused;
    let why = 'Installs exactly plan ' + (r.planId || '') + '. If the source changed since, the install is refused and nothing is written.';
    if (!r.ok) why = 'This plan cannot be installed.';
    else if (!matches) why = 'Review the selection first: Install applies only a plan you have seen.';
    else if (done) why = 'This plan was installed.';
    else if (refused) why = 'This plan was not installed: see below, then review the source again.';
    return el('div', { class: 'panel install-bar' },
      el('button', { type: 'button', id: 'install-button', class: 'primary', 'data-off': can ? 'false' : 'true', disabled: !can, onclick: installShown },
        'Install ' + plural(ready, 'plugin')),
      el('p', { class: 'hint', id: 'install-why', text: why }),
    );
  }

  function resultPanel(res) {
    const applied = res.applied;
    const kind = applied ? (res.ok ? 'ok' : 'partial') : res.status === 'refused' ? 'refused' : 'error';
    const title = {
      ok: 'Installed', partial: 'Installed in part', refused: 'Install refused', error: 'Install failed',
    }[kind];
    const p = el('section', { class: 'panel result ' + kind, id: 'install-result', tabindex: '-1', 'aria-labelledby': 'result-title', 'data-status': res.status || '' },
      el('h3', { id: 'result-title' }, title));
    if (res.error) p.append(el('p', { class: 'reason', id: 'result-error', text: errorText(res, '') }));
    if (kind === 'refused') {
      p.append(el('p', {}, 'Nothing was written. See what the source holds now and review it again:'),
        el('button', { type: 'button', class: 'secondary', onclick: () => planSource(state.add.source) }, 'See what it is now'));
    }
    const acts = (res.actions || []).filter((a) => a.status !== 'skipped');
    if (applied && acts.length) {
      p.append(el('ul', { class: 'reasons' }, acts.map((a) => el('li', { 'data-name': a.name },
        el('span', { class: 'badge status-' + a.status, text: a.status }), ' ', el('strong', { text: a.name }),
        a.error ? [': ', el('span', { class: 'reason', text: errorText(a, '') })] : null))));
      p.append(el('p', {}, el('a', { href: '#installed' }, 'See them in Installed')));
    }
    return p;
  }

  // planCard renders one plugin of a plan. opts.market adds the selection
  // checkbox; opts.inPlan false marks an entry left out of the plan shown.
  function planCard(a, opts) {
    const add = state.add;
    const ready = a.status === 'ready';
    const selected = add.selected.has(a.name);
    const card = el('article', {
      class: 'card' + (opts.market && !opts.inPlan ? ' unselected' : ''), 'data-name': a.name, 'aria-label': a.name,
    });
    const head = el('header', { class: 'card-head' });
    if (opts.market && ready) {
      const id = 'sel-' + newID();
      head.append(el('input', {
        type: 'checkbox', id, 'data-name': a.name, checked: selected, 'aria-label': 'Select ' + a.name,
        onchange: (ev) => toggle(a.name, ev.target.checked),
      }), el('h4', {}, el('label', { for: id, text: a.name })));
    } else {
      head.append(el('h4', { text: a.name }));
    }
    if (a.version) head.append(el('span', { class: 'version', text: 'v' + a.version }));
    if (a.risk) head.append(el('span', { class: 'badge risk-' + a.risk, text: a.risk + ' risk' }));
    head.append(el('span', { class: 'badge status-' + a.status, text: opts.market && !opts.inPlan ? 'not in this plan' : a.status }));
    card.append(head);
    if (a.description) card.append(el('p', { class: 'desc', text: a.description }));
    const meta = [a.source, a.commit && 'commit ' + short(a.commit), a.manifestKind && a.manifestKind + ' manifest',
      a.compatibility && 'compatibility ' + a.compatibility, a.previousCommit && 'replaces commit ' + short(a.previousCommit)].filter(Boolean);
    if (meta.length) card.append(el('p', { class: 'meta wrap', text: meta.join(' · ') }));
    card.append(contributions(a, opts.open && opts.inPlan !== false));
    if (a.error) card.append(el('p', { class: 'reason' }, el('strong', {}, a.status + ': '), errorText(a, '')));
    return card;
  }

  // contributions renders what a package contributes: the FULL TRUST block
  // first and always open, then counts and one list per kind.
  function contributions(p, open) {
    const box = el('div', { class: 'contrib' });
    if (p.runtime) box.append(fullTrust(p.runtime));
    const n = (xs) => (xs ? xs.length : 0);
    box.append(el('p', { class: 'counts' },
      [plural(n(p.skills), 'skill'), plural(n(p.commands), 'command'), plural(n(p.agents), 'agent'),
        plural(n(p.hooks), 'hook'), plural(n(p.mcpServers), 'MCP server')].join(' · ')));
    // What runs (hooks, MCP servers) is always open; what is invoked by
    // name is folded in long plans.
    const section = (title, items, row, always) => {
      if (!items || !items.length) return null;
      return el('details', { open: open || always || undefined, class: 'items', 'data-kind': title },
        el('summary', {}, title + ' (' + items.length + ')'),
        el('ul', {}, items.map((x) => el('li', {}, row(x)))));
    };
    const sections = [
      section('Skills', p.skills, (s) => [el('code', { text: s.invocation || s.name }), s.description ? ' — ' + s.description : '',
        s.allowedTools && s.allowedTools.length ? el('span', { class: 'muted', text: ' (tools: ' + s.allowedTools.join(', ') + ')' }) : null]),
      section('Commands', p.commands, (c) => [el('code', { text: (c.invocation || c.name) + (c.argumentHint ? ' ' + c.argumentHint : '') }),
        c.description ? ' — ' + c.description : '']),
      section('Agents', p.agents, (a) => [el('code', { text: a.invocation || a.name }), a.description ? ' — ' + a.description : '']),
      section('Hooks', p.hooks, hookRow, true),
      section('MCP servers', p.mcpServers, mcpRow, true),
    ];
    box.append(...sections.filter(Boolean));
    if (p.warnings && p.warnings.length) {
      box.append(el('ul', { class: 'warnings', 'aria-label': 'Warnings' }, p.warnings.map((w) => el('li', { text: w }))));
    }
    return box;
  }

  function kv(map) {
    return Object.entries(map || {}).map(([k, v]) => k + '=' + v).join(' ');
  }

  function hookRow(h) {
    let what;
    if (h.form === 'context' || h.contextFile) what = 'reads ' + h.contextFile;
    else what = [h.command].concat(h.args || []).join(' ');
    const facts = [h.form, h.shell && 'shell ' + h.shell, h.matcher && 'matcher ' + h.matcher, h.timeout && 'timeout ' + h.timeout + 's',
      h.async && 'async', h.env && Object.keys(h.env).length && 'env ' + kv(h.env), h.source && 'from ' + h.source].filter(Boolean);
    return [el('strong', { text: h.event }), ' ', el('code', { class: 'wrap', text: what }),
      h.description ? ' — ' + h.description : '', el('span', { class: 'muted', text: ' (' + facts.join(', ') + ')' })];
  }

  function mcpRow(s) {
    const target = s.url || [s.command].concat(s.args || []).join(' ');
    const facts = [s.transport, s.env && Object.keys(s.env).length && 'env ' + kv(s.env),
      s.headers && Object.keys(s.headers).length && 'headers ' + kv(s.headers), s.toolPrefix && 'tools ' + s.toolPrefix + '*',
      s.autoStart ? 'starts automatically' : 'starts on use', s.source && 'from ' + s.source].filter(Boolean);
    return [el('strong', { text: s.name }), ' ', el('code', { class: 'wrap', text: target }), el('span', { class: 'muted', text: ' (' + facts.join(', ') + ')' })];
  }

  function fullTrust(rt) {
    const cmd = [rt.command].concat(rt.args || []).join(' ');
    const list = (xs) => (xs && xs.length ? xs.join(', ') : 'none');
    return el('div', { class: 'fulltrust', role: 'note', 'aria-label': 'Full trust runtime' },
      el('p', { class: 'fulltrust-title' }, el('strong', {}, 'FULL TRUST runtime')),
      rt.warning ? el('p', { text: rt.warning }) : null,
      el('dl', { class: 'facts' },
        el('dt', {}, 'Runs'), el('dd', {}, el('code', { class: 'wrap', text: cmd })),
        rt.env && Object.keys(rt.env).length ? [el('dt', {}, 'Environment'), el('dd', {}, el('code', { class: 'wrap', text: kv(rt.env) }))] : null,
        el('dt', {}, 'Capabilities'), el('dd', { text: list(rt.capabilities) }),
        el('dt', {}, 'Intercepts'), el('dd', { text: list(rt.intercepts) }),
        el('dt', {}, 'Replaces'), el('dd', { text: list(rt.replaces) }),
        rt.tools && rt.tools.length ? [el('dt', {}, 'Tools'), el('dd', {}, el('ul', {}, rt.tools.map((t) =>
          el('li', {}, el('code', { text: t.modelName || t.name }), t.description ? ' — ' + t.description : '', t.readOnly ? ' (read-only)' : ''))))] : null,
        rt.required ? [el('dt', {}, 'Required'), el('dd', {}, 'yes: the session does not start without it')] : null,
      ));
  }

  // ---- Installed -----------------------------------------------------------

  async function showInstalled() {
    await loadInstalled();
  }

  async function loadInstalled() {
    let res;
    try {
      res = await api('GET', '/plugins');
    } catch (err) {
      report('installed-notice', err);
      return;
    }
    if (res.status !== 200 || !res.body || !Array.isArray(res.body.plugins)) {
      notice('installed-notice', 'error', 'Could not list the installed plugins: ' + errorText(res.body, 'the daemon answered ' + res.status));
      return;
    }
    state.installed.plugins = res.body.plugins;
    renderInstalled();
  }

  function renderInstalled() {
    const root = clear($('installed-list'));
    const plugins = state.installed.plugins;
    if (!plugins.length) {
      root.append(el('p', { class: 'muted', id: 'installed-empty' }, 'No plugin packages are installed. Add one from the Add screen.'));
      return;
    }
    plugins.forEach((p, i) => root.append(installedRow(p, i)));
  }

  function installedRow(p, i) {
    const open = state.installed.open.has(p.name);
    const bodyID = 'plugin-body-' + i;
    const status = p.status || 'unknown';
    const row = el('article', { class: 'prow' + (p.enabled ? '' : ' disabled'), 'data-name': p.name, 'aria-label': p.name });
    const expander = el('button', {
      type: 'button', class: 'expander', 'aria-expanded': open ? 'true' : 'false', 'aria-controls': bodyID,
      onclick: () => {
        if (state.installed.open.has(p.name)) state.installed.open.delete(p.name);
        else state.installed.open.add(p.name);
        renderInstalled();
        const again = document.querySelector('#installed-list article[data-name="' + CSS.escape(p.name) + '"] .expander');
        if (again) again.focus();
      },
    }, el('span', { class: 'chev', 'aria-hidden': 'true' }, open ? '▾' : '▸'), ' ', el('span', { class: 'pname', text: p.name }),
    p.version ? el('span', { class: 'version', text: ' v' + p.version }) : null);
    row.append(el('header', { class: 'prow-head' },
      el('h3', {}, expander),
      el('span', { class: 'badge ' + (p.enabled ? 'on' : 'off'), text: p.enabled ? 'enabled' : 'disabled' }),
      el('span', { class: 'badge status-' + status, text: status }),
      p.runtime ? el('span', { class: 'badge risk-high', text: 'FULL TRUST runtime' }) : null,
      p.problems && p.problems.length ? el('span', { class: 'badge status-blocked', text: plural(p.problems.length, 'problem') }) : null,
      el('span', { class: 'meta wrap', text: [p.source, p.commit && 'commit ' + short(p.commit), p.link && 'linked'].filter(Boolean).join(' · ') }),
    ));
    const body = el('div', { id: bodyID, class: 'prow-body', hidden: !open });
    if (open) {
      if (p.description) body.append(el('p', { class: 'desc', text: p.description }));
      body.append(el('dl', { class: 'facts' },
        el('dt', {}, 'Root'), el('dd', {}, el('code', { class: 'wrap', text: p.root || '' })),
        p.installedAt ? [el('dt', {}, 'Installed'), el('dd', { text: new Date(p.installedAt).toLocaleString() })] : null,
        p.contentDigest ? [el('dt', {}, 'Digest'), el('dd', {}, el('code', { class: 'wrap', text: p.contentDigest }))] : null,
        p.statusReason ? [el('dt', {}, 'Status'), el('dd', { text: p.statusReason })] : null,
        p.marketplace ? [el('dt', {}, 'Marketplace'), el('dd', { class: 'wrap', text: p.marketplace })] : null,
      ));
      if (p.problems && p.problems.length) {
        body.append(el('ul', { class: 'problems', 'aria-label': 'Errors' }, p.problems.map((x) => el('li', { text: x }))));
      }
      body.append(contributions(p, true));
      body.append(el('div', { class: 'row actions' }, rowActions(p)));
    }
    row.append(body);
    return row;
  }

  // rowActions are the buttons of an expanded row. Update (with its review
  // of the update plan) goes here once the daemon serves POST
  // /plugins/update.
  function rowActions(p) {
    return [
      el('button', { type: 'button', class: 'secondary', 'data-action': 'toggle', onclick: () => setEnabled(p, !p.enabled) },
        p.enabled ? 'Disable' : 'Enable'),
      el('button', { type: 'button', class: 'secondary', 'data-action': 'export', onclick: () => exportPlugin(p) }, 'Export'),
      el('button', { type: 'button', class: 'danger', 'data-action': 'remove', onclick: () => removePlugin(p) }, 'Remove'),
    ];
  }

  async function installedOp(label, fn) {
    if (state.installed.busy) return;
    state.installed.busy = true;
    for (const b of document.querySelectorAll('#screen-installed button')) b.disabled = true;
    notice('installed-notice', '');
    try {
      await fn();
    } catch (err) {
      report('installed-notice', err);
    } finally {
      state.installed.busy = false;
      for (const b of document.querySelectorAll('#screen-installed button')) b.disabled = false;
    }
  }

  function setEnabled(p, enabled) {
    return installedOp('enable', async () => {
      const res = await api('POST', '/plugins/enabled', { name: p.name, enabled });
      if (res.status !== 200) {
        notice('installed-notice', 'error', (enabled ? 'Could not enable ' : 'Could not disable ') + p.name + ': ' + errorText(res.body, 'status ' + res.status));
        return;
      }
      await loadInstalled();
      notice('installed-notice', 'ok', (enabled ? 'Enabled ' : 'Disabled ') + p.name + '. Sessions started from now on see the change.');
    });
  }

  function exportPlugin(p) {
    return installedOp('export', async () => {
      const res = await api('GET', '/plugins/' + encodeURIComponent(p.name) + '/export', undefined, { raw: true });
      if (!res.ok) {
        let body = null;
        try {
          body = await res.json();
        } catch {
          // not JSON
        }
        notice('installed-notice', 'error', 'Could not export ' + p.name + ': ' + errorText(body, 'status ' + res.status));
        return;
      }
      const blob = await res.blob();
      const url = URL.createObjectURL(blob);
      const a = el('a', { href: url, download: p.name + '.zip', hidden: true });
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
      const env = res.headers.get('X-Reasonix-Required-Env');
      notice('installed-notice', 'ok', 'Exported ' + p.name + '.zip (' + human(blob.size) + ') with credentials stripped.' +
        (env ? ' Whoever installs it sets: ' + env + '.' : ''));
    });
  }

  async function confirmRemove(name) {
    const d = $('confirm');
    $('confirm-title').textContent = visible('Remove ' + name + '?');
    $('confirm-text').textContent = visible('This uninstalls ' + name + ' and deletes its installed copy. A linked folder is left in place.');
    d.returnValue = '';
    d.showModal();
    $('confirm-cancel').focus();
    // The close event is queued: one from an earlier answer can arrive
    // after this dialog opened, so only a close that left it shut counts.
    await new Promise((resolve) => {
      const onClose = () => {
        if (d.open) return;
        d.removeEventListener('close', onClose);
        resolve();
      };
      d.addEventListener('close', onClose);
    });
    return d.returnValue === 'ok';
  }

  async function removePlugin(p) {
    if (!(await confirmRemove(p.name))) return;
    return installedOp('remove', async () => {
      const res = await api('DELETE', '/plugins/' + encodeURIComponent(p.name));
      if (res.status !== 200) {
        notice('installed-notice', 'error', 'Could not remove ' + p.name + ': ' + errorText(res.body, 'status ' + res.status));
        return;
      }
      state.installed.open.delete(p.name);
      await loadInstalled();
      notice('installed-notice', 'ok', 'Removed ' + p.name + '.');
    });
  }

  function reloadRuntime() {
    return installedOp('reload', async () => {
      const out = $('reload-result');
      out.textContent = 'Reloading…';
      const res = await api('POST', '/extensions/reload');
      if (res.status === 204) {
        out.textContent = 'Runtime reloaded. The extensions apply from the next turn.';
        out.className = 'ok';
        await loadInstalled();
        return;
      }
      out.textContent = visible('Reload refused: ' + errorText(res.body, 'status ' + res.status));
      out.className = 'refused';
    });
  }

  // ---- wiring ----------------------------------------------------------------

  document.addEventListener('DOMContentLoaded', () => {
    $('plan-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      planSource($('source').value);
    });
    $('reload').addEventListener('click', reloadRuntime);
    $('signout').addEventListener('click', signOut);
    window.addEventListener('hashchange', route);
    boot();
  });
})();
