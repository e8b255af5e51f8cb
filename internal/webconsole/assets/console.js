// The openkeel-ironic web console. Every value shown comes from the API
// as JSON and is put into the page as text (textContent, never markup),
// so that a node field holding markup stays text. The page's Content
// Security Policy allows no inline script and no other origin.
'use strict';

(function () {
  const API_VERSION = 'latest';
  const CHANGES = '/openkeel/v1/changes';
  const FLEET = '/openkeel/v1/fleet';
  const POLL_MS = 3000;
  const RECONNECT_MS = 3000;
  // A read that crossed changes from the stream is read again, this many
  // times at most: on a node changing without pause the page then shows
  // the last read and the changes the stream brings after it.
  const MAX_REREADS = 5;
  const RELEASE_POLL_MS = 1000;
  const PAGE_SIZES = [10, 25, 50, 100];
  const AUTH_KEY = 'openkeel.console.auth';

  // Provision verbs offered on a node page, with the states upstream's
  // state machine accepts each from; the API has the last word.
  const PROVISION = [
    { target: 'manage', label: 'Manage', from: ['enroll', 'available', 'adopt failed', 'inspect failed', 'clean failed'] },
    { target: 'provide', label: 'Provide', from: ['manageable'] },
    { target: 'inspect', label: 'Inspect', from: ['manageable', 'inspect failed'] },
    { target: 'active', label: 'Deploy', from: ['available', 'deploy failed'] },
    { target: 'deleted', label: 'Undeploy', from: ['active', 'deploy failed', 'error', 'rescue', 'rescue failed', 'unrescue failed', 'service failed'] },
    { target: 'clean', label: 'Clean…', from: ['manageable'], steps: true },
  ];
  const BOOT_DEVICES = ['pxe', 'disk', 'cdrom', 'bios', 'safe', 'wanboot'];

  let config = { auth_strategy: 'noauth', keystone_login: false };
  const state = { view: null, markers: [] };

  // ---- DOM helpers: text only ------------------------------------------

  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'dataset') Object.assign(e.dataset, v);
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else if (k === 'text') e.textContent = v;
      else e.setAttribute(k, v === true ? '' : String(v));
    }
    for (const c of children.flat()) {
      if (c === undefined || c === null || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  function show(target, ...children) {
    target.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  }

  function display(v) {
    if (v === null || v === undefined || v === '') return '—';
    if (typeof v === 'object') return JSON.stringify(v, null, 2);
    return String(v);
  }

  function valueCell(v) {
    return typeof v === 'object' && v !== null ? el('td', {}, el('pre', { text: display(v) })) : el('td', { text: display(v) });
  }

  function badge(text, cls) {
    return el('span', { class: 'badge ' + (cls || ''), text: display(text) });
  }

  function stateClass(s) {
    if (!s) return '';
    if (s === 'active') return 'active';
    if (s.endsWith('failed') || s === 'error') return 'failed';
    return '';
  }

  // ---- authentication --------------------------------------------------

  function credentials() {
    try {
      return JSON.parse(sessionStorage.getItem(AUTH_KEY) || 'null');
    } catch (e) {
      return null;
    }
  }

  function setCredentials(c) {
    if (c) sessionStorage.setItem(AUTH_KEY, JSON.stringify(c));
    else sessionStorage.removeItem(AUTH_KEY);
    renderWho();
  }

  function authHeaders() {
    const c = credentials();
    if (!c) return {};
    if (c.kind === 'token') return { 'X-Auth-Token': c.token };
    if (c.kind === 'basic') return { Authorization: 'Basic ' + c.basic };
    return {};
  }

  function renderWho() {
    const c = credentials();
    const who = document.getElementById('who');
    const out = document.getElementById('logout');
    if (config.auth_strategy === 'noauth') {
      who.textContent = 'noauth';
      out.hidden = true;
      return;
    }
    who.textContent = c ? (c.user ? c.user : 'token') : '';
    out.hidden = !c;
  }

  // ---- API -------------------------------------------------------------

  // faultText is the message of an API error body: upstream's envelope
  // holds a JSON string with faultstring (or a framework error's
  // description).
  function faultText(body, status) {
    if (body && typeof body.error_message === 'string') {
      try {
        const f = JSON.parse(body.error_message);
        return f.faultstring || f.description || f.title || body.error_message;
      } catch (e) {
        return body.error_message;
      }
    }
    return 'HTTP ' + status;
  }

  class APIError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  async function api(method, path, body) {
    const headers = Object.assign({ 'X-OpenStack-Ironic-API-Version': API_VERSION, Accept: 'application/json' }, authHeaders());
    const init = { method, headers, credentials: 'omit' };
    if (body !== undefined) {
      headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const res = await fetch(path, init);
    let data = null;
    const text = await res.text();
    if (text) {
      try {
        data = JSON.parse(text);
      } catch (e) {
        data = null;
      }
    }
    if (res.status === 401 && config.auth_strategy !== 'noauth') {
      // Expired or revoked credentials: the stream goes with them.
      setCredentials(null);
      live.stop();
      location.hash = '#/login';
      throw new APIError(401, 'authentication required');
    }
    if (!res.ok) throw new APIError(res.status, faultText(data, res.status));
    return data;
  }

  // problem renders an error in place of what could not be read: a 403
  // says only that the caller may not see it.
  function problem(err, what) {
    if (err instanceof APIError && err.status === 403) return el('p', { class: 'denied', text: what + ': not permitted' });
    if (err instanceof APIError && err.status === 404) return el('p', { class: 'muted', text: what + ': none' });
    if (err instanceof APIError && err.status === 406) return el('p', { class: 'muted', text: what + ': not available in this API version' });
    return el('p', { class: 'error', text: what + ': ' + (err && err.message ? err.message : String(err)) });
  }

  // ---- live updates ----------------------------------------------------

  // The change stream is read with fetch rather than EventSource, which
  // cannot send X-Auth-Token or Authorization. A stream that answers 404
  // (a server without it) or fails leaves the page re-reading the current
  // view every POLL_MS instead.
  const live = {
    mode: 'off', events: 0, lastId: null, abort: null, pollTimer: null, retryTimer: null,
    setMode(mode) {
      this.mode = mode;
      const e = document.getElementById('live');
      e.dataset.mode = mode;
      e.textContent = mode === 'stream' ? 'live: stream' : mode === 'polling' ? 'live: polling every ' + POLL_MS / 1000 + ' s' : 'live: ' + mode;
    },
    count() {
      this.events++;
      document.getElementById('live').dataset.events = String(this.events);
    },
    startPolling() {
      if (this.pollTimer) return;
      this.pollTimer = setInterval(() => {
        if (state.view && state.view.refresh) state.view.refresh();
      }, POLL_MS);
    },
    stopPolling() {
      clearInterval(this.pollTimer);
      this.pollTimer = null;
    },
    stop() {
      if (this.abort) this.abort.abort();
      this.abort = null;
      clearTimeout(this.retryTimer);
      this.stopPolling();
      this.setMode('off');
    },
    async start() {
      this.stop();
      const ctrl = new AbortController();
      this.abort = ctrl;
      const headers = Object.assign({ Accept: 'text/event-stream' }, authHeaders());
      if (this.lastId) headers['Last-Event-ID'] = this.lastId;
      let res;
      try {
        res = await fetch(CHANGES, { headers, signal: ctrl.signal, credentials: 'omit', cache: 'no-store' });
      } catch (e) {
        if (ctrl.signal.aborted) return;
        return this.retry();
      }
      if (res.status === 404 || res.status === 405) {
        this.setMode('polling');
        this.startPolling();
        return;
      }
      if (!res.ok || !res.body) return this.retry();
      this.stopPolling();
      this.setMode('stream');
      try {
        await this.read(res.body.getReader());
      } catch (e) {
        if (ctrl.signal.aborted) return;
      }
      if (!ctrl.signal.aborted) this.retry();
    },
    // retry polls until the stream is back, then resumes it from the
    // last event seen.
    retry() {
      this.setMode('polling');
      this.startPolling();
      clearTimeout(this.retryTimer);
      this.retryTimer = setTimeout(() => this.start(), RECONNECT_MS);
    },
    async read(reader) {
      const decoder = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buf.search(/\r?\n\r?\n/)) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut).replace(/^\r?\n\r?\n/, '');
          this.dispatch(block);
        }
      }
    },
    dispatch(block) {
      let id = null, event = 'message';
      const data = [];
      for (const line of block.split(/\r?\n/)) {
        if (line === '' || line.startsWith(':')) continue;
        const i = line.indexOf(':');
        const field = i < 0 ? line : line.slice(0, i);
        const value = i < 0 ? '' : line.slice(i + 1).replace(/^ /, '');
        if (field === 'id') id = value;
        else if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
      }
      if (id !== null) this.lastId = id;
      if (!data.length) return;
      let change;
      try {
        change = JSON.parse(data.join('\n'));
      } catch (e) {
        return;
      }
      change.event = event;
      this.count();
      if (state.view && state.view.onChange) state.view.onChange(change);
    },
  };

  // readSettled reads with read() until no change from the stream was
  // shown while the read was in flight (shown() counts them): such a read
  // may hold what it reads as it was before that change. MAX_REREADS
  // reads at most; an error of read() is the caller's.
  async function readSettled(read, shown) {
    for (let tries = 1; ; tries++) {
      const seen = shown();
      const data = await read();
      if (shown() === seen || tries === MAX_REREADS) return data;
    }
  }

  function debounce(fn, ms) {
    let t = null;
    return () => {
      clearTimeout(t);
      t = setTimeout(fn, ms);
    };
  }

  // ---- routing -----------------------------------------------------------

  function parseHash() {
    const h = location.hash.replace(/^#/, '') || '/';
    const [path, query] = h.split('?');
    return { parts: path.split('/').filter(Boolean).map(decodeURIComponent), params: new URLSearchParams(query || '') };
  }

  function route() {
    const { parts, params } = parseHash();
    const main = document.getElementById('view');
    for (const a of document.querySelectorAll('header nav a')) a.classList.remove('active');
    if (config.auth_strategy !== 'noauth' && !credentials() && parts[0] !== 'login') {
      location.hash = '#/login';
      return;
    }
    let view;
    if (parts[0] === 'login') view = loginView(main);
    else if (parts[0] === 'nodes') view = nodesView(main, params);
    else if (parts[0] === 'node' && parts[1]) view = nodeView(main, parts[1]);
    else view = overviewView(main);
    state.view = view;
    const nav = { overview: 'nav-overview', nodes: 'nav-nodes', node: 'nav-nodes' }[view.name];
    if (nav) document.getElementById(nav).classList.add('active');
    document.body.dataset.view = view.name;
    view.refresh();
  }

  // ---- login -------------------------------------------------------------

  function loginView(main) {
    live.stop();
    const status = el('p', { class: 'error', id: 'login-error' });
    const forms = [];
    if (config.auth_strategy === 'http_basic') {
      const user = el('input', { id: 'login-user', autocomplete: 'username', required: true });
      const pass = el('input', { id: 'login-password', type: 'password', autocomplete: 'current-password', required: true });
      forms.push(el('form', { class: 'login card', id: 'login-basic', onsubmit: async (ev) => {
        ev.preventDefault();
        // UTF-8 before base64, as the API decodes the header.
        const bytes = new TextEncoder().encode(user.value + ':' + pass.value);
        setCredentials({ kind: 'basic', user: user.value, basic: btoa(String.fromCharCode(...bytes)) });
        await afterLogin(status);
      } }, el('h2', { text: 'HTTP basic authentication' }),
      el('label', {}, 'User', user), el('label', {}, 'Password', pass), el('button', { type: 'submit', class: 'primary', text: 'Log in' })));
    }
    if (config.auth_strategy === 'keystone') {
      if (config.keystone_login) {
        const f = {
          username: el('input', { id: 'login-user', autocomplete: 'username', required: true }),
          password: el('input', { id: 'login-password', type: 'password', autocomplete: 'current-password', required: true }),
          user_domain: el('input', { id: 'login-user-domain', placeholder: 'Default' }),
          project: el('input', { id: 'login-project' }),
          project_domain: el('input', { id: 'login-project-domain', placeholder: 'Default' }),
          system: el('input', { id: 'login-system', type: 'checkbox' }),
        };
        forms.push(el('form', { class: 'login card', id: 'login-keystone', onsubmit: async (ev) => {
          ev.preventDefault();
          const body = {};
          for (const [k, input] of Object.entries(f)) body[k] = input.type === 'checkbox' ? input.checked : input.value;
          try {
            const res = await fetch('login', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), credentials: 'omit' });
            const data = await res.json().catch(() => null);
            if (!res.ok) {
              status.textContent = 'Login failed: ' + faultText(data, res.status);
              return;
            }
            setCredentials({ kind: 'token', token: data.token, user: f.username.value, expires_at: data.expires_at });
            await afterLogin(status);
          } catch (e) {
            status.textContent = 'Login failed: ' + e.message;
          }
        } }, el('h2', { text: 'Keystone' }),
        el('label', {}, 'User', f.username), el('label', {}, 'Password', f.password), el('label', {}, 'User domain', f.user_domain),
        el('label', {}, 'Project', f.project), el('label', {}, 'Project domain', f.project_domain),
        el('label', {}, f.system, ' System scope (instead of a project)'),
        el('button', { type: 'submit', class: 'primary', text: 'Log in' })));
      }
      const token = el('input', { id: 'login-token', type: 'password', required: true });
      forms.push(el('form', { class: 'login card', id: 'login-token-form', onsubmit: async (ev) => {
        ev.preventDefault();
        setCredentials({ kind: 'token', token: token.value.trim() });
        await afterLogin(status);
      } }, el('h2', { text: 'Keystone token' }), el('label', {}, 'Token (X-Auth-Token)', token),
      el('button', { type: 'submit', class: 'primary', text: 'Use token' })));
    }
    return {
      name: 'login',
      refresh() {
        if (config.auth_strategy === 'noauth') {
          location.hash = '#/';
          return;
        }
        show(main, el('h1', { text: 'Log in' }), forms, status);
      },
    };
  }

  async function afterLogin(status) {
    try {
      await api('GET', '/v1/nodes?limit=1&fields=uuid');
    } catch (e) {
      if (!(e instanceof APIError) || e.status === 401) {
        setCredentials(null);
        status.textContent = 'Login failed: ' + e.message;
        return;
      }
      // 403: valid credentials that may not list nodes; the pages say
      // what is not permitted.
    }
    live.start();
    location.hash = '#/';
  }

  // ---- overview ----------------------------------------------------------

  function countTable(title, counts, link) {
    const rows = Object.entries(counts).sort((a, b) => b[1] - a[1]);
    return el('section', { class: 'card' }, el('h2', { text: title }),
      rows.length === 0 ? el('p', { class: 'muted', text: 'none' }) : el('table', {},
        el('tbody', {}, rows.map(([k, n]) => el('tr', {},
          el('td', {}, link ? el('a', { href: link(k), text: k === '' ? '(none)' : k }) : (k === '' ? '(unknown)' : k)),
          el('td', { class: 'num', dataset: { count: k }, text: String(n) }))))));
  }

  function overviewView(main) {
    const view = {
      name: 'overview',
      async refresh() {
        let fleet;
        try {
          fleet = await api('GET', FLEET);
        } catch (e) {
          show(main, el('h1', { text: 'Fleet overview' }), problem(e, 'Fleet'));
          return;
        }
        const stat = (n, label, id) => el('div', { class: 'stat' }, el('span', { class: 'n', id, text: String(n) }), el('span', { class: 'l', text: label }));
        const faults = Object.values(fleet.fault).reduce((a, b) => a + b, 0);
        const q = (k, v) => '#/nodes?' + new URLSearchParams({ [k]: v }).toString();
        const groups = el('table', { id: 'groups' },
          el('thead', {}, el('tr', {}, ['conductor group', 'nodes', 'provision states', 'power on', 'power off', 'maintenance', 'fault'].map((h) => el('th', { text: h })))),
          el('tbody', {}, fleet.conductor_groups.map((g) => el('tr', {},
            el('td', {}, el('a', { href: q('conductor_group', g.name), text: g.name === '' ? '(default)' : g.name })),
            el('td', { class: 'num', text: String(g.total) }),
            el('td', { text: Object.entries(g.provision_state).sort().map(([k, n]) => k + ' ' + n).join(', ') }),
            el('td', { class: 'num', text: String(g.power_state['power on'] || 0) }),
            el('td', { class: 'num', text: String(g.power_state['power off'] || 0) }),
            el('td', { class: 'num', text: String(g.maintenance) }),
            el('td', { class: 'num', text: String(Object.values(g.fault).reduce((a, b) => a + b, 0)) })))));
        show(main, el('h1', { text: 'Fleet overview' }),
          el('div', { class: 'cards' }, stat(fleet.total, 'nodes', 'total'), stat(fleet.provision_state.active || 0, 'active', 'total-active'),
            stat(fleet.provision_state.available || 0, 'available', 'total-available'), stat(fleet.maintenance, 'in maintenance', 'total-maintenance'),
            stat(faults, 'with a fault', 'total-fault')),
          el('div', { class: 'grid' },
            el('div', { id: 'by-provision' }, countTable('Provision state', fleet.provision_state, (k) => q('provision_state', k))),
            el('div', { id: 'by-power' }, countTable('Power state', fleet.power_state)),
            el('div', { id: 'by-fault' }, countTable('Fault', fleet.fault, (k) => q('fault', k)))),
          el('section', { class: 'card' }, el('h2', { text: 'Per conductor group' }), groups));
      },
    };
    const again = debounce(() => view.refresh(), 500);
    view.onChange = (c) => {
      if (c.resource === 'node') again();
    };
    return view;
  }

  // ---- node list ---------------------------------------------------------

  const LIST_FIELDS = ['uuid', 'name', 'provision_state', 'target_provision_state', 'power_state', 'maintenance', 'fault', 'conductor_group', 'driver', 'resource_class', 'last_error'];
  const FILTERS = [
    { key: 'provision_state', label: 'Provision state', options: ['', 'enroll', 'manageable', 'available', 'active', 'deploying', 'wait call-back', 'deploy failed', 'cleaning', 'clean wait', 'clean failed', 'inspecting', 'inspect failed', 'error', 'rescue', 'servicing', 'service failed'] },
    { key: 'maintenance', label: 'Maintenance', options: ['', 'true', 'false'] },
    { key: 'fault', label: 'Fault', options: ['', 'power failure', 'clean failure', 'rescue abort failure', 'service failure'] },
    { key: 'conductor_group', label: 'Conductor group' },
    { key: 'driver', label: 'Driver' },
    { key: 'resource_class', label: 'Resource class' },
    { key: 'owner', label: 'Owner' },
    { key: 'description_contains', label: 'Description contains' },
  ];

  function nodesView(main, params) {
    const limit = PAGE_SIZES.includes(Number(params.get('limit'))) ? Number(params.get('limit')) : 25;
    const marker = params.get('marker') || '';
    const rows = new Map();
    const view = { name: 'nodes' };
    const go = (p) => {
      location.hash = '#/nodes?' + p.toString();
    };
    const inputs = {};
    const form = el('form', { class: 'filters', id: 'filters', onsubmit: (ev) => {
      ev.preventDefault();
      const p = new URLSearchParams();
      for (const [k, input] of Object.entries(inputs)) if (input.value) p.set(k, input.value);
      p.set('limit', String(limit));
      state.markers = [];
      go(p);
    } });
    for (const f of FILTERS) {
      const input = f.options
        ? el('select', { name: f.key, id: 'filter-' + f.key }, f.options.map((o) => el('option', { value: o, text: o === '' ? 'any' : o })))
        : el('input', { name: f.key, id: 'filter-' + f.key, type: 'search' });
      input.value = params.get(f.key) || '';
      inputs[f.key] = input;
      form.append(el('label', {}, f.label, input));
    }
    const size = el('select', { id: 'page-size', onchange: () => {
      const p = new URLSearchParams(params);
      p.set('limit', size.value);
      p.delete('marker');
      state.markers = [];
      go(p);
    } }, PAGE_SIZES.map((n) => el('option', { value: String(n), text: String(n) })));
    size.value = String(limit);
    form.append(el('button', { type: 'submit', class: 'primary', text: 'Filter' }), el('label', {}, 'Per page', size));

    function row(n) {
      const name = el('a', { href: '#/node/' + encodeURIComponent(n.uuid), class: 'node-link', text: n.name || n.uuid });
      const cells = {
        provision: el('td', { class: 'provision' }, badge(n.provision_state, stateClass(n.provision_state)), n.target_provision_state ? ' → ' + n.target_provision_state : ''),
        power: el('td', { class: 'power' }, badge(n.power_state, n.power_state === 'power on' ? 'power-on' : '')),
        maintenance: el('td', { class: 'maintenance' }, n.maintenance ? badge('maintenance', 'maint') : ''),
      };
      const tr = el('tr', { dataset: { uuid: n.uuid } }, el('td', {}, name), el('td', { class: 'muted uuid', text: n.uuid }), cells.provision, cells.power, cells.maintenance,
        el('td', {}, n.fault ? badge(n.fault, 'fault') : ''), el('td', { text: display(n.conductor_group) }), el('td', { text: display(n.driver) }),
        el('td', { text: display(n.resource_class) }), el('td', { class: 'error', text: n.last_error || '' }));
      rows.set(n.uuid, { tr, node: n });
      return tr;
    }

    // applied counts rows changed from the stream (readSettled).
    let applied = 0;
    view.refresh = async () => {
      const q = new URLSearchParams();
      for (const f of FILTERS) if (params.get(f.key)) q.set(f.key, params.get(f.key));
      q.set('limit', String(limit));
      if (marker) q.set('marker', marker);
      q.set('fields', LIST_FIELDS.join(','));
      let page;
      try {
        page = await readSettled(() => api('GET', '/v1/nodes?' + q.toString()), () => applied);
      } catch (e) {
        show(main, el('h1', { text: 'Nodes' }), form, problem(e, 'Nodes'));
        return;
      }
      rows.clear();
      const nodes = page.nodes || [];
      const prev = el('button', { type: 'button', id: 'page-prev', disabled: !marker, text: '← Previous', onclick: () => {
        const p = new URLSearchParams(params);
        const back = state.markers.pop();
        if (back) p.set('marker', back);
        else p.delete('marker');
        go(p);
      } });
      const next = el('button', { type: 'button', id: 'page-next', disabled: !page.next || nodes.length === 0, text: 'Next →', onclick: () => {
        const p = new URLSearchParams(params);
        state.markers.push(marker);
        p.set('marker', nodes[nodes.length - 1].uuid);
        go(p);
      } });
      show(main, el('h1', { text: 'Nodes' }), form,
        el('table', { id: 'nodes' },
          el('thead', {}, el('tr', {}, ['name', 'uuid', 'provision state', 'power', 'maintenance', 'fault', 'conductor group', 'driver', 'resource class', 'last error'].map((h) => el('th', { text: h })))),
          el('tbody', {}, nodes.map(row))),
        nodes.length === 0 ? el('p', { class: 'muted', text: 'No nodes match.' }) : null,
        el('div', { class: 'pager' }, prev, next, el('span', { class: 'muted', id: 'page-info', text: nodes.length + ' nodes on this page' })));
    };
    const again = debounce(() => view.refresh(), 500);
    view.onChange = (c) => {
      if (c.resource !== 'node') return;
      const r = rows.get(c.uuid);
      if (r && c.action !== 'deleted' && c.object) {
        applied++;
        r.tr.replaceWith(row(Object.assign({}, r.node, c.object)));
        return;
      }
      if (!r && c.action !== 'created') return;
      again();
    };
    return view;
  }

  // ---- node page ---------------------------------------------------------

  function currentStep(n) {
    for (const kind of ['clean', 'deploy', 'service']) {
      const step = n[kind + '_step'];
      if (step && Object.keys(step).length) {
        const info = n.driver_internal_info || {};
        const steps = info[kind + '_steps'];
        const index = info[kind + '_step_index'];
        let progress = null;
        if (Array.isArray(steps) && steps.length && typeof index === 'number') {
          const bar = el('span', {});
          bar.style.width = Math.round(((index + 1) / steps.length) * 100) + '%';
          progress = el('span', {}, el('span', { class: 'progress' }, bar), ' step ' + (index + 1) + ' of ' + steps.length);
        }
        return el('span', { id: 'current-step' }, kind + ': ' + (step.interface ? step.interface + '.' : '') + (step.step || JSON.stringify(step)) + ' ', progress);
      }
    }
    return el('span', { id: 'current-step', class: 'muted', text: 'none' });
  }

  function nodeView(main, ident) {
    const view = { name: 'node', node: null };
    const parts = {
      header: el('div', { id: 'node-header' }),
      summary: el('dl', { class: 'summary', id: 'node-summary' }),
      actions: el('div', { id: 'node-actions' }),
      status: el('p', { id: 'action-status', class: 'muted' }),
      fields: el('div', { id: 'node-fields' }),
      ports: el('div', { id: 'node-ports' }),
      history: el('div', { id: 'node-history' }),
      bios: el('div', { id: 'node-bios' }),
      firmware: el('div', { id: 'node-firmware' }),
      inventory: el('div', { id: 'node-inventory' }),
    };
    const section = (title, body) => el('section', { class: 'card' }, el('h2', { text: title }), body);
    let shown = false;

    // Lock takes and releases are not streamed (docs/changes.md): while
    // the page shows the node locked, it reads the node again every
    // RELEASE_POLL_MS until the lock is gone.
    let releaseTimer = null;
    function awaitRelease(n) {
      clearTimeout(releaseTimer);
      releaseTimer = null;
      if (!n.reservation || live.mode !== 'stream') return;
      releaseTimer = setTimeout(() => {
        releaseTimer = null;
        if (state.view === view) view.refresh();
      }, RELEASE_POLL_MS);
    }

    let rendered = null;
    function renderNode(n) {
      view.node = n;
      awaitRelease(n);
      // A read that finds the node as shown changes nothing on the page.
      const sig = JSON.stringify(n);
      if (sig === rendered) return;
      rendered = sig;
      show(parts.header, el('h1', { id: 'node-name', text: n.name || n.uuid }), el('p', { class: 'muted', id: 'node-uuid', text: n.uuid }));
      const item = (k, v) => [el('dt', { text: k }), el('dd', {}, v)];
      show(parts.summary,
        item('provision state', el('span', {}, el('span', { id: 'provision-state', class: 'badge ' + stateClass(n.provision_state), text: display(n.provision_state) }),
          n.target_provision_state ? el('span', { id: 'target-provision-state', text: ' → ' + n.target_provision_state }) : null)),
        item('power state', el('span', {}, el('span', { id: 'power-state', class: 'badge ' + (n.power_state === 'power on' ? 'power-on' : ''), text: display(n.power_state) }),
          n.target_power_state ? ' → ' + n.target_power_state : '')),
        item('maintenance', el('span', { id: 'maintenance' }, n.maintenance ? badge('in maintenance' + (n.maintenance_reason ? ': ' + n.maintenance_reason : ''), 'maint') : 'no')),
        item('fault', el('span', { id: 'fault', text: display(n.fault) })),
        item('last error', el('span', { id: 'last-error', class: n.last_error ? 'error' : 'muted', text: display(n.last_error) })),
        item('current step', currentStep(n)),
        item('driver', el('span', { text: display(n.driver) })),
        item('conductor', el('span', { text: display(n.conductor) + (n.conductor_group ? ' (group ' + n.conductor_group + ')' : '') })),
        item('reservation', el('span', { id: 'reservation', text: display(n.reservation) })));
      renderActions(n);
      const keys = Object.keys(n).filter((k) => k !== 'links').sort();
      show(parts.fields, el('table', { id: 'fields' }, el('tbody', {}, keys.map((k) => el('tr', {}, el('th', { text: k }), valueCell(n[k]))))));
    }

    function renderActions(n) {
      const busy = !!n.target_provision_state || !!n.reservation;
      const btn = (label, id, onclick, disabled) => el('button', { type: 'button', id, text: label, disabled: disabled || false, onclick });
      const next = el('div', { class: 'actions' },
        el('div', { class: 'group' }, PROVISION.map((p) => btn(p.label, 'action-' + p.target, () => provisionAction(p), busy || !p.from.includes(n.provision_state)))),
        el('div', { class: 'group' },
          btn('Power on', 'action-power-on', () => powerAction('power on')),
          btn('Power off', 'action-power-off', () => powerAction('power off')),
          btn('Reboot', 'action-reboot', () => powerAction('rebooting'))),
        el('div', { class: 'group' }, btn('Boot device…', 'action-boot-device', bootDeviceAction)),
        el('div', { class: 'group' }, n.maintenance
          ? btn('End maintenance', 'action-maintenance-off', () => maintenanceAction(false))
          : btn('Maintenance…', 'action-maintenance-on', () => maintenanceAction(true))));
      // The same buttons are kept, only their disabled flags updated, so
      // that a re-read never swaps a button out from under a click (their
      // handlers read the node when clicked).
      const cur = parts.actions.querySelectorAll('button');
      const fresh = next.querySelectorAll('button');
      if (cur.length === fresh.length && [...cur].every((b, i) => b.id === fresh[i].id && b.textContent === fresh[i].textContent)) {
        cur.forEach((b, i) => { b.disabled = fresh[i].disabled; });
        return;
      }
      show(parts.actions, next);
    }

    async function act(label, method, path, body) {
      parts.status.className = 'muted';
      parts.status.textContent = label + '…';
      try {
        await api(method, path, body);
        parts.status.textContent = label + ': accepted';
      } catch (e) {
        parts.status.className = e instanceof APIError && e.status === 403 ? 'denied' : 'error';
        parts.status.textContent = label + ': ' + (e instanceof APIError && e.status === 403 ? 'not permitted' : e.message);
        throw e;
      }
      view.refresh();
    }

    const nodePath = () => '/v1/nodes/' + encodeURIComponent(view.node.uuid);
    const who = () => view.node.name || view.node.uuid;

    function provisionAction(p) {
      const inputs = [];
      let steps = null;
      if (p.steps) {
        steps = el('textarea', { id: 'clean-steps', spellcheck: 'false' });
        steps.value = JSON.stringify([{ interface: 'deploy', step: 'erase_devices_metadata' }], null, 2);
        inputs.push(el('label', { text: 'Clean steps (JSON list)' }), steps);
      }
      confirmDialog(p.label.replace('…', '') + ' ' + who(), 'Move the node to "' + p.target + '"?', inputs, () => {
        const body = { target: p.target };
        if (steps) {
          try {
            body.clean_steps = JSON.parse(steps.value);
          } catch (e) {
            throw new Error('clean steps: ' + e.message);
          }
        }
        return act(p.label.replace('…', ''), 'PUT', nodePath() + '/states/provision', body);
      });
    }

    function powerAction(target) {
      confirmDialog('Power ' + who(), 'Set the power state to "' + target + '"?', [], () => act(target, 'PUT', nodePath() + '/states/power', { target }));
    }

    function bootDeviceAction() {
      const device = el('select', { id: 'boot-device' }, BOOT_DEVICES.map((d) => el('option', { value: d, text: d })));
      const persistent = el('input', { type: 'checkbox', id: 'boot-persistent' });
      confirmDialog('Boot device of ' + who(), 'Set the next boot device?', [el('label', {}, 'Device ', device), el('label', {}, persistent, ' persistent')],
        () => act('boot device ' + device.value, 'PUT', nodePath() + '/management/boot_device', { boot_device: device.value, persistent: persistent.checked }));
    }

    function maintenanceAction(on) {
      if (!on) {
        confirmDialog('End maintenance of ' + who(), 'Take the node out of maintenance?', [], () => act('end maintenance', 'DELETE', nodePath() + '/maintenance'));
        return;
      }
      const reason = el('input', { id: 'maintenance-reason' });
      confirmDialog('Maintenance of ' + who(), 'Put the node in maintenance?', [el('label', {}, 'Reason ', reason)],
        () => act('maintenance', 'PUT', nodePath() + '/maintenance', reason.value ? { reason: reason.value } : {}));
    }

    async function loadSection(target, title, path, render) {
      try {
        const data = await api('GET', nodePath() + path);
        show(target, section(title, render(data)));
      } catch (e) {
        show(target, section(title, problem(e, title)));
      }
    }

    function table(id, cols, items, cell) {
      if (!items || items.length === 0) return el('p', { class: 'muted', text: 'none' });
      return el('table', { id }, el('thead', {}, el('tr', {}, cols.map((c) => el('th', { text: c })))),
        el('tbody', {}, items.map((it) => el('tr', {}, cols.map((c) => valueCell(cell ? cell(it, c) : it[c]))))));
    }

    const loadPorts = () => loadSection(parts.ports, 'Ports', '/ports?detail=True', (d) =>
      table('ports', ['address', 'uuid', 'pxe_enabled', 'physical_network', 'portgroup_uuid', 'local_link_connection'], d.ports));
    const loadHistory = () => loadSection(parts.history, 'History', '/history?detail=True', (d) =>
      table('history', ['created_at', 'severity', 'event_type', 'event', 'conductor', 'user'], (d.history || []).slice().reverse()));

    function loadSections() {
      loadPorts();
      loadHistory();
      loadSection(parts.bios, 'BIOS', '/bios?detail=True', (d) => table('bios', ['name', 'value', 'read_only', 'reset_required'], d.bios));
      loadSection(parts.firmware, 'Firmware', '/firmware', (d) => table('firmware', ['component', 'initial_version', 'current_version', 'last_version_flashed'], d.firmware));
      loadSection(parts.inventory, 'Inventory', '/inventory', (d) => {
        const inv = d.inventory || {};
        const item = (k, v) => [el('dt', { text: k }), el('dd', { text: display(v) })];
        const cpu = inv.cpu || {};
        const mem = inv.memory || {};
        return el('div', {},
          el('dl', { class: 'summary' }, item('CPU', [cpu.model_name, cpu.count ? cpu.count + ' cores' : null, cpu.architecture].filter(Boolean).join(', ')),
            item('memory', mem.physical_mb ? mem.physical_mb + ' MiB' : null), item('disks', (inv.disks || []).map((x) => x.name + ' ' + Math.round((x.size || 0) / 1e9) + ' GB').join(', ')),
            item('interfaces', (inv.interfaces || []).map((x) => x.name + ' ' + (x.mac_address || '')).join(', ')),
            item('system', inv.system_vendor ? [inv.system_vendor.manufacturer, inv.system_vendor.product_name, inv.system_vendor.serial_number].filter(Boolean).join(' ') : null)),
          el('details', {}, el('summary', { text: 'raw inventory and plugin data' }), el('pre', { text: JSON.stringify(d, null, 2) })));
      });
    }

    // applied counts this node's changes shown from the stream
    // (readSettled).
    let applied = 0;
    view.refresh = async () => {
      let n;
      try {
        n = await readSettled(() => api('GET', '/v1/nodes/' + encodeURIComponent(view.node ? view.node.uuid : ident)), () => applied);
      } catch (e) {
        // Upstream answers 404 for another project's node too.
        show(main, el('h1', { text: ident }), e instanceof APIError && e.status === 404
          ? el('p', { class: 'muted', id: 'not-found', text: 'No node ' + ident + ' (or not visible to you).' }) : problem(e, 'Node'));
        shown = false;
        return;
      }
      if (!shown) {
        show(main, parts.header, section('State', parts.summary), section('Actions', [parts.actions, parts.status]), parts.ports, parts.history,
          section('Fields', parts.fields), parts.bios, parts.firmware, parts.inventory);
        shown = true;
        renderNode(n);
        loadSections();
        return;
      }
      renderNode(n);
      loadHistory();
    };
    const history = debounce(loadHistory, 500);
    const ports = debounce(loadPorts, 300);
    view.onChange = (c) => {
      if (!view.node) return;
      if (c.resource === 'node' && c.uuid === view.node.uuid) {
        if (c.action === 'deleted') {
          show(parts.header, el('h1', { text: who() }), el('p', { class: 'error', text: 'This node was deleted.' }));
          return;
        }
        applied++;
        if (c.object) renderNode(Object.assign({}, view.node, c.object));
        else view.refresh();
        history();
      } else if ((c.resource === 'port' || c.resource === 'portgroup') && c.node_uuid === view.node.uuid) {
        ports();
      }
    };
    return view;
  }

  // ---- confirmation dialog ---------------------------------------------

  function confirmDialog(title, text, inputs, run) {
    const d = document.getElementById('confirm');
    document.getElementById('confirm-title').textContent = title;
    document.getElementById('confirm-text').textContent = text;
    show(document.getElementById('confirm-inputs'), inputs);
    const error = document.getElementById('confirm-error');
    error.textContent = '';
    const form = document.getElementById('confirm-form');
    form.onsubmit = async (ev) => {
      ev.preventDefault();
      try {
        await run();
        d.close();
      } catch (e) {
        error.textContent = e instanceof APIError && e.status === 403 ? 'not permitted' : e.message;
      }
    };
    document.getElementById('confirm-cancel').onclick = () => d.close();
    d.showModal();
  }

  // ---- start ---------------------------------------------------------------

  async function main() {
    try {
      const res = await fetch('config.json', { credentials: 'omit' });
      if (res.ok) config = await res.json();
    } catch (e) {
      // The defaults (noauth) stand; the API will say otherwise.
    }
    document.getElementById('logout').addEventListener('click', () => {
      setCredentials(null);
      live.stop();
      location.hash = '#/login';
    });
    document.getElementById('goto').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const v = document.getElementById('goto-ident').value.trim();
      if (v) location.hash = '#/node/' + encodeURIComponent(v);
    });
    renderWho();
    window.addEventListener('hashchange', route);
    if (config.auth_strategy === 'noauth' || credentials()) live.start();
    route();
  }

  main();
})();
