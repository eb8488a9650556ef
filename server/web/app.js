// The installer page. Plain JavaScript, no build step, no dependencies.
//
// Rules this file keeps:
//  - Everything that came from a plugin, a marketplace, a source or the
//    daemon goes into the page as text (el(), textContent), never as HTML,
//    and control, escape and bidi characters are shown as visible escapes
//    (visible()), as the terminal does. innerHTML is never used.
//  - Every request carries the session's page token (X-Reasonix-Page-Token):
//    the session cookie alone opens nothing, since a browser also sends it
//    to other servers on this host. The page token arrives in the sign-in
//    redirect's fragment and is kept in localStorage, which only this
//    origin (scheme, host and port) can read, and which every tab of it
//    shares. The bearer token never reaches this page.
//  - Install sends exactly the planId on screen.
//  - No message names a command-line flag: the daemon's (the CLI's) advice
//    is said in this page's words (words.js) and offered as a button.
'use strict';

(() => {
  const $ = (id) => document.getElementById(id);
  // words says a daemon message in this page's words (words.js).
  const words = (s) => window.ReasonixWords.pageText(s);

  const PAGE_TOKEN_HEADER = 'X-Reasonix-Page-Token';
  const PROGRESS_HEADER = 'X-Reasonix-Progress';
  const SIGNIN_FRAGMENT = '#signin=';
  const TOKEN_KEY = 'reasonix.pageToken';
  const SIGNED_OUT = 'Signed out — run `reasonix studio` to sign in.';

  const state = {
    signedIn: false,
    add: {
      source: '',
      full: null, // the whole marketplace's plan (for the checkboxes), or null
      shown: null, // the plan on screen: what Install applies
      selected: new Set(),
      busy: false,
      result: null,
      opts: {}, // what page actions added to the request (replace, refresh, allowUnpinned)
      // userConfig values typed in the plan's forms, "NAME.KEY" → text.
      // Sensitive ones live only here and in the requests that carry them:
      // the daemon never sends them back, and they are dropped once
      // installed.
      config: {},
      planConfig: '', // the values the plan on screen was made with (JSON)
    },
    // updates: what the daemon's background update check found (GET
    // /updates), or null when it could not be read.
    installed: { plugins: [], open: new Set(), updates: null, project: null },
    markets: {
      list: [], // the known marketplaces, as GET /marketplaces lists them
      offers: {}, // name → what it offers (GET /plugins/available)
      errors: {}, // name → why its offer could not be listed
      open: new Set(), // marketplaces being browsed
      selected: {}, // name → Set of entries picked for a bulk install
    },
    // The update review of each screen that has one: {body, what, plan,
    // result}, or null.
    reviews: { installed: null, markets: null },
    busy: { installed: false, markets: false },
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
      else if (k === 'disabled') {
        // data-off keeps it disabled when a busy screen is enabled again.
        e.disabled = true;
        e.dataset.off = 'true';
      }
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

  // nameOf is what a plugin is called on the page: its displayName, when
  // it has one, with its name.
  const nameOf = (x) => (x.displayName && x.displayName !== x.name ? x.displayName + ' (' + x.name + ')' : x.name);
  const plural = (n, one, many) => n + ' ' + (n === 1 ? one : many || one + 's');
  const short = (sha) => (sha ? String(sha).slice(0, 12) : '');
  const shortDigest = (d) => (d ? String(d).replace(/^(sha256:)?(.{12}).*$/, '$1$2') : '');

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
    content = content.filter((c) => c !== null && c !== undefined);
    if (!content.length) {
      n.hidden = true;
      return;
    }
    n.className = 'notice ' + kind;
    n.append(...content.map((c) => (c instanceof Node ? c : el('p', { text: c }))));
    n.hidden = false;
  }

  // errorText is "message (code)" for a daemon error body, in this page's
  // words.
  function errorText(body, fallback) {
    if (body && body.error) {
      const msg = words(body.error);
      return msg.charAt(0).toUpperCase() + msg.slice(1) + (body.errorCode ? ' (' + body.errorCode + ')' : '');
    }
    return fallback;
  }

  // ---- the page token -------------------------------------------------------

  // The page token lives in localStorage (shared by this origin's tabs);
  // where storage is unavailable, in this tab's memory only.
  let memoryToken = null;

  function pageToken() {
    try {
      return localStorage.getItem(TOKEN_KEY);
    } catch {
      return memoryToken;
    }
  }

  function setPageToken(t) {
    memoryToken = t;
    try {
      if (t) localStorage.setItem(TOKEN_KEY, t);
      else localStorage.removeItem(TOKEN_KEY);
    } catch {
      // memoryToken holds it.
    }
  }

  // takeSignIn moves a page token out of the address bar (#signin=…,
  // where the sign-in redirect puts it) into storage.
  function takeSignIn() {
    if (!location.hash.startsWith(SIGNIN_FRAGMENT)) return;
    const t = location.hash.slice(SIGNIN_FRAGMENT.length);
    history.replaceState(null, '', location.pathname + location.search);
    if (/^[A-Za-z0-9_-]{20,}$/.test(t)) setPageToken(t);
  }

  // ---- the daemon's API ----------------------------------------------------

  class Unauthorized extends Error {}

  // send makes one request to the daemon with the page token.
  function send(path, init) {
    const headers = Object.assign({}, init.headers);
    const t = pageToken();
    if (t) headers[PAGE_TOKEN_HEADER] = t;
    return fetch(path, Object.assign({}, init, { headers, credentials: 'same-origin', cache: 'no-store', redirect: 'error' }));
  }

  // authFailed handles a 401: the session is over for this page. A request
  // that raced a newer sign-in in another tab (the token changed while it
  // ran) is worth one more try; the caller does that when this says so.
  async function authFailed(res, sentToken) {
    if (pageToken() && pageToken() !== sentToken) return true;
    let body = null;
    try {
      body = await res.json();
    } catch {
      // not JSON
    }
    if (body && body.errorCode === 'session.replaced') signedOut(errorText({ error: body.error }, ''), true);
    else if (sentToken && body && body.errorCode === 'session.signed_out') signedOut(errorText({ error: body.error }, SIGNED_OUT));
    else signedOut(SIGNED_OUT);
    return false;
  }

  // api calls the daemon. It returns {status, body} for every answer and
  // throws only when the daemon is unreachable or the session ended.
  async function api(method, path, body, opts = {}) {
    const headers = {};
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (opts.progress) headers[PROGRESS_HEADER] = opts.progress;
    let res;
    for (let attempt = 0; ; attempt++) {
      const sent = pageToken();
      try {
        res = await send(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      } catch (err) {
        throw new Error('The daemon did not answer (' + err.message + '). Is reasonix serve still running?');
      }
      if (res.status !== 401) break;
      if (attempt > 0 || !(await authFailed(res, sent))) throw new Unauthorized('signed out');
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

  // signedOut shows the sign-in screen with reason; replaced offers a
  // reload (a newer sign-in holds the session now).
  function signedOut(reason, replaced) {
    state.signedIn = false;
    $('tabs').hidden = true;
    $('search-form').hidden = true;
    $('account').hidden = true;
    $('loading').hidden = true;
    for (const s of document.querySelectorAll('.screen')) s.hidden = true;
    $('signin-reason').textContent = visible(reason);
    $('signin-reload').hidden = !replaced;
    $('screen-signin').hidden = false;
  }

  async function boot() {
    takeSignIn();
    if (!pageToken()) {
      signedOut(SIGNED_OUT);
      return;
    }
    let res;
    try {
      res = await api('GET', '/session');
    } catch (err) {
      if (!(err instanceof Unauthorized)) signedOut(err.message);
      return;
    }
    if (res.status !== 200) {
      signedOut('The daemon refused the session check: ' + errorText(res.body, 'status ' + res.status));
      return;
    }
    state.signedIn = true;
    $('screen-signin').hidden = true;
    $('loading').hidden = true;
    $('tabs').hidden = false;
    $('search-form').hidden = false;
    $('account').hidden = false;
    route();
  }

  async function signOut() {
    try {
      await api('POST', '/logout');
    } catch (err) {
      // The session is gone either way.
    }
    setPageToken(null);
    signedOut('You signed out.');
  }

  // Another tab of this origin signed in or out: follow it.
  function storageChanged(ev) {
    if (ev.key !== TOKEN_KEY && ev.key !== null) return;
    if (!pageToken()) signedOut('You signed out in another tab.');
    else if (!state.signedIn) boot();
  }

  // ---- screens -------------------------------------------------------------

  // SCREENS lists the screens the tabs (in index.html) lead to.
  const SCREENS = {
    add: { section: 'screen-add', show: showAdd },
    installed: { section: 'screen-installed', show: showInstalled },
    marketplaces: { section: 'screen-marketplaces', show: showMarketplaces },
    search: { section: 'screen-search', show: showSearch },
  };

  function route() {
    if (!state.signedIn) return;
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

  // STALL_AFTER is how long the page waits without news before it says
  // what it is waiting on (the daemon says it sooner when it can tell).
  const STALL_AFTER = 5000;

  const secs = (ms) => (ms < 10000 ? (ms / 1000).toFixed(1) : String(Math.round(ms / 1000))) + ' s';

  function progressLine(p) {
    const parts = [];
    if (p.total > 0) parts.push(p.entries + ' of ' + plural(p.total, 'entry', 'entries') + ' resolved');
    if (p.repos > 0 || p.bytes > 0) parts.push(plural(p.repos, 'repository', 'repositories') + ' fetched (' + human(p.bytes) + ')');
    else if (p.received > 0 || p.written > 0) parts.push(human(Math.max(p.received || 0, p.written || 0)) + ' fetched' + (p.host ? ' from ' + p.host : ''));
    return parts.join(' · ');
  }

  // hostOf is the host a source names ("" when it names none: a folder, a
  // known marketplace's name), for saying what a plan waits on before the
  // daemon says so itself.
  function hostOf(src) {
    const s = String(src || '');
    const m = /^git:([^/]+)\//i.exec(s) || /^https:\/\/([^/#?]+)/i.exec(s) || /^ssh:\/\/(?:[^@/]+@)?([^/:]+)/i.exec(s) ||
      /^[^@/:]+@([^:/]+):/.exec(s);
    return m ? m[1].toLowerCase() : '';
  }

  // waitLine says what a stream waits on: a retry or a silent host, as the
  // daemon reports them, or, when it reports nothing for STALL_AFTER, the
  // host the source names (where), or just that it is still at work.
  function waitLine(p, quietMs, where) {
    if (p && p.retryAttempt > 0) {
      return 'retrying ' + p.retryWhat + ' (' + p.retryAttempt + '/' + p.retryMax + ')' + (p.retryWaitMs > 0 ? ' in ' + secs(p.retryWaitMs) : '') +
        (p.retryWhy ? ' after: ' + words(p.retryWhy) : '');
    }
    if (p && p.silentMs > 0) {
      return 'no answer from ' + p.host + ' for ' + secs(p.silentMs) + (p.limitMs > 0 ? ' (it gives up at ' + secs(p.limitMs) + ')' : '');
    }
    if (quietMs < STALL_AFTER) return '';
    const host = (p && p.host) || where;
    return (host ? 'waiting on ' + host : 'still working') + ': no news for ' + secs(quietMs);
  }

  // A progress line is the element id (with id-bar and id-text inside):
  // each screen has its own. quietMs is how long no news came, tookMs how
  // long the work has run; where names the host the work waits on.
  function showProgress(box, label, p, quietMs, tookMs, where) {
    const bar = $(box + '-bar');
    if (p && p.total > 0) {
      bar.max = p.total;
      bar.value = Math.min(p.entries, p.total);
    } else {
      bar.removeAttribute('value');
    }
    const phase = p ? PHASES[p.phase] || p.phase : label;
    const line = p ? progressLine(p) : '';
    const wait = waitLine(p, quietMs || 0, where);
    const took = tookMs >= 1000 ? ' (' + secs(tookMs) + ')' : '';
    $(box + '-text').textContent = visible(phase + '…' + (line ? ' ' + line : '') + took + (wait ? ' — ' + wait : ''));
    $(box).classList.toggle('stalled', !!wait);
  }

  // pending shows work that has no progress stream (a marketplace read);
  // settled ends it with a sentence.
  function pending(box, text) {
    const b = $(box);
    b.hidden = false;
    b.classList.remove('finished');
    $(box + '-bar').removeAttribute('value');
    $(box + '-text').textContent = visible(text);
  }

  // settled ends it: the notice that follows says how it went.
  function settled(box) {
    $(box).hidden = true;
  }

  // followEvents reads progress stream id (server-sent events) with fetch,
  // which, unlike EventSource, sends the page token in a header (a token in
  // the URL would reach logs and history). onEvent(name, data) hears each
  // event and returns 'done' to stop. A dropped stream is opened again, a
  // few times; a refused one is left alone (the request's own answer says
  // what went wrong). Returns {open, abort}: open resolves once the first
  // answer started (or failed).
  function followEvents(id, onEvent) {
    const ctl = new AbortController();
    let opened;
    const open = new Promise((r) => (opened = r));
    (async () => {
      for (let attempt = 0; attempt < 5 && !ctl.signal.aborted; attempt++) {
        let res;
        try {
          res = await send('/events?progress=' + encodeURIComponent(id), { signal: ctl.signal });
        } catch {
          opened();
          await sleep(1000);
          continue;
        }
        opened();
        if (!res.ok || !res.body) return;
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        try {
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buf += value;
            for (let i = buf.indexOf('\n\n'); i >= 0; i = buf.indexOf('\n\n')) {
              const block = buf.slice(0, i);
              buf = buf.slice(i + 2);
              let name = 'message';
              let data = '';
              for (const line of block.split('\n')) {
                if (line.startsWith('event:')) name = line.slice(6).trim();
                else if (line.startsWith('data:')) data += line.slice(5).replace(/^ /, '');
              }
              if (data && onEvent(name, data) === 'done') {
                ctl.abort();
                return;
              }
            }
          }
        } catch {
          // dropped or aborted: the loop decides
        }
        await sleep(1000);
      }
    })();
    return { open, abort: () => ctl.abort() };
  }

  // withProgress runs op(progressId) while following its stream. The
  // stream is opened first; one that opens late still gets the latest state.
  // doneLabel names the end by the response's status (default: any other).
  // The progress line is boxID's; it counts the seconds while the work
  // runs, and where (the host the source names, if any) is what it says
  // the work waits on when no news comes.
  async function withProgress(boxID, label, doneLabel, op, where) {
    const id = newID();
    const box = $(boxID);
    box.hidden = false;
    box.classList.remove('finished', 'stalled');
    const started = performance.now();
    let last = null;
    let lastKey = '';
    let lastNews = started;
    const draw = () => showProgress(boxID, label, last, performance.now() - lastNews, performance.now() - started, where);
    draw();
    let finish;
    const done = new Promise((r) => (finish = r));
    const stream = followEvents(id, (name, data) => {
      try {
        last = JSON.parse(data);
      } catch {
        return undefined;
      }
      if (name === 'done') {
        finish();
        return 'done';
      }
      // News is a change of anything but the clock.
      const key = JSON.stringify(Object.assign({}, last, { elapsedMs: 0 }));
      if (key !== lastKey) {
        lastKey = key;
        lastNews = performance.now();
      }
      draw();
      return undefined;
    });
    const ticker = setInterval(draw, 1000);
    await Promise.race([stream.open, sleep(500)]);
    try {
      return await op(id);
    } finally {
      clearInterval(ticker);
      await Promise.race([done, sleep(1500)]);
      stream.abort();
      const ms = last && last.elapsedMs ? last.elapsedMs : performance.now() - started;
      const took = ms < 1000 ? Math.max(1, Math.round(ms)) + ' ms' : (ms / 1000).toFixed(1) + ' s';
      const line = last ? progressLine(last) : '';
      const bar = $(boxID + '-bar');
      if (last && last.total > 0) {
        bar.max = last.total;
        bar.value = last.entries;
      } else {
        bar.max = 1;
        bar.value = 1;
      }
      box.classList.remove('stalled');
      box.classList.add('finished');
      const label = (last && doneLabel[last.status]) || doneLabel.default;
      $(boxID + '-text').textContent = visible(label + ' in ' + took + (line ? ': ' + line : '') + '.');
    }
  }

  // ---- Add: source → plan → install ---------------------------------------

  function showAdd() {
    if (!state.add.shown) $('source').focus();
  }

  const isMarketplace = (r) => !!(r && r.resolved && r.resolved.kind === 'marketplace');
  const readyNames = (r) => (r && r.actions ? r.actions.filter((a) => a.status === 'ready').map((a) => a.name) : []);

  // The codes of a plan entry that waits for option values.
  const CONFIG_CODES = ['install.config_required', 'install.config_invalid'];
  const needsValues = (a) => CONFIG_CODES.includes(a.errorCode);

  // configFor is the typed values a plan of names (all when undefined)
  // takes: only its plugins' keys, and no empty ones.
  function configFor(names) {
    const out = {};
    for (const [k, v] of Object.entries(state.add.config)) {
      const plugin = k.slice(0, k.lastIndexOf('.'));
      if (v !== '' && (!names || names.includes(plugin))) out[k] = v;
    }
    return out;
  }
  const configKey = (names) => JSON.stringify(Object.entries(configFor(names)).sort());
  const configMatches = () => configKey(state.add.names) === state.add.planConfig;

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
    for (const b of document.querySelectorAll('#plan button, #plan input, #add-notice button')) b.disabled = busy || b.dataset.off === 'true';
  }

  // planSource plans source (narrowed to names, when given) with opts, the
  // options a page action adds (replace, refresh, allowUnpinned: what the
  // CLI's flags ask for), and shows the plan for review.
  async function planSource(source, names, opts) {
    const add = state.add;
    if (add.busy) return;
    notice('add-notice', '');
    source = source.trim();
    if (!source) {
      notice('add-notice', 'error', 'Enter a source: a repository, a folder of one, a git URL or an absolute local path.');
      $('source').focus();
      return;
    }
    opts = Object.assign({}, opts);
    const body = Object.assign({ source }, opts);
    if (names) body.names = names;
    const config = configFor(names);
    if (Object.keys(config).length) body.config = config;
    setAddBusy(true);
    let res;
    try {
      res = await withProgress('add-progress', 'Planning', { default: 'Plan ready', refused: 'Planned (nothing installable)', failed: 'Planning failed', unchecked: 'Planned from the cache (not checked)' },
        (pid) => api('POST', '/plugins/plan', body, { progress: pid }), hostOf(source) || marketHost(source));
    } catch (err) {
      setAddBusy(false);
      report('add-notice', err);
      return;
    }
    setAddBusy(false);
    const r = res.body;
    if (!r || !Array.isArray(r.actions) || (!r.ok && !r.actions.length)) {
      // Refused before any plan: the error says it all, with what can be
      // done about it.
      $('add-progress').hidden = true;
      notice('add-notice', 'error', el('p', {}, 'Could not plan ' + source + ': ' + errorText(r, 'the daemon answered ' + res.status)),
        refusalActions(r, source, names, opts));
      const b = document.querySelector('#add-notice button');
      if (b) b.focus();
      return;
    }
    if (!names) {
      add.full = isMarketplace(r) ? r : null;
      add.selected = new Set(readyNames(r));
    }
    add.source = source;
    add.names = names;
    add.opts = opts;
    add.shown = r;
    add.planConfig = configKey(names);
    add.result = null;
    renderPlan();
    const head = $('plan-title');
    if (head) head.focus();
  }

  // marketHost is the host of the known marketplace a name or NAME@MARKET
  // names, when the Marketplaces screen has listed it.
  function marketHost(source) {
    const market = source.includes('@') ? source.slice(source.indexOf('@') + 1) : source;
    const k = state.markets.list.find((m) => m.name === market);
    return k ? hostOf(k.source) : '';
  }

  // refusalActions are the buttons a refused source offers: the source the
  // daemon suggests instead, or the screen where marketplaces are known.
  function refusalActions(r, source, names, opts) {
    const acts = [];
    const better = window.ReasonixWords.suggestion(r && r.error);
    if (better) {
      acts.push(el('button', {
        type: 'button', class: 'primary', 'data-action': 'use-suggestion', 'data-source': better,
        onclick: () => {
          $('source').value = better;
          planSource(better, undefined, {});
        },
      }, 'Plan ', el('code', { text: better }), ' instead'));
    }
    if (r && /known marketplace/.test(String(r.error || ''))) {
      acts.push(el('a', { href: '#marketplaces', class: 'button-link', 'data-action': 'open-marketplaces' }, 'Open Marketplaces'));
    }
    if (r && /remembered from/.test(String(r.error || ''))) {
      acts.push(el('button', { type: 'button', class: 'secondary', 'data-action': 'ask-again', onclick: () => planSource(source, names, Object.assign({}, opts, { refresh: true })) }, 'Ask again'));
    }
    return acts.length ? el('p', { class: 'row notice-actions' }, acts) : null;
  }

  async function installShown() {
    const add = state.add;
    const plan = add.shown;
    if (add.busy || !plan || !plan.ok || !selectionMatches() || !configMatches()) return;
    setAddBusy(true);
    // The values the plan was made with go again: no stored plan keeps the
    // sensitive ones.
    const body = { planId: plan.planId };
    const config = configFor(add.names);
    if (Object.keys(config).length) body.config = config;
    let res;
    try {
      res = await withProgress('add-progress', 'Installing', { default: 'Install finished', refused: 'Install refused', failed: 'Install failed' },
        (pid) => api('POST', '/plugins/install', body, { progress: pid }), hostOf(add.source) || marketHost(add.source));
    } catch (err) {
      setAddBusy(false);
      report('add-notice', err);
      return;
    }
    add.result = res.body || { ok: false, status: 'failed', error: 'the daemon answered ' + res.status };
    if (add.result.applied) add.config = {}; // installed: the page forgets them
    setAddBusy(false);
    renderPlan();
    const r = $('install-result');
    if (r) r.focus();
  }

  // replan plans what is on screen again with more options (opts) and, for
  // a marketplace, these names selected.
  function replan(opts, names) {
    const add = state.add;
    const all = Object.assign({}, add.opts, opts);
    if (names && add.full) {
      add.selected = new Set(names);
      planSource(add.source, names.slice().sort(), all);
      return;
    }
    planSource(add.source, add.names, all);
  }

  // conflicting are the names of a plan's entries already installed from
  // elsewhere: what Replace would replace.
  const conflicting = (r) => (r && r.actions ? r.actions.filter((a) => a.status === 'conflict').map((a) => a.name) : []);

  // replaceButton re-plans with the conflicting entries replaced; the new
  // plan is shown for review and installs by its own planId.
  function replaceButton(r, id) {
    const names = conflicting(r);
    const add = state.add;
    // A narrowed marketplace plan keeps its selection, with them in it.
    const pick = add.full && add.names ? Array.from(new Set([...add.names, ...names])) : null;
    return el('button', { type: 'button', class: 'primary', id, 'data-action': 'replace', onclick: () => replan({ replace: true }, pick) },
      names.length === 1 ? 'Replace ' + names[0] : names.length ? 'Replace ' + plural(names.length, 'installed plugin') : 'Replace');
  }

  // planFixes are the buttons of a plan that cannot do all it could:
  // replace what is installed from elsewhere, ask a host again instead of
  // trusting a remembered "not found", pin unpinned entries at their head.
  function planFixes(r) {
    const texts = [r.error || ''].concat(r.actions.map((a) => a.error || ''));
    const fixes = [];
    if (conflicting(r).length || r.errorCode === 'install.conflict') fixes.push(replaceButton(r, 'plan-replace'));
    if (r.actions.some((a) => a.unchecked)) {
      fixes.push(el('button', { type: 'button', class: 'secondary', 'data-action': 'check-again', onclick: () => replan({}) }, 'Check again'),
        el('button', { type: 'button', class: 'secondary', 'data-action': 'offline', onclick: () => replan({ offline: true }) }, 'Plan from the cache'));
    }
    if (texts.some((t) => /remembered from/.test(t))) {
      fixes.push(el('button', { type: 'button', class: 'secondary', 'data-action': 'ask-again', onclick: () => replan({ refresh: true }) }, 'Ask again'));
    }
    if (!state.add.opts.allowUnpinned && r.actions.some((a) => a.errorCode === 'install.not_pinnable' && /allow-unpinned/.test(a.error || ''))) {
      fixes.push(el('button', { type: 'button', class: 'secondary', 'data-action': 'allow-unpinned', onclick: () => replan({ allowUnpinned: true }) },
        'Pin unpinned entries at their current head'));
    }
    return fixes.length ? el('div', { class: 'row fixes', id: 'plan-fixes' }, fixes) : null;
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
    const unchecked = r.actions.filter((a) => a.unchecked);
    const asked = [add.opts.replace && 'replacing installed plugins', add.opts.refresh && 'asking hosts again', add.opts.offline && 'offline, from the cache',
      add.opts.allowUnpinned && 'unpinned entries pinned at their current head'].filter(Boolean);

    // The plan's warnings repeat each entry that is not installable
    // ("skipped NAME: reason"); those are listed with their entry below.
    const listed = new Set(r.actions.filter((a) => a.status !== 'ready').map((a) => a.status + ' ' + a.name + ':'));
    const warnings = (r.warnings || []).filter((w) => !Array.from(listed).some((prefix) => w.startsWith(prefix)));
    const head = el('div', { class: 'panel plan-head' },
      el('h3', { id: 'plan-title', tabindex: '-1' }, 'Plan for ', el('code', { class: 'wrap', text: r.source || add.source })),
      el('dl', { class: 'facts' },
        where && [el('dt', {}, 'Resolved'), el('dd', { text: where })],
        el('dt', {}, 'Plan'), el('dd', {}, el('code', { id: 'plan-id', class: 'wrap', text: r.planId || '—' })),
        el('dt', {}, 'Plugins'), el('dd', { id: 'plan-counts' }, Object.entries(counts).map(([s, n]) => n + ' ' + s.replaceAll('-', ' ')).join(' · ') || 'none'),
        // A plan narrowed elsewhere (the Marketplaces screen) says so.
        !market && add.names ? [el('dt', {}, 'Selected'), el('dd', { id: 'plan-selected', class: 'wrap', text: add.names.join(', ') })] : null,
        asked.length ? [el('dt', {}, 'Asked'), el('dd', { id: 'plan-asked', text: asked.join(' · ') })] : null,
      ),
      warnings.length ? el('ul', { class: 'warnings', 'aria-label': 'Plan warnings' }, warnings.map((w) => el('li', { text: words(w) }))) : null,
      unchecked.length ? el('div', { class: 'unchecked-note', id: 'plan-unchecked', role: 'status' },
        el('p', {}, el('strong', {}, 'Could not check ' + plural(unchecked.length, 'plugin') + ' (' + Array.from(new Set(unchecked.map((a) => a.unchecked))).join(', ') + '). '),
          'Their sources could not be reached, so this plan is what was cached: ' + unchecked.map(nameOf).join(', ') +
          '. Plan again when the network is back, or plan from the cache on purpose.'))
        : !r.ok && r.error && r.status !== 'up-to-date' ? el('p', { class: 'refused', id: 'plan-error' }, el('strong', {}, 'Cannot be installed: '), errorText(r, '')) : null,
      planFixes(r),
    );
    root.append(head);

    // The cards: for a marketplace, every entry of the full plan, each
    // shown from the narrowed plan when it is in it.
    const shownByName = new Map(r.actions.map((a) => [a.name, a]));
    const list = market ? add.full.actions : r.actions;
    const current = (a) => shownByName.get(a.name) || a;
    const installable = list.filter((a) => a.status === 'ready' || current(a).status === 'ready' || needsValues(current(a)));
    const installedAlready = list.filter((a) => !installable.includes(a) && current(a).status === 'up-to-date');
    const other = list.filter((a) => !installable.includes(a) && !installedAlready.includes(a));

    if (market) root.append(selectionBar());
    const cards = el('div', { class: 'cards' + (installable.length === 1 ? ' one' : ''), id: 'plan-cards' });
    for (const a of installable) {
      const inPlan = shownByName.get(a.name);
      cards.append(planCard(inPlan || a, { market, inPlan: !!inPlan, open: list.length <= 3 }));
    }
    if (installable.length) root.append(cards);
    if (installedAlready.length) root.append(installedAlreadyPanel(installedAlready.map(current), market));
    if (other.length) {
      root.append(el('section', { class: 'panel skipped', id: 'plan-skipped', 'aria-labelledby': 'skipped-title' },
        el('h3', { id: 'skipped-title' }, 'Not installable (' + other.length + ')'),
        el('ul', { class: 'reasons' }, other.map((a) => {
          const cur = current(a);
          return el('li', { 'data-name': cur.name },
            el('span', { class: 'badge status-' + cur.status, text: cur.status }), ' ',
            el('strong', { text: nameOf(cur) }), ': ', el('span', { class: 'reason', text: errorText(cur, 'no reason given') }),
            cur.status === 'conflict' ? [' ', replaceOne(cur.name)] : null);
        })),
      ));
    }
    root.append(installBar());
    if (add.result) root.append(resultPanel(add.result));
    setAddBusy(add.busy);
  }

  // replaceOne re-plans with one installed plugin replaced (in a
  // marketplace plan, that entry alone).
  function replaceOne(name) {
    const add = state.add;
    return el('button', {
      type: 'button', class: 'quiet', 'data-action': 'replace-one', 'data-name': name,
      onclick: () => (add.full ? replan({ replace: true }, [name]) : replan({ replace: true })),
    }, 'Replace');
  }

  // installedAlreadyPanel lists what the plan would install as it is
  // installed now: nothing to do, which is not an error. Reinstall
  // re-plans it as a replacement (a repair).
  function installedAlreadyPanel(acts, market) {
    return el('section', { class: 'panel installed-already', id: 'plan-installed', 'aria-labelledby': 'installed-already-title' },
      el('h3', { id: 'installed-already-title' }, 'Installed already (' + acts.length + ')'),
      el('ul', { class: 'reasons' }, acts.map((a) => el('li', { 'data-name': a.name },
        el('span', { class: 'badge status-installed', text: 'installed' }), ' ', el('strong', { text: nameOf(a) }),
        a.version ? el('span', { class: 'version', text: ' v' + a.version }) : null,
        a.commit ? [' at commit ', el('code', { text: short(a.commit) })] : null,
        ': the same source and content, nothing to do. ',
        el('button', {
          type: 'button', class: 'quiet', 'data-action': 'reinstall', 'data-name': a.name,
          onclick: () => (market ? replan({ replace: true }, [a.name]) : replan({ replace: true })),
        }, 'Reinstall'),
        el('a', { href: '#installed', class: 'quiet-link' }, 'See it in Installed')))));
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
    planSource(add.source, names.length === all.length ? undefined : names, add.opts);
  }

  function installBar() {
    const add = state.add;
    const r = add.shown;
    const ready = r.actions.filter((a) => a.status === 'ready');
    const matches = selectionMatches();
    const done = add.result && add.result.applied;
    const refused = add.result && !add.result.applied;
    const values = configMatches();
    const can = r.ok && ready.length > 0 && matches && values && !done && !refused;
    let why = 'Installs exactly plan ' + (r.planId || '') + '. If the source changed since, the install is refused and nothing is written.';
    if (!values) why = 'The option values differ from the plan shown: review them first (Review with these values).';
    else if (r.status === 'up-to-date') why = 'Everything this plan names is installed already, as planned: there is nothing to install.';
    else if (r.actions.some((a) => a.unchecked)) why = 'This plan is what was cached, unchecked: check again, or plan from the cache on purpose.';
    else if (!r.ok && r.actions.some(needsValues)) why = 'Give the options their values, then review the plan with them.';
    else if (!r.ok) why = 'This plan cannot be installed' + (conflicting(r).length ? ': Replace above plans it again as a replacement.' : '.');
    else if (!matches) why = 'Review the selection first: Install applies only a plan you have seen.';
    else if (done) why = 'This plan was installed.';
    else if (refused) why = 'This plan was not installed: see below, then review the source again.';
    const trusted = ready.filter((a) => a.runtime).map(nameOf);
    let label = 'Install ' + plural(ready.length, 'plugin') + (trusted.length ? ' and trust ' + trusted.join(', ') : '');
    if (!ready.length) label = 'Nothing to install';
    else if (ready.length === 1 && trusted.length) label = 'Install and trust ' + trusted[0];
    return approveBar({ id: 'install-button', actions: ready, can, why, onclick: installShown, label });
  }

  // approveBar is where a plan is approved: every FULL TRUST runtime the
  // plan would start (o.actions' runtimes), in full view right above the
  // button that approves it, whose label names them ("Install and trust
  // beta"). It stays on screen (sticky) however long the review above it
  // is.
  function approveBar(o) {
    const trusted = o.actions.filter((a) => a.runtime);
    const fetching = o.actions.filter((a) => (a.runtimeFetches || []).some((f) => f.kind === 'code' && !f.pinned));
    return el('div', { class: (o.inPanel ? '' : 'panel ') + 'install-bar' + (trusted.length ? ' trusting' : ''), id: o.id + '-bar' },
      fetching.length ? el('p', { class: 'approve-fetches', role: 'note' }, el('strong', {}, 'Unpinned code fetched at run time: '),
        fetching.map(nameOf).join(', ') + ' run code that no pin fixes (listed above).') : null,
      trusted.length ? el('div', { class: 'approve-trust', role: 'group', 'aria-label': 'FULL TRUST runtimes this approves' }, trusted.map(trustLine)) : null,
      el('div', { class: 'row approve-row' },
        el('button', { type: 'button', id: o.id, class: 'primary' + (trusted.length ? ' trust' : ''), 'data-off': o.can ? 'false' : 'true', disabled: !o.can, onclick: o.onclick },
          o.label),
        el('p', { class: 'hint', id: o.id + '-why', text: o.why })));
  }

  // trustLine is one FULL TRUST runtime as the approval names it: who runs
  // what, outside the sandbox (the card above has the whole block).
  function trustLine(a) {
    const rt = a.runtime;
    const cmd = [rt.command].concat(rt.args || []).join(' ');
    const caps = rt.capabilities && rt.capabilities.length ? rt.capabilities.join(', ') : 'none';
    return el('div', { class: 'fulltrust', role: 'note', 'data-name': a.name },
      el('p', { class: 'fulltrust-title' }, el('strong', {}, 'FULL TRUST: '), nameOf(a), ' runs ', el('code', { class: 'wrap', text: cmd }),
        ' outside the sandbox, with your user\'s permissions.'),
      el('p', { class: 'fulltrust-facts', text: 'Capabilities: ' + caps + (rt.required ? ' · required: sessions do not start without it' : '') +
        '. Approving the plan is the authorization: install only runtimes you trust completely.' }));
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
    if (kind === 'refused' || kind === 'error') {
      p.append(el('p', {}, 'Nothing was written. See what the source holds now and review it again:'),
        el('p', { class: 'row' }, el('button', { type: 'button', class: 'primary', id: 'review-again', 'data-action': 'review-again', onclick: () => replan({}) }, 'Review again')));
    }
    const acts = (res.actions || []).filter((a) => a.status !== 'skipped');
    if (applied && acts.length) {
      p.append(el('ul', { class: 'reasons' }, acts.map((a) => el('li', { 'data-name': a.name },
        el('span', { class: 'badge status-' + a.status, text: a.status }), ' ', el('strong', { text: nameOf(a) }),
        a.error ? [': ', el('span', { class: 'reason', text: errorText(a, '') })] : null))));
      if (conflicting(res).length) p.append(el('p', { class: 'row' }, replaceButton(res, 'result-replace')));
      p.append(el('p', { class: 'row' }, el('a', { href: '#installed' }, 'See them in Installed'),
        state.add.from === 'marketplaces' ? el('a', { href: '#marketplaces' }, 'Back to Marketplaces') : null));
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
      }), el('h4', {}, el('label', { for: id, text: nameOf(a) })));
    } else {
      head.append(el('h4', { text: nameOf(a) }));
    }
    if (a.version) head.append(el('span', { class: 'version', text: 'v' + a.version }));
    if (a.risk) head.append(el('span', { class: 'badge risk-' + a.risk, text: a.risk + ' risk' }));
    head.append(el('span', { class: 'badge status-' + a.status, text: opts.market && !opts.inPlan ? 'not in this plan' : a.status }));
    card.append(head);
    if (a.description) card.append(el('p', { class: 'desc', text: a.description }));
    const meta = [a.source, a.commit && 'commit ' + short(a.commit) + (a.tag ? ' (release tag ' + a.tag + ')' : ''), a.manifestKind && a.manifestKind + ' manifest',
      a.compatibility && 'compatibility ' + a.compatibility, a.previousCommit && 'replaces commit ' + short(a.previousCommit)].filter(Boolean);
    if (meta.length) card.append(el('p', { class: 'meta wrap', text: meta.join(' · ') }));
    const renamed = renameLine(a);
    if (renamed) card.append(renamed);
    const moved = sourceMove(a);
    if (moved) card.append(moved);
    const deps = depsLine(a);
    if (deps) card.append(deps);
    if (a.userConfig && a.userConfig.length && (ready || needsValues(a))) card.append(optionsForm(a));
    card.append(contributions(a, opts.open && opts.inPlan !== false));
    if (a.error) card.append(el('p', { class: 'reason' }, el('strong', {}, a.status + ': '), errorText(a, '')));
    return card;
  }

  // depsLine says what a planned plugin needs, what needs it, and whether
  // it comes in only because of that (null when none of these).
  function depsLine(a) {
    const deps = [a.dependency && 'installed as a dependency',
      a.dependsOn && a.dependsOn.length && 'needs ' + a.dependsOn.join(', '),
      a.dependencyOf && a.dependencyOf.length && 'needed by ' + a.dependencyOf.join(', ')].filter(Boolean);
    return deps.length ? el('p', { class: 'meta wrap deps', text: deps.join(' · ') }) : null;
  }

  // optionsForm is the form of a plugin's userConfig options. A value is
  // kept as typed, by NAME.KEY, and sent with the next plan; a sensitive
  // one is a password field the daemon never fills (it says only whether
  // one is set).
  function optionsForm(a) {
    const add = state.add;
    const box = el('fieldset', { class: 'options', 'data-name': a.name }, el('legend', {}, 'Options'));
    for (const o of a.userConfig) {
      const key = a.name + '.' + o.key;
      const id = 'opt-' + newID();
      const typed = add.config[key];
      let current = typed !== undefined ? typed : '';
      if (typed === undefined && o.value !== undefined && !o.sensitive) current = String(o.value);
      let input;
      if (o.type === 'boolean') {
        input = el('select', { id }, ['', 'true', 'false'].map((v) => el('option', { value: v, text: v === '' ? '(not set)' : v })));
        input.value = current;
      } else {
        input = el('input', {
          id, type: o.sensitive ? 'password' : o.type === 'number' ? 'number' : 'text',
          autocomplete: o.sensitive ? 'new-password' : 'off', spellcheck: 'false', autocapitalize: 'off',
        });
        if (o.type === 'number' && o.min !== undefined) input.min = String(o.min);
        if (o.type === 'number' && o.max !== undefined) input.max = String(o.max);
        input.value = current;
        if (o.sensitive && o.set && typed === undefined) input.placeholder = 'set — leave empty to keep it';
        else if (o.default !== undefined) input.placeholder = 'default: ' + String(o.default);
      }
      input.dataset.key = key;
      input.required = !!o.required && !o.set && o.default === undefined;
      input.addEventListener(input.tagName === 'SELECT' ? 'change' : 'input', () => {
        add.config[key] = input.value;
        const bar = document.querySelector('#plan .install-bar');
        if (bar) bar.replaceWith(installBar());
      });
      const facts = [o.type, o.required ? 'required' : 'optional', o.sensitive ? 'sensitive: kept only on this machine, never shown' : ''].filter(Boolean).join(' · ');
      box.append(el('div', { class: 'option' },
        el('label', { for: id }, (o.title || o.key) + ' ', el('code', { class: 'muted', text: o.key })),
        input,
        el('p', { class: 'hint', text: [o.description, facts].filter(Boolean).join(' — ') })));
    }
    box.append(el('button', {
      type: 'button', class: 'secondary review-values', onclick: () => planSource(add.source, add.names, add.opts),
    }, 'Review with these values'));
    return box;
  }

  // contributions renders what a package contributes: the FULL TRUST block
  // first and always open, then counts and one list per kind.
  // noRuntime leaves the FULL TRUST block to the caller.
  function contributions(p, open, noRuntime) {
    const box = el('div', { class: 'contrib' });
    if (p.runtime && !noRuntime) box.append(fullTrust(p.runtime));
    const fetched = runtimeFetches(p);
    if (fetched) box.append(fetched);
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
      box.append(el('ul', { class: 'warnings', 'aria-label': 'Warnings' }, p.warnings.map((w) => el('li', { text: words(w) }))));
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

  // runtimeFetches shows the code a package fetches when it runs that no
  // pin fixes (SPEC §17): its commit does not say what that code is, so it
  // stands apart, always open, one command each. Pinned fetches and remote
  // services follow, plainly.
  function runtimeFetches(p) {
    const all = p.runtimeFetches || [];
    const unpinned = all.filter((f) => f.kind === 'code' && !f.pinned);
    const pinned = all.filter((f) => f.kind === 'code' && f.pinned);
    const remote = all.filter((f) => f.kind === 'remote');
    if (!all.length) return null;
    const where = (f) => ' (' + f.where + (f.script ? ', in ' + f.script : '') + ')';
    const row = (f) => el('li', {}, el('code', { class: 'wrap', text: f.command || f.package || '' }), el('span', { class: 'muted', text: where(f) }));
    return el('div', { class: 'runtime-fetches', role: 'note', 'aria-label': 'Code fetched at run time' },
      unpinned.length ? [el('p', { class: 'fetch-title' }, el('strong', {}, 'Runs unpinned code fetched at run time'),
        ': what runs is whatever its registry serves then, not what this plan reviewed.'),
      el('ul', { class: 'unpinned' }, unpinned.map(row))] : null,
      pinned.length ? el('details', { class: 'items' }, el('summary', {}, 'Pinned code fetched at run time (' + pinned.length + ')'), el('ul', {}, pinned.map(row))) : null,
      remote.length ? el('details', { class: 'items' }, el('summary', {}, 'Remote services (' + remote.length + ')'),
        el('ul', {}, remote.map((f) => el('li', {}, el('code', { class: 'wrap', text: f.package || '' }), el('span', { class: 'muted', text: ' (' + f.where + ')' }))))) : null);
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
    await whileReading($('installed-list'), state.installed, async () => {
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
      state.installed.updates = await readUpdates();
      state.installed.project = await readProject();
      renderInstalled();
    });
  }

  // readUpdates is what the daemon's last update check found (GET
  // /updates), or null: the notices are a hint, so a failure to read them
  // leaves the list as it is.
  async function readUpdates() {
    try {
      const res = await api('GET', '/updates');
      return res.status === 200 && res.body && Array.isArray(res.body.updates) ? res.body : null;
    } catch (err) {
      return null;
    }
  }

  // readProject is how the home stands against the lock of the project
  // the daemon serves (GET /project), or null: none served, or unreadable.
  async function readProject() {
    try {
      const res = await api('GET', '/project');
      return res.status === 200 && res.body ? res.body.project : null;
    } catch (err) {
      return null;
    }
  }

  // renderProject says whether the home matches the served project's
  // lock, and what differs: sync (with its own review and approval) makes
  // it match; lock --update pins what the project wants and the lock
  // lacks. The page applies neither.
  function renderProject() {
    const box = $('installed-project');
    const st = state.installed.project;
    clear(box);
    if (!st) {
      box.hidden = true;
      return;
    }
    box.append(el('p', { id: 'project-dir' }, 'Project ', el('code', { text: st.dir }), ': '));
    const head = box.firstChild;
    if (st.error) {
      head.append(el('span', { text: words(st.error) }));
    } else if (st.inSync) {
      head.append('this home matches its lock, ', el('code', { text: st.lock }), '.');
    } else {
      head.append('this home differs from its lock, ', el('code', { text: st.lock }), '.');
      const parts = [
        [st.missing, 'not installed'],
        [st.drifted.map((d) => d.name + ' (locked ' + d.locked.slice(0, 7) + ', installed ' + (d.installed || 'none').slice(0, 7) + ')'), 'at another commit'],
        [st.toggled, 'enabled or disabled unlike the lock'],
        [st.unlocked, 'wanted by the project but not locked yet: re-lock the project to pin them'],
      ];
      for (const [names, what] of parts) {
        if (names.length) box.append(el('p', { class: 'project-diff', text: names.join(', ') + ': ' + what + '.' }));
      }
      box.append(el('p', {}, 'In the project, ', el('code', { text: 'reasonix sync' }), ' plans what makes this home match, for review and approval.'));
    }
    if (st.extra && st.extra.length) {
      box.append(el('p', { class: 'muted', text: 'Installed here but not in the lock: ' + st.extra.join(', ') + ' (a sync that prunes removes them).' }));
    }
    box.className = 'notice project' + (st.inSync ? '' : ' warn');
    box.hidden = false;
  }

  // updateOf is the notice of installed plugin p: the update the last
  // check found for it, or undefined.
  function updateOf(p) {
    const u = state.installed.updates;
    return u ? u.updates.find((n) => (n.renamedFrom || n.name) === p.name) : undefined;
  }

  // renderUpdates says what the last update check found: how many plugins
  // could move, when it last succeeded, and what it could not check. Its
  // button opens the update review, which still needs approval.
  function renderUpdates() {
    const box = $('installed-updates');
    const u = state.installed.updates;
    clear(box);
    const moves = u ? u.updates.filter((n) => !n.dependency) : [];
    const unchecked = u ? u.couldNotCheck : [];
    if (!u || u.status === 'never' || !state.installed.plugins.length || (!moves.length && !unchecked.length && u.status === 'ok')) {
      box.hidden = true;
      return;
    }
    const at = (t) => (t ? new Date(t).toLocaleString() : 'never');
    if (moves.length) {
      box.append(el('p', { id: 'updates-count' }, plural(moves.length, 'update') + ' available: ', moves.map(nameOf).join(', '),
        ' (last checked ', at(u.lastSuccessAt), ').'));
    } else {
      box.append(el('p', { id: 'updates-count' }, 'No updates found at the last successful check (', at(u.lastSuccessAt), ').'));
    }
    if (u.status === 'skipped-offline') {
      box.append(el('p', { text: 'The last check, ' + at(u.checkedAt) + ', was skipped: offline, or no source answered.' }));
    } else if (u.status === 'failed') {
      box.append(el('p', { text: 'The last check, ' + at(u.checkedAt) + ', failed: ' + words(u.error || '') }));
    }
    if (unchecked.length) {
      box.append(el('p', { id: 'updates-unchecked', text: 'Could not check ' + unchecked.map((x) => x.name + ' (' + words(x.reason) + ')').join(', ') + '.' }));
    }
    if (moves.length) {
      box.append(el('p', { class: 'row' }, el('button', {
        type: 'button', class: 'primary', 'data-action': 'review-updates',
        onclick: () => planUpdate('installed', { all: true }, 'all installed plugins'),
      }, 'Review ' + plural(moves.length, 'update'))));
    }
    // Amber, as the marketplaces' "update available" badges: something
    // waits for a review, or the check is not a full answer.
    box.className = 'notice updates warn';
    box.hidden = false;
  }

  // whileReading marks a list busy while read redraws it (reads can
  // overlap: a tab switch and an operation's reload), so nothing — a
  // person's pointer or a test — acts on rows about to be replaced; the
  // count of finished reads is its data-reads.
  async function whileReading(box, st, read) {
    st.reading = (st.reading || 0) + 1;
    box.setAttribute('aria-busy', 'true');
    try {
      await read();
    } finally {
      st.reading--;
      st.reads = (st.reads || 0) + 1;
      box.dataset.reads = String(st.reads);
      if (!st.reading) box.setAttribute('aria-busy', 'false');
    }
  }

  function renderInstalled() {
    const root = clear($('installed-list'));
    const plugins = state.installed.plugins;
    $('installed-tools').hidden = !plugins.length;
    renderUpdates();
    renderProject();
    if (!plugins.length) {
      root.append(el('p', { class: 'muted', id: 'installed-empty' }, 'No plugin packages are installed. Add one from the Add screen.'));
    } else {
      plugins.forEach((p, i) => root.append(installedRow(p, i)));
    }
    setBusy('installed', state.busy.installed);
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
    }, el('span', { class: 'chev', 'aria-hidden': 'true' }, open ? '▾' : '▸'), ' ', el('span', { class: 'pname', text: nameOf(p) }),
    p.version ? el('span', { class: 'version', text: ' v' + p.version }) : null);
    row.append(el('header', { class: 'prow-head' },
      el('h3', {}, expander),
      el('span', { class: 'badge ' + (p.enabled ? 'on' : 'off'), text: p.enabled ? 'enabled' : 'disabled' }),
      el('span', { class: 'badge status-' + status, text: status }),
      p.runtime ? el('span', { class: 'badge risk-high', text: 'FULL TRUST runtime' }) : null,
      updateBadge(p),
      p.problems && p.problems.length ? el('span', { class: 'badge status-blocked', text: plural(p.problems.length, 'problem') }) : null,
      // What it needs and what needs it, without opening the row.
      p.dependencies && p.dependencies.length ? el('span', { class: 'badge deps', 'data-deps': 'needs', text: 'needs ' + p.dependencies.join(', ') }) : null,
      p.neededBy && p.neededBy.length ? el('span', { class: 'badge deps', 'data-deps': 'needed-by', text: 'needed by ' + p.neededBy.join(', ') }) : null,
      p.dependency ? el('span', { class: 'badge deps', text: 'dependency' }) : null,
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
        p.marketplace ? [el('dt', {}, 'Marketplace'), el('dd', { class: 'wrap', text: p.marketplaceName ? p.marketplaceName + ' (' + p.marketplace + ')' : p.marketplace })] : null,
        p.dependencies && p.dependencies.length ? [el('dt', {}, 'Needs'), el('dd', { class: 'wrap', text: p.dependencies.join(', ') })] : null,
        p.neededBy && p.neededBy.length ? [el('dt', {}, 'Needed by'), el('dd', { class: 'wrap', text: p.neededBy.join(', ') })] : null,
        p.dependency ? [el('dt', {}, 'Installed as'), el('dd', { text: 'a dependency (pruned once nothing needs it)' })] : null,
      ));
      if (p.problems && p.problems.length) {
        body.append(el('ul', { class: 'problems', 'aria-label': 'Errors' }, p.problems.map((x) => el('li', { text: words(x) }))));
      }
      body.append(contributions(p, true));
      body.append(el('div', { class: 'row actions' }, rowActions(p)));
    }
    row.append(body);
    return row;
  }

  // updateBadge marks a row the last update check found could move; it
  // opens that plugin's update review (the diff, then approval).
  function updateBadge(p) {
    const n = updateOf(p);
    if (!n) return null;
    const to = n.toVersion && n.toVersion !== n.fromVersion ? ' to v' + n.toVersion : '';
    return el('button', {
      type: 'button', class: 'badge update' + (n.riskRaised ? ' raised' : ''), 'data-action': 'review-update',
      title: 'Review the update of ' + p.name + (n.riskRaised ? ': it is riskier than what is installed' : ''),
      onclick: () => planUpdate('installed', { name: p.name }, p.name),
    }, 'update' + to + (n.riskRaised ? ', risk ' + n.previousRisk + ' → ' + n.risk : ''));
  }

  // rowActions are the buttons of an expanded row. Update shows the update
  // plan for review above the list; nothing changes before Apply.
  function rowActions(p) {
    return [
      el('button', { type: 'button', class: 'secondary', 'data-action': 'update', onclick: () => planUpdate('installed', { name: p.name }, p.name) },
        'Update'),
      el('button', { type: 'button', class: 'secondary', 'data-action': 'toggle', onclick: () => setEnabled(p, !p.enabled) },
        p.enabled ? 'Disable' : 'Enable'),
      el('button', { type: 'button', class: 'secondary', 'data-action': 'export', onclick: () => exportPlugin(p) }, 'Export'),
      el('button', { type: 'button', class: 'danger', 'data-action': 'remove', onclick: () => removePlugin(p) }, 'Remove'),
    ];
  }

  // SCREEN_PARTS are the parts of the screens with an update review: their
  // section, progress line, notice box and review panel, and what to load
  // again after an update was applied.
  const SCREEN_PARTS = {
    installed: { section: 'screen-installed', progress: 'installed-progress', notice: 'installed-notice', panel: 'installed-review', reload: () => loadInstalled() },
    markets: { section: 'screen-marketplaces', progress: 'markets-progress', notice: 'markets-notice', panel: 'markets-review', reload: () => loadMarkets() },
  };

  // setBusy disables a screen's controls while one of its requests runs
  // (and keeps those marked data-off disabled after).
  function setBusy(where, busy) {
    state.busy[where] = busy;
    const s = $(SCREEN_PARTS[where].section);
    s.setAttribute('aria-busy', busy ? 'true' : 'false');
    for (const b of s.querySelectorAll('button, input')) b.disabled = busy || b.dataset.off === 'true';
  }

  // busyOp runs fn with the screen busy; what goes wrong is said in its
  // notice box.
  async function busyOp(where, fn) {
    if (state.busy[where]) return;
    const parts = SCREEN_PARTS[where];
    setBusy(where, true);
    notice(parts.notice, '');
    try {
      await fn();
    } catch (err) {
      report(parts.notice, err);
    } finally {
      setBusy(where, false);
    }
  }


  // setEnabled enables or disables a plugin. Disabling one that enabled
  // plugins need asks first, naming them (what the CLI's --force is); when
  // the daemon finds others need it after all, it asks with their names.
  async function setEnabled(p, enabled) {
    let force = false;
    if (!enabled && p.neededBy && p.neededBy.length) {
      if (!(await confirmDisable(p.name, p.neededBy))) return;
      force = true;
    }
    for (;;) {
      let needers = null;
      await busyOp('installed', async () => {
        const res = await api('POST', '/plugins/enabled', { name: p.name, enabled, force });
        if (res.status === 422 && res.body && res.body.errorCode === 'install.conflict' && !force) {
          await loadInstalled();
          const now = state.installed.plugins.find((x) => x.name === p.name);
          needers = (now && now.neededBy) || [];
          if (!needers.length) notice('installed-notice', 'error', 'Could not disable ' + p.name + ': ' + errorText(res.body, 'status ' + res.status));
          return;
        }
        if (res.status !== 200) {
          notice('installed-notice', 'error', (enabled ? 'Could not enable ' : 'Could not disable ') + p.name + ': ' + errorText(res.body, 'status ' + res.status));
          return;
        }
        await loadInstalled();
        notice('installed-notice', 'ok', (enabled ? 'Enabled ' : 'Disabled ') + p.name + '. Sessions started from now on see the change.',
          ...((res.body && res.body.warnings) || []).map(words));
      });
      if (!needers || !needers.length) return;
      if (!(await confirmDisable(p.name, needers))) return;
      force = true;
    }
  }

  function confirmDisable(name, neededBy) {
    return confirmDialog('Disable ' + name + '?', neededBy.join(', ') + (neededBy.length === 1 ? ' needs ' : ' need ') + name +
      (neededBy.length === 1 ? ' and stays' : ' and stay') + ' enabled without it, which may break ' + (neededBy.length === 1 ? 'it.' : 'them.'), 'Disable');
  }

  function exportPlugin(p) {
    return busyOp('installed', async () => {
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

  function confirmRemove(name, neededBy) {
    let text = 'This uninstalls ' + name + ' and deletes its installed copy. A linked folder is left in place.';
    if (neededBy && neededBy.length) {
      text += ' ' + neededBy.join(', ') + (neededBy.length === 1 ? ' needs it and stays' : ' need it and stay') + ' installed without it.';
    }
    return confirmDialog('Remove ' + name + '?', text, 'Remove');
  }

  // confirmDialog asks a question in the modal dialog, Cancel first; it
  // resolves true only for the OK button (okLabel).
  async function confirmDialog(title, text, okLabel) {
    const d = $('confirm');
    $('confirm-title').textContent = visible(title);
    $('confirm-text').textContent = visible(text);
    $('confirm-ok').textContent = visible(okLabel);
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

  // removePlugin asks, naming the plugins that need it, then removes it.
  // The answer is what the CLI's --force is: when the daemon finds others
  // need it after all (installed since the list was read), it asks again
  // with their names rather than failing.
  async function removePlugin(p) {
    let neededBy = p.neededBy || [];
    if (!(await confirmRemove(p.name, neededBy))) return;
    for (;;) {
      let needers = null;
      await busyOp('installed', async () => {
        const res = await api('DELETE', '/plugins/' + encodeURIComponent(p.name) + (neededBy.length ? '?force=true' : ''));
        if (res.status === 422 && res.body && res.body.errorCode === 'install.conflict' && !neededBy.length) {
          await loadInstalled();
          const now = state.installed.plugins.find((x) => x.name === p.name);
          needers = (now && now.neededBy) || [];
          if (!needers.length) notice('installed-notice', 'error', 'Could not remove ' + p.name + ': ' + errorText(res.body, 'status ' + res.status));
          return;
        }
        if (res.status !== 200) {
          notice('installed-notice', 'error', 'Could not remove ' + p.name + ': ' + errorText(res.body, 'status ' + res.status));
          return;
        }
        state.installed.open.delete(p.name);
        await loadInstalled();
        const left = (res.body.warnings || []).map(words);
        notice('installed-notice', 'ok', 'Removed ' + p.name + '.', ...left);
      });
      if (!needers || !needers.length) return;
      if (!(await confirmRemove(p.name, needers))) return;
      neededBy = needers;
    }
  }

  function reloadRuntime() {
    return busyOp('installed', async () => {
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


  // ---- update review (Installed and Marketplaces) ---------------------------

  // planUpdate asks the daemon for an update plan (body as POST
  // /plugins/update takes it; what names it in words) and shows it for
  // review in the screen's panel. Nothing changes before Apply.
  async function planUpdate(where, body, what) {
    const parts = SCREEN_PARTS[where];
    if (state.busy[where]) return;
    notice(parts.notice, '');
    setBusy(where, true);
    let res;
    try {
      res = await withProgress(parts.progress, 'Checking for updates',
        { default: 'Update plan ready', 'up-to-date': 'Up to date', unchecked: 'Could not check every source', refused: 'Checked (nothing can be updated)', failed: 'Checking failed' },
        (pid) => api('POST', '/plugins/update', body, { progress: pid }), updateHost(body));
    } catch (err) {
      setBusy(where, false);
      report(parts.notice, err);
      return;
    }
    setBusy(where, false);
    const r = res.body;
    if (!r || !Array.isArray(r.actions) || (!r.ok && !r.actions.length)) {
      // Refused before any plan: the error says it all.
      $(parts.progress).hidden = true;
      notice(parts.notice, 'error', 'Could not plan the update of ' + what + ': ' + errorText(r, 'the daemon answered ' + res.status));
      return;
    }
    state.reviews[where] = { body, what, plan: r, result: null };
    renderReview(where);
    const head = $(where + '-update-title');
    if (head) head.focus();
  }

  // updateHost is the host an update of one plugin waits on ("" for many).
  function updateHost(body) {
    const p = body.name ? state.installed.plugins.find((x) => x.name === body.name) : null;
    return p ? hostOf(p.source) : '';
  }

  function closeReview(where) {
    state.reviews[where] = null;
    renderReview(where);
    $(SCREEN_PARTS[where].progress).hidden = true;
  }

  const RANK = { low: 0, medium: 1, high: 2 };

  function renderReview(where) {
    const parts = SCREEN_PARTS[where];
    const rv = state.reviews[where];
    const root = clear($(parts.panel));
    if (!rv) {
      root.hidden = true;
      return;
    }
    root.hidden = false;
    const r = rv.plan;
    const ready = r.actions.filter((a) => a.status === 'ready');
    // Plugins whose source could not be reached: what is said of them is
    // what was cached, never "up to date".
    const unchecked = r.actions.filter((a) => a.unchecked);
    const kept = r.actions.filter((a) => a.action === 'keep' && !a.unchecked);
    const other = r.actions.filter((a) => a.status !== 'ready' && a.action !== 'keep' && !a.unchecked);
    const upToDate = r.status === 'up-to-date' && !unchecked.length;
    const panel = el('section', {
      class: 'panel update-review' + (upToDate ? ' uptodate' : '') + (unchecked.length ? ' unchecked' : ''), id: where + '-update',
      'aria-labelledby': where + '-update-title', 'data-status': r.status || '',
    });
    panel.append(el('div', { class: 'review-head' },
      el('h3', { id: where + '-update-title', tabindex: '-1' }, 'Update ', el('span', { class: 'wrap', text: rv.what })),
      el('button', { type: 'button', class: 'quiet', 'data-action': 'close-review', onclick: () => closeReview(where) }, 'Close')));
    if (unchecked.length) panel.append(uncheckedNote(where, rv, unchecked, ready.length));
    if (upToDate) {
      const one = kept.length === 1 ? kept[0] : null;
      panel.append(el('p', { class: 'uptodate-note', id: where + '-uptodate' }, el('strong', {}, 'Up to date. '),
        one ? nameOf(one) + (one.commit ? ' is at commit ' + short(one.commit) : ' is where its source is') + ': there is nothing to update.'
          : 'All ' + plural(kept.length, 'plugin') + ' are at what their sources name now: there is nothing to update.'));
    } else {
      const counts = {};
      for (const a of r.actions) counts[a.unchecked ? 'not checked' : a.status] = (counts[a.unchecked ? 'not checked' : a.status] || 0) + 1;
      panel.append(el('dl', { class: 'facts' },
        el('dt', {}, 'Plan'), el('dd', {}, el('code', { id: where + '-plan-id', class: 'wrap', text: r.planId || '—' })),
        el('dt', {}, 'Plugins'), el('dd', {}, Object.entries(counts).map(([st, n]) => n + ' ' + (st === 'ready' ? 'to update' : st.replaceAll('-', ' '))).join(' · '))));
    }
    if (!r.ok && r.error && !unchecked.length) panel.append(el('p', { class: 'refused' }, el('strong', {}, 'Cannot be applied: '), errorText(r, '')));
    if (r.warnings && r.warnings.length) {
      panel.append(el('ul', { class: 'warnings', 'aria-label': 'Plan warnings' }, r.warnings.map((w) => el('li', { text: words(w) }))));
    }
    if (ready.length) {
      panel.append(el('div', { class: 'cards' + (ready.length === 1 ? ' one' : ''), id: where + '-update-cards' }, ready.map(updateCard)));
    }
    if (kept.length && !(upToDate && kept.length === 1 && !(kept[0].warnings || []).length)) {
      panel.append(el('div', { class: 'kept', id: where + '-kept' }, el('h4', {}, 'Up to date (' + kept.length + ')'),
        el('ul', { class: 'reasons' }, kept.map((a) => el('li', { 'data-name': a.name },
          el('strong', { text: nameOf(a) }), a.commit ? [' at commit ', el('code', { text: short(a.commit) })] : null,
          a.warnings && a.warnings.length ? el('ul', { class: 'warnings' }, a.warnings.map((w) => el('li', { text: words(w) }))) : null)))));
    }
    if (other.length) {
      panel.append(el('div', { class: 'skipped', id: where + '-not-updated' }, el('h4', {}, 'Not updated (' + other.length + ')'),
        el('ul', { class: 'reasons' }, other.map((a) => el('li', { 'data-name': a.name },
          el('span', { class: 'badge status-' + a.status, text: a.status }), ' ', el('strong', { text: nameOf(a) }), ': ',
          el('span', { class: 'reason', text: errorText(a, 'no reason given') }))))));
    }
    // Apply until it was tried; then what it did.
    if (rv.result) panel.append(updateResult(where, rv));
    else if (ready.length || (!upToDate && !unchecked.length)) panel.append(applyBar(where, rv, ready));
    root.append(panel);
    setBusy(where, state.busy[where]);
  }

  // uncheckedNote is the amber panel of plugins whose source could not be
  // reached: they were not checked, whatever the cache says of them.
  function uncheckedNote(where, rv, unchecked, moving) {
    const why = Array.from(new Set(unchecked.map((a) => a.unchecked)));
    return el('div', { class: 'unchecked-note', id: where + '-unchecked', role: 'status' },
      el('p', {}, el('strong', {}, 'Could not check ' + plural(unchecked.length, 'plugin') + ' (' + why.join(', ') + '). '),
        'Their sources could not be reached, so whether they have updates is not known: what is shown is what was cached.' +
        (moving ? ' The others were checked.' : '')),
      el('ul', { class: 'reasons' }, unchecked.map((a) => el('li', { 'data-name': a.name },
        el('span', { class: 'badge status-unchecked', text: 'could not check' }), ' ', el('strong', { text: nameOf(a) }),
        a.commit ? [' stays at commit ', el('code', { text: short(a.commit) })] : null,
        a.error ? [': ', el('span', { class: 'reason', text: errorText(a, '') })] : null))),
      el('p', { class: 'row' }, el('button', { type: 'button', class: 'secondary', 'data-action': 'check-again', onclick: () => planUpdate(where, rv.body, rv.what) }, 'Check again')));
  }

  // updateCard is one plugin that moves: from which commit to which, what
  // it changes in what the plugin contributes (the daemon's diff), and the
  // risk of approving it.
  function updateCard(a) {
    const prev = a.previous || {};
    const from = prev.commit || a.previousCommit;
    const card = el('article', { class: 'card ucard', 'data-name': a.name, 'aria-label': a.name });
    card.append(el('header', { class: 'card-head' },
      el('h4', { text: nameOf(a) }),
      a.version ? el('span', { class: 'version', text: (prev.version && prev.version !== a.version ? 'v' + prev.version + ' → ' : '') + 'v' + a.version }) : null,
      a.risk ? el('span', { class: 'badge risk-' + a.risk, text: a.risk + ' risk' }) : null,
      prev.risk && prev.risk !== a.risk ? el('span', { class: 'risk-was', text: 'was ' + prev.risk }) : null));
    // A plugin with no commit (a local folder) moves by its content digest.
    if (from || a.commit) {
      card.append(el('p', { class: 'move' }, 'Commit ', el('code', { class: 'old', text: short(from) || 'none' }), ' → ',
        el('code', { class: 'new', text: short(a.commit) || 'none' })));
    } else {
      card.append(el('p', { class: 'move' }, 'Content ', el('code', { class: 'old', text: shortDigest(prev.contentDigest) || 'none' }), ' → ',
        el('code', { class: 'new', text: shortDigest(a.contentDigest) || 'none' })));
    }
    const renamed = renameLine(a);
    if (renamed) card.append(renamed);
    const moved = sourceMove(a);
    if (moved) card.append(moved);
    if (a.description) card.append(el('p', { class: 'desc', text: a.description }));
    if (a.source) card.append(el('p', { class: 'meta wrap', text: a.source }));
    const deps = depsLine(a);
    if (deps) card.append(deps);
    if (prev.risk && RANK[a.risk] > RANK[prev.risk]) {
      card.append(el('p', { class: 'risk-raise' }, el('strong', {}, 'Riskier than what is installed: '),
        'approving it lets ' + a.name + ' do more (' + prev.risk + ' → ' + a.risk + ' risk).'));
    }
    const d = a.diff;
    // The move to another source has its own line above; the list is what
    // the plugin contributes.
    const changes = d ? [...(d.added || []).map((c) => changeRow('added', c)), ...(d.removed || []).map((c) => changeRow('removed', c)),
      ...(d.changed || []).filter((c) => c.kind !== 'source' && c.kind !== 'name').map((c) => changeRow('changed', c))] : [];
    if (changes.length) {
      card.append(el('div', { class: 'diff' }, el('h5', {}, 'What changes'), el('ul', { 'aria-label': 'Changes' }, changes)));
    } else {
      card.append(el('p', { class: 'nodiff' }, 'What it contributes stays the same.'));
    }
    if (a.runtime) card.append(fullTrust(a.runtime));
    card.append(el('details', { class: 'after' }, el('summary', {}, 'Everything it contributes after the update'), contributions(
      Object.assign({}, a, { warnings: [] }), true, true)));
    // The move is on the card already; the rest are the plugin's warnings.
    const commitMove = 'moves from ' + short(from) + ' to ' + short(a.commit);
    const warnings = (a.warnings || []).filter((w) => w !== commitMove);
    if (warnings.length) card.append(el('ul', { class: 'warnings', 'aria-label': 'Warnings' }, warnings.map((w) => el('li', { text: words(w) }))));
    if (a.error) card.append(el('p', { class: 'reason' }, el('strong', {}, a.status + ': '), errorText(a, '')));
    return card;
  }

  // renameLine says an update follows its marketplace's rename: the
  // installed plugin moves to its new name (the daemon's renamedFrom).
  function renameLine(a) {
    if (!a.renamedFrom) return null;
    return el('p', { class: 'rename', role: 'note' }, el('strong', {}, 'Renamed by its marketplace: '),
      el('code', { class: 'old', text: a.renamedFrom }), ' → ', el('code', { class: 'new', text: a.name }),
      '. Approving it moves the installed plugin to its new name.');
  }

  // sourceMove is the line that says an update or a replace moves a plugin
  // to another host, owner, repository or subfolder (the daemon's diff has
  // it as a change of kind "source"): approving it trusts another
  // publisher, so it stands on its own, never folded into the list.
  function sourceMove(a) {
    const c = ((a.diff && a.diff.changed) || []).find((x) => x.kind === 'source');
    if (!c) return null;
    const [from, to] = (c.detail || '').split(' → ');
    return el('p', { class: 'source-move', role: 'note' }, el('strong', {}, 'Moves to another source (' + c.name + ' changes): '),
      el('code', { class: 'old', text: from || '' }), ' → ', el('code', { class: 'new', text: to || '' }),
      '. Approving it installs code from a different place than what is installed.');
  }

  const KIND_WORDS = { source: 'source', skill: 'skill', command: 'command', agent: 'agent', hook: 'hook', mcpServer: 'MCP server', runtime: 'runtime', runtimeFetch: 'run-time fetch', env: 'credential reference' };
  const NAMED_KINDS = new Set(['skill', 'command', 'agent']); // their detail is a description

  function changeRow(how, c) {
    const verb = { added: 'adds', removed: 'removes', changed: 'changes' }[how];
    const sign = { added: '+', removed: '−', changed: '~' }[how];
    let detail = null;
    if (c.detail) detail = NAMED_KINDS.has(c.kind) ? [' — ', el('span', { text: c.detail })] : [' ', el('code', { class: 'wrap', text: c.detail })];
    return el('li', { class: 'change ' + how, 'data-kind': c.kind },
      el('span', { class: 'sign', 'aria-hidden': 'true' }, sign), ' ', verb + ' ' + (KIND_WORDS[c.kind] || c.kind) + ' ',
      el('strong', { text: c.name }), detail);
  }

  function applyBar(where, rv, ready) {
    const r = rv.plan;
    const can = r.ok && ready.length > 0;
    const why = can ? 'Applies exactly plan ' + (r.planId || '') + '. If a source moved since, the update is refused and nothing is written.'
      : 'This plan cannot be applied.';
    const trusted = ready.filter((a) => a.runtime).map(nameOf);
    let label = 'Apply update of ' + plural(ready.length, 'plugin') + (trusted.length ? ' and trust ' + trusted.join(', ') : '');
    if (ready.length === 1 && trusted.length) label = 'Update and trust ' + trusted[0];
    return approveBar({ id: where + '-apply', actions: ready, can, why, onclick: () => applyUpdate(where), label, inPanel: true });
  }

  async function applyUpdate(where) {
    const parts = SCREEN_PARTS[where];
    const rv = state.reviews[where];
    if (!rv || state.busy[where] || !rv.plan.ok || rv.result) return;
    setBusy(where, true);
    let res;
    try {
      res = await withProgress(parts.progress, 'Applying',
        { default: 'Update finished', applied: 'Updated', refused: 'Update refused', failed: 'Update failed' },
        (pid) => api('POST', '/plugins/install', { planId: rv.plan.planId }, { progress: pid }));
    } catch (err) {
      setBusy(where, false);
      report(parts.notice, err);
      return;
    }
    rv.result = res.body || { ok: false, status: 'failed', error: 'the daemon answered ' + res.status };
    setBusy(where, false);
    if (rv.result.applied) await parts.reload();
    renderReview(where);
    const out = $(where + '-update-result');
    if (out) out.focus();
  }

  function updateResult(where, rv) {
    const res = rv.result;
    const kind = res.applied ? (res.ok ? 'ok' : 'partial') : res.status === 'refused' ? 'refused' : 'error';
    const title = { ok: 'Updated', partial: 'Updated in part', refused: 'Update refused', error: 'Update failed' }[kind];
    const p = el('section', { class: 'result ' + kind, id: where + '-update-result', tabindex: '-1', 'data-status': res.status || '' },
      el('h4', {}, title));
    if (res.error) p.append(el('p', { class: 'reason', text: errorText(res, '') }));
    if (kind === 'refused') {
      p.append(el('p', {}, 'Nothing was written. See what the sources name now and review it again:'),
        el('button', { type: 'button', class: 'primary', 'data-action': 'review-again', onclick: () => planUpdate(where, rv.body, rv.what) }, 'Review again'));
    }
    const moved = (res.actions || []).filter((a) => a.action !== 'keep' && a.status !== 'skipped');
    if (res.applied && moved.length) {
      p.append(el('ul', { class: 'reasons' }, moved.map((a) => el('li', { 'data-name': a.name },
        el('span', { class: 'badge status-' + a.status, text: a.status }), ' ', el('strong', { text: a.name }),
        a.status === 'installed' ? [' now at commit ', el('code', { text: short(a.commit) })] : null,
        a.error ? [': ', el('span', { class: 'reason', text: errorText(a, '') })] : null))));
    }
    return p;
  }

  // ---- Marketplaces ------------------------------------------------------------

  async function showMarketplaces() {
    await loadMarkets();
  }

  // ago says how long ago an RFC 3339 time was, in words.
  function ago(iso) {
    const t = Date.parse(iso);
    if (!t) return 'at an unknown time';
    const s = Math.max(0, (Date.now() - t) / 1000);
    if (s < 60) return 'just now';
    if (s < 3600) return Math.floor(s / 60) + ' min ago';
    if (s < 86400) return plural(Math.floor(s / 3600), 'hour') + ' ago';
    return plural(Math.floor(s / 86400), 'day') + ' ago';
  }

  // loadMarkets lists the known marketplaces and what each offers; one
  // that cannot be listed says why without hiding the others.
  async function loadMarkets() {
    const m = state.markets;
    await whileReading($('markets-list'), m, () => readMarkets(m));
  }

  async function readMarkets(m) {
    let res;
    try {
      res = await api('GET', '/marketplaces');
      if (res.status !== 200 || !res.body || !Array.isArray(res.body.marketplaces)) {
        notice('markets-notice', 'error', 'Could not list the known marketplaces: ' + errorText(res.body, 'the daemon answered ' + res.status));
        return;
      }
      const list = res.body.marketplaces;
      const offers = {};
      const errors = {};
      await Promise.all(list.map(async (k) => {
        const r = await api('GET', '/plugins/available?marketplace=' + encodeURIComponent(k.name));
        if (r.status === 200 && r.body && Array.isArray(r.body.plugins)) offers[k.name] = r.body.plugins;
        else errors[k.name] = errorText(r.body, 'the daemon answered ' + r.status);
      }));
      m.list = list;
      m.offers = offers;
      m.errors = errors;
    } catch (err) {
      report('markets-notice', err);
      return;
    }
    // A pick that is no longer installable (installed since, or gone) is
    // dropped.
    for (const [name, picked] of Object.entries(m.selected)) {
      const ok = new Set((m.offers[name] || []).filter(installable).map((e) => e.name));
      for (const n of Array.from(picked)) if (!ok.has(n)) picked.delete(n);
    }
    renderMarkets();
  }

  const installable = (e) => e.status === 'ready' && !e.installed;

  // ENTRY_KINDS says where an entry's plugin lives, by its source kind.
  const ENTRY_KINDS = {
    relative: 'in the marketplace', github: 'GitHub repository', url: 'git repository', 'git-subdir': 'folder of a git repository',
    npm: 'npm package', pip: 'pip package', external: 'outside the marketplace', unknown: 'unknown source',
  };
  const ENTRY_PREFIX = /^marketplace entry "[^"]*"(?: \(plugins\[\d+\]\))?: /;

  function renderMarkets() {
    const root = clear($('markets-list'));
    const list = state.markets.list;
    if (!list.length) {
      root.append(el('p', { class: 'muted', id: 'markets-empty' },
        'No marketplace is known yet. Add one above; installing from a marketplace on the Add screen makes it known too.'));
    }
    list.forEach((k, i) => root.append(marketRow(k, i)));
    setBusy('markets', state.busy.markets);
  }

  function marketRow(k, i) {
    const m = state.markets;
    const offers = m.offers[k.name] || [];
    const installed = offers.filter((e) => e.installed);
    const updates = offers.filter((e) => e.updateAvailable);
    const open = m.open.has(k.name);
    const bodyID = 'market-body-' + i;
    const row = el('article', { class: 'prow market', 'data-name': k.name, 'aria-label': k.name });
    const expander = el('button', {
      type: 'button', class: 'expander', 'aria-expanded': open ? 'true' : 'false', 'aria-controls': bodyID,
      title: open ? 'Hide its plugins' : 'Browse its plugins',
      onclick: () => {
        if (m.open.has(k.name)) m.open.delete(k.name);
        else m.open.add(k.name);
        renderMarkets();
        const again = document.querySelector('#markets-list article[data-name="' + CSS.escape(k.name) + '"] .expander');
        if (again) again.focus();
      },
    }, el('span', { class: 'chev', 'aria-hidden': 'true' }, open ? '▾' : '▸'), ' ', el('span', { class: 'pname', text: k.name }));
    const where = [k.source, k.subdir && 'folder ' + k.subdir].filter(Boolean).join(' · ');
    row.append(el('header', { class: 'prow-head' },
      el('h3', {}, expander),
      m.errors[k.name] ? null : el('span', { class: 'badge', text: plural(offers.length, 'plugin') }),
      installed.length ? el('span', { class: 'badge on', text: installed.length + ' installed' }) : null,
      updates.length ? el('span', { class: 'badge update', text: plural(updates.length, 'update') + ' available' }) : null,
      el('span', { class: 'meta wrap' }, where, ' · ', k.commit ? ['commit ', el('code', { class: 'commit', text: short(k.commit) })] : 'local folder',
        ' · read ', el('time', { datetime: k.readAt, title: new Date(k.readAt).toLocaleString(), text: ago(k.readAt) })),
    ));
    if (m.errors[k.name]) row.append(el('p', { class: 'reason' }, 'Cannot list its plugins: ' + m.errors[k.name]));
    row.append(el('div', { class: 'row actions' },
      el('button', { type: 'button', class: 'secondary', 'data-action': 'update-market', onclick: () => updateMarket(k) }, 'Update'),
      installed.length ? el('button', {
        type: 'button', class: updates.length ? 'primary' : 'secondary', 'data-action': 'update-plugins',
        onclick: () => planUpdate('markets', { all: true, marketplace: k.name }, 'the plugins of ' + k.name),
      }, updates.length ? 'Review ' + plural(updates.length, 'update') : 'Check ' + installed.length + ' installed for updates') : null,
      el('button', { type: 'button', class: 'danger', 'data-action': 'remove-market', onclick: () => removeMarket(k) }, 'Remove')));
    const body = el('div', { id: bodyID, class: 'prow-body', hidden: !open });
    if (open) {
      if (k.description) body.append(el('p', { class: 'desc', text: k.description }));
      body.append(el('ul', { class: 'entries', 'aria-label': 'Plugins of ' + k.name }, offers.map((e) => entryRow(k, e))));
      if (offers.some(installable)) body.append(pickBar(k));
    }
    row.append(body);
    return row;
  }

  function picked(name) {
    const m = state.markets;
    if (!m.selected[name]) m.selected[name] = new Set();
    return m.selected[name];
  }

  // entryRow is one plugin a marketplace offers, with what is installed of
  // it; an installable one has a checkbox for the bulk install.
  function entryRow(k, e) {
    const li = el('li', { class: 'entry', 'data-name': e.name });
    const head = el('div', { class: 'entry-head' });
    if (installable(e)) {
      const id = 'pick-' + newID();
      head.append(el('input', {
        type: 'checkbox', id, 'data-name': e.name, checked: picked(k.name).has(e.name), 'aria-label': 'Select ' + e.name,
        onchange: (ev) => {
          if (ev.target.checked) picked(k.name).add(e.name);
          else picked(k.name).delete(e.name);
          renderMarkets();
          const box = document.querySelector('#markets-list article[data-name="' + CSS.escape(k.name) + '"] input[data-name="' + CSS.escape(e.name) + '"]');
          if (box) box.focus();
        },
      }), el('label', { for: id, class: 'ename', text: nameOf(e) }));
    } else {
      head.append(el('span', { class: 'ename', text: nameOf(e) }));
    }
    if (e.version) head.append(el('span', { class: 'version', text: 'v' + e.version }));
    let mark;
    if (e.updateAvailable) {
      mark = [el('span', { class: 'badge update', text: 'update available' }), ' ',
        el('span', { class: 'meta' }, 'installed ', e.installedAs ? ['as ', el('code', { text: e.installedAs }), ' (renamed) '] : null,
          el('code', { text: short(e.installedCommit) }), ' → ', el('code', { text: short(e.commit) }))];
    } else if (e.installed) {
      mark = [el('span', { class: 'badge on', text: 'installed' }), e.installedCommit ? [' ', el('span', { class: 'meta' }, 'at ', el('code', { text: short(e.installedCommit) }))] : null];
    } else if (e.status === 'ready') {
      mark = el('span', { class: 'badge status-ready', text: 'not installed' });
    } else {
      mark = el('span', { class: 'badge status-' + (e.status === 'skipped' ? 'skipped' : 'blocked'), text: e.status });
    }
    head.append(el('span', { class: 'marks' }, mark));
    li.append(head);
    if (e.description) li.append(el('p', { class: 'desc', text: e.description }));
    const meta = [ENTRY_KINDS[e.kind] || e.kind, e.status === 'ready' ? (e.commit ? 'commit ' + short(e.commit) : 'resolved when planned') : null].filter(Boolean);
    if (meta.length) li.append(el('p', { class: 'meta', text: meta.join(' · ') }));
    // The reason names the entry again; its row already does.
    if (e.reason) li.append(el('p', { class: 'reason', text: words(String(e.reason).replace(ENTRY_PREFIX, '')) }));
    return li;
  }

  function pickBar(k) {
    const offers = state.markets.offers[k.name] || [];
    const all = offers.filter(installable).map((e) => e.name);
    const sel = picked(k.name);
    const names = all.filter((n) => sel.has(n));
    return el('div', { class: 'selection pick-bar' },
      el('span', { class: 'pick-count' }, 'Selected ' + names.length + ' of the ' + plural(all.length, 'plugin') + ' not installed'),
      el('button', { type: 'button', class: 'quiet', onclick: () => { state.markets.selected[k.name] = new Set(all); renderMarkets(); } }, 'Select all'),
      el('button', { type: 'button', class: 'quiet', onclick: () => { state.markets.selected[k.name] = new Set(); renderMarkets(); } }, 'Select none'),
      el('button', { type: 'button', class: 'primary', 'data-action': 'review-install', disabled: !names.length, onclick: () => reviewInstall(k, names) },
        names.length ? 'Review install of ' + plural(names.length, 'plugin') : 'Select plugins to install'));
  }

  // reviewInstall plans the picked entries of a known marketplace, by its
  // name, on the Add screen: one plan, reviewed there, installed by its
  // planId.
  function reviewInstall(k, names) {
    const add = state.add;
    if (add.busy || !names.length) return;
    add.full = null;
    add.shown = null;
    add.result = null;
    add.selected = new Set();
    add.from = 'marketplaces';
    renderPlan();
    $('source').value = k.name;
    location.hash = '#add';
    planSource(k.name, names.slice().sort());
  }

  function addMarket(source) {
    source = source.trim();
    if (!source) {
      notice('markets-notice', 'error', 'Enter the source of a marketplace: a repository, a folder of one, a git URL or an absolute local path.');
      $('market-source').focus();
      return;
    }
    return busyOp('markets', async () => {
      const known = new Set(state.markets.list.map((k) => k.name));
      pending('markets-progress', 'Reading ' + source + '…');
      const res = await api('POST', '/marketplaces', { source });
      if (res.status !== 200 || !res.body || !res.body.marketplace) {
        settled('markets-progress');
        const better = window.ReasonixWords.suggestion(res.body && res.body.error);
        notice('markets-notice', 'error', el('p', {}, 'Could not add ' + source + ': ' + errorText(res.body, 'the daemon answered ' + res.status)),
          better ? el('p', { class: 'row notice-actions' }, el('button', {
            type: 'button', class: 'primary', 'data-action': 'use-suggestion', 'data-source': better,
            onclick: () => {
              $('market-source').value = better;
              addMarket(better);
            },
          }, 'Add ', el('code', { text: better }), ' instead')) : null);
        return;
      }
      const k = res.body.marketplace;
      settled('markets-progress');
      state.markets.open.add(k.name);
      $('market-source').value = '';
      await loadMarkets();
      const at = k.commit ? ' at commit ' + short(k.commit) : '';
      notice('markets-notice', 'ok', (known.has(k.name) ? k.name + ' was known already; read it again' : 'Added ' + k.name) + at + ': ' +
        plural(k.entries, 'plugin') + '. Pick plugins below to install them.', ...(k.warnings || []).map(words));
      const row = document.querySelector('#markets-list article[data-name="' + CSS.escape(k.name) + '"] .expander');
      if (row) row.focus();
    });
  }

  function updateMarket(k) {
    return busyOp('markets', async () => {
      pending('markets-progress', 'Reading ' + k.name + ' at its branch head…');
      const res = await api('POST', '/marketplaces/' + encodeURIComponent(k.name) + '/update');
      const up = res.body && Array.isArray(res.body.marketplaces) ? res.body.marketplaces[0] : null;
      if (res.status !== 200 || !up) {
        settled('markets-progress');
        notice('markets-notice', 'error', 'Could not update ' + k.name + ': ' + errorText(res.body, 'the daemon answered ' + res.status));
        return;
      }
      settled('markets-progress');
      await loadMarkets();
      const updates = (state.markets.offers[k.name] || []).filter((e) => e.updateAvailable).length;
      if (up.unchecked) {
        // Its host could not be reached: nothing was read, nothing is said
        // to be current.
        notice('markets-notice', 'warn', el('p', { id: 'market-unchecked' }, el('strong', {}, 'Could not check ' + k.name + ' (' + up.unchecked + '). '),
          'Its source could not be reached: what is shown is what was read before' + (up.commit ? ', at ' + short(up.commit) : '') + '.'),
        ...(up.warnings || []).map(words));
        return;
      }
      let text;
      if (!up.commit) text = k.name + ' was read again (a local folder has no commit).';
      else if (up.changed) text = k.name + ' moved from ' + (short(up.previousCommit) || 'none') + ' to ' + short(up.commit) + '.';
      else text = k.name + ' is unchanged at ' + short(up.commit) + '.';
      if (updates) text += ' ' + (updates === 1 ? '1 installed plugin has an update' : updates + ' installed plugins have updates') + ': review them before anything changes.';
      notice('markets-notice', 'ok', text, ...(up.warnings || []).map(words));
    });
  }

  async function removeMarket(k) {
    const ok = await confirmDialog('Remove marketplace ' + k.name + '?',
      'This forgets ' + k.name + ' (' + k.source + '). Nothing is uninstalled.', 'Remove');
    if (!ok) return;
    let force = false;
    for (;;) {
      let conflict = null;
      await busyOp('markets', async () => {
        const res = await api('DELETE', '/marketplaces/' + encodeURIComponent(k.name) + (force ? '?force=true' : ''));
        if (res.status === 422 && res.body && res.body.errorCode === 'install.conflict' && !force) {
          conflict = res.body;
          return;
        }
        if (res.status !== 200) {
          notice('markets-notice', 'error', 'Could not remove ' + k.name + ': ' + errorText(res.body, 'the daemon answered ' + res.status));
          return;
        }
        state.markets.open.delete(k.name);
        delete state.markets.selected[k.name];
        const rv = state.reviews.markets;
        if (rv && rv.body.marketplace === k.name) closeReview('markets');
        await loadMarkets();
        const kept = res.body.unlinked || [];
        notice('markets-notice', 'ok', 'Removed ' + k.name + '.' + (kept.length ? ' ' + kept.join(', ') + ' stay installed, unlinked from it: update keeps them at their pinned sources.' : ''));
      });
      if (!conflict) return;
      // Plugins came from it: removing it anyway keeps them, unlinked.
      const users = (state.markets.offers[k.name] || []).filter((e) => e.installed).map((e) => e.name);
      const again = await confirmDialog('Installed plugins came from ' + k.name,
        (users.length ? users.join(', ') + (users.length === 1 ? ' was' : ' were') : 'Installed plugins were') + ' installed from ' + k.name +
        '. Remove it anyway? They stay installed, unlinked from it: update then keeps them at their pinned sources.', 'Remove anyway');
      if (!again) return;
      force = true;
    }
  }

  // ---- search ------------------------------------------------------------------

  // The search box looks through the installed plugins and the plugins the
  // known marketplaces offer, as read when the search screen opens (one
  // read of each list, then every keystroke filters what was read).

  // haystack is the text a plugin is found by, lower case.
  function haystack(parts) {
    return parts.flat(Infinity).filter(Boolean).join('\n').toLowerCase();
  }

  const installedText = (p) => haystack([p.name, p.displayName, p.description, p.source, p.marketplaceName, p.version,
    ['skills', 'commands', 'agents', 'mcpServers'].map((k) => (p[k] || []).map((x) => [x.name, x.invocation, x.description]))]);
  const entryText = (k, e) => haystack([e.name, e.displayName, e.description, k.name, e.kind, e.version]);

  let searchReads = 0; // reads of the lists under way

  async function showSearch() {
    searchReads++;
    $('screen-search').setAttribute('aria-busy', 'true');
    renderSearch();
    try {
      await Promise.all([loadInstalled(), loadMarkets()]);
    } finally {
      searchReads--;
    }
    if (!searchReads) $('screen-search').setAttribute('aria-busy', 'false');
    renderSearch();
  }

  // search runs on every change of the box: it opens the search screen
  // (reading the lists once) or filters what was read.
  function search() {
    if (location.hash !== '#search') {
      location.hash = '#search';
      return; // route() shows the screen, which reads the lists and renders
    }
    // Until route() has shown the screen (hashchange comes later), the
    // lists are not read: it renders once they are.
    if (!$('screen-search').hidden) renderSearch();
  }

  function renderSearch() {
    if (searchReads) {
      // Results from half-read lists would miss what is still coming.
      $('search-summary').textContent = 'Reading the installed plugins and the known marketplaces…';
      return;
    }
    const q = $('search').value.trim();
    const terms = q.toLowerCase().split(/\s+/).filter(Boolean);
    const hit = (text) => terms.every((t) => text.includes(t));
    const installed = terms.length ? state.installed.plugins.filter((p) => hit(installedText(p))) : [];
    const entries = [];
    if (terms.length) {
      for (const k of state.markets.list) {
        for (const e of state.markets.offers[k.name] || []) if (hit(entryText(k, e))) entries.push([k, e]);
      }
    }
    $('search-installed').hidden = !installed.length;
    $('search-market').hidden = !entries.length;
    clear($('search-installed-list')).append(...installed.map(installedResult));
    clear($('search-market-list')).append(...entries.map(([k, e]) => entryResult(k, e)));
    let summary = 'Type in the search box to find a plugin.';
    if (terms.length) {
      summary = installed.length || entries.length
        ? plural(installed.length, 'installed plugin') + ' and ' + plural(entries.length, 'marketplace entry', 'marketplace entries') + ' match “' + q + '”.'
        : 'Nothing installed or offered by a known marketplace matches “' + q + '”.';
    }
    $('search-summary').textContent = visible(summary);
  }

  function installedResult(p) {
    return el('li', { class: 'result-row', 'data-name': p.name, 'data-kind': 'installed' },
      el('div', { class: 'entry-head' }, el('strong', { class: 'ename', text: nameOf(p) }),
        p.version ? el('span', { class: 'version', text: 'v' + p.version }) : null,
        el('span', { class: 'badge ' + (p.enabled ? 'on' : 'off'), text: p.enabled ? 'enabled' : 'disabled' }),
        p.runtime ? el('span', { class: 'badge risk-high', text: 'FULL TRUST runtime' }) : null,
      updateBadge(p),
        p.marketplaceName ? el('span', { class: 'meta', text: 'from ' + p.marketplaceName }) : null,
        el('button', {
          type: 'button', class: 'quiet', 'data-action': 'show-installed',
          onclick: () => {
            state.installed.open.add(p.name);
            location.hash = '#installed';
          },
        }, 'Show')),
      p.description ? el('p', { class: 'desc', text: p.description }) : null);
  }

  function entryResult(k, e) {
    let mark;
    if (e.installed) mark = el('span', { class: 'badge on', text: 'installed' });
    else if (e.status === 'ready') mark = el('span', { class: 'badge status-ready', text: 'not installed' });
    else mark = el('span', { class: 'badge status-' + (e.status === 'skipped' ? 'skipped' : 'blocked'), text: e.status });
    const act = installable(e)
      ? el('button', { type: 'button', class: 'secondary', 'data-action': 'review-install', onclick: () => reviewInstall(k, [e.name]) }, 'Review install')
      : e.installed ? el('button', {
        type: 'button', class: 'quiet', 'data-action': 'show-installed',
        onclick: () => {
          state.installed.open.add(e.name);
          location.hash = '#installed';
        },
      }, 'Show') : null;
    return el('li', { class: 'result-row', 'data-name': e.name, 'data-market': k.name, 'data-kind': 'entry' },
      el('div', { class: 'entry-head' }, el('strong', { class: 'ename', text: nameOf(e) }), el('span', { class: 'meta', text: '@' + k.name }),
        e.version ? el('span', { class: 'version', text: 'v' + e.version }) : null, mark, act),
      e.description ? el('p', { class: 'desc', text: e.description }) : null,
      e.reason ? el('p', { class: 'reason', text: words(String(e.reason).replace(ENTRY_PREFIX, '')) }) : null);
  }

  // ---- wiring ----------------------------------------------------------------

  document.addEventListener('DOMContentLoaded', () => {
    $('plan-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      state.add.from = null;
      if ($('source').value.trim() !== state.add.source) state.add.config = {};
      planSource($('source').value);
    });
    $('search-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      search();
    });
    $('search').addEventListener('input', search);
    $('market-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      addMarket($('market-source').value);
    });
    $('update-all').addEventListener('click', () => planUpdate('installed', { all: true }, 'all installed plugins'));
    $('reload').addEventListener('click', reloadRuntime);
    $('signout').addEventListener('click', signOut);
    $('signin-reload').addEventListener('click', () => location.reload());
    window.addEventListener('hashchange', () => {
      if (location.hash.startsWith(SIGNIN_FRAGMENT)) boot();
      else route();
    });
    window.addEventListener('storage', storageChanged);
    boot();
  });
})();
