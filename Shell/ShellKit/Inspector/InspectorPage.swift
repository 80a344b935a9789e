/// The inspector's page (`GET /`): one self-contained document (HTML, CSS and script,
/// nothing fetched from elsewhere), driving the same JSON API as any other client.
enum InspectorPage {
    static let html = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>cxshell inspector</title>
        <style>
        :root { --bg: #f6f7f9; --panel: #fff; --ink: #1c2330; --muted: #5b6475; --line: #d9dde5; --accent: #2456c7;
          --ok: #17794a; --warn: #9a5b00; --bad: #b3261e; --mono: ui-monospace, "DejaVu Sans Mono", monospace; }
        * { box-sizing: border-box; }
        body { margin: 0; font: 14px/1.4 system-ui, "DejaVu Sans", sans-serif; color: var(--ink); background: var(--bg); }
        header { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; align-items: baseline; padding: .6rem 1rem;
          background: #1c2330; color: #fff; }
        header h1 { font-size: 1.05rem; margin: 0; }
        header .summary { color: #c9d1e0; font-size: .9rem; }
        main { display: grid; gap: .75rem; padding: .75rem; grid-template-columns: minmax(15rem, 22rem) minmax(18rem, 1fr) minmax(22rem, 1.3fr);
          align-items: start; }
        @media (max-width: 1100px) { main { grid-template-columns: 1fr 1fr; } #log-panel { grid-column: 1 / -1; } }
        @media (max-width: 700px) { main { grid-template-columns: 1fr; } }
        section { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: .6rem .75rem; min-width: 0; }
        h2 { font-size: 1rem; margin: 0 0 .5rem; }
        h3 { font-size: .9rem; margin: .8rem 0 .3rem; color: var(--muted); }
        label { font-size: .85rem; color: var(--muted); display: inline-flex; flex-direction: column; gap: .15rem; }
        input, select, textarea, button { font: inherit; }
        input, select, textarea { border: 1px solid var(--line); border-radius: 4px; padding: .25rem .35rem; background: #fff; color: var(--ink); }
        textarea { font-family: var(--mono); font-size: .8rem; width: 100%; }
        button { border: 1px solid var(--accent); background: #fff; color: var(--accent); border-radius: 4px; padding: .2rem .55rem; cursor: pointer; }
        button.primary { background: var(--accent); color: #fff; }
        button:hover { background: #eef2fc; } button.primary:hover { background: #1b45a3; }
        :focus-visible { outline: 3px solid #f0b429; outline-offset: 1px; }
        .row { display: flex; flex-wrap: wrap; gap: .4rem; align-items: end; margin-bottom: .5rem; }
        table { border-collapse: collapse; width: 100%; }
        th, td { text-align: left; padding: .25rem .35rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        th { font-size: .8rem; color: var(--muted); font-weight: 600; }
        #devices tbody tr { cursor: pointer; } #devices tbody tr[aria-selected="true"] { background: #e8eefc; }
        #devices tbody tr:hover { background: #f1f4fb; }
        code, .mono { font-family: var(--mono); font-size: .8rem; overflow-wrap: anywhere; }
        .status { display: inline-block; min-width: 2.6rem; text-align: center; border-radius: 3px; color: #fff; font-weight: 600; font-size: .8rem; }
        .s2 { background: var(--ok); } .s4 { background: var(--warn); } .s5 { background: var(--bad); } .s1, .s3 { background: var(--muted); }
        .muted { color: var(--muted); }
        h3 .muted { font-weight: normal; font-size: .9rem; }
        .actions { display: flex; flex-wrap: wrap; gap: .3rem; }
        .tray li, .deliveries li { margin: .2rem 0; }
        .tray, .deliveries { padding-left: 1.1rem; margin: .2rem 0; }
        pre { background: #f3f5f8; border: 1px solid var(--line); border-radius: 4px; padding: .4rem; white-space: pre-wrap; overflow-wrap: anywhere;
          font-family: var(--mono); font-size: .78rem; margin: .3rem 0; max-height: 18rem; overflow: auto; }
        #secrets-shown { background: #fff3cd; color: #664d03; border: 1px solid #e0c36c; padding: .3rem .5rem; margin: .3rem 0; }
        #log-table td.effect { overflow-wrap: anywhere; } #log-table td.mono { white-space: nowrap; }
        #log-table tbody tr.entry { cursor: pointer; } #log-table tbody tr.entry:hover { background: #f1f4fb; }
        #message { min-height: 1.2em; }
        .error { color: var(--bad); }
        #key-files [hidden] { display: none; }
        .visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
        </style>
        </head>
        <body>
        <header>
          <h1>cxshell inspector</h1>
          <span class="summary" id="summary" aria-live="polite">connecting…</span>
          <form id="token-form" hidden>
            <label style="color:#fff">API token <input id="token" type="password" autocomplete="off"></label>
            <button class="primary" type="submit">Use token</button>
          </form>
        </header>
        <p id="message" role="status" aria-live="polite" style="margin:.4rem 1rem 0"></p>
        <main>
          <section id="devices-panel" aria-labelledby="devices-title">
            <h2 id="devices-title">Devices</h2>
            <form class="row" id="device-filter">
              <label>Platform <select id="filter-platform"><option value="">any</option><option>ios</option><option>android</option><option>web</option></select></label>
              <label>State <select id="filter-state"><option value="">any</option><option>foreground</option><option>background</option><option value="not_running">not running</option><option value="force_stopped">force stopped</option></select></label>
              <button type="submit">Filter</button>
            </form>
            <form class="row" id="new-device">
              <label>New device <select id="new-platform"><option>ios</option><option>android</option><option>web</option></select></label>
              <label>Count <input id="new-count" type="number" min="1" max="100000" value="1" style="width:5.5rem"></label>
              <button class="primary" type="submit">Add, ready</button>
            </form>
            <form class="row" id="key-files">
              <label>Key file <select id="key-format"><option value="service_account">Firebase account key (JSON)</option><option value="p8">APNs signing key (.p8)</option></select></label>
              <label>Firebase project <input id="key-project" value="cxshell" size="10"></label>
              <button type="submit">Download key file</button>
            </form>
            <table id="devices" aria-label="Devices">
              <thead><tr><th scope="col">Device</th><th scope="col">Platform</th><th scope="col">State</th><th scope="col">Tray</th></tr></thead>
              <tbody></tbody>
            </table>
            <p class="row"><button id="more-devices" type="button" hidden>More devices</button><span class="muted" id="devices-count"></span></p>
          </section>

          <section id="device-panel" aria-labelledby="device-title">
            <h2 id="device-title">No device selected</h2>
            <div id="device-body" hidden>
              <p id="device-facts" class="muted"></p>
              <p>Token: <code id="device-token"></code></p>
              <h3>The user</h3>
              <div class="actions" id="user-actions">
                <button type="button" data-op="launch">Launch</button>
                <button type="button" data-op="background">Background</button>
                <button type="button" data-op="foreground">Foreground</button>
                <button type="button" data-op="kill">Kill</button>
                <button type="button" data-op="force_stop">Force stop</button>
                <button type="button" data-op="permission" data-answer="grant">Allow notifications</button>
                <button type="button" data-op="permission" data-answer="deny">Deny notifications</button>
                <button type="button" data-op="rotate_token">Rotate token</button>
                <button type="button" data-op="uninstall">Uninstall</button>
                <button type="button" data-op="install">Install</button>
                <button type="button" data-op="idle" data-on="true" data-platform="android">Enter Doze</button>
                <button type="button" data-op="idle" data-on="false" data-platform="android">Leave Doze</button>
                <button type="button" data-op="low_power" data-on="true" data-platform="ios">Low Power Mode on</button>
                <button type="button" data-op="low_power" data-on="false" data-platform="ios">Low Power Mode off</button>
                <button type="button" data-op="focus" data-on="true" data-platform="ios">Focus on</button>
                <button type="button" data-op="focus" data-on="false" data-platform="ios">Focus off</button>
                <button type="button" data-op="restore">Restore to a new phone</button>
              </div>
              <h3>The app's core</h3>
              <div class="actions" id="core-actions">
                <button type="button" data-op="register">Register</button>
                <button type="button" data-op="subscribe">Subscribe to push events</button>
              </div>
              <div id="notification-channels-part" hidden>
                <h3>Notification channels</h3>
                <ul class="tray" id="notification-channels"></ul>
              </div>
              <h3>Tray <span class="muted" id="tray-count"></span></h3>
              <ul class="tray" id="tray"></ul>
              <h3>What the core received</h3>
              <ul class="deliveries" id="deliveries" aria-live="polite"></ul>
              <h3>Send with curl</h3>
              <button type="button" id="make-credentials">Make credentials and fill in curl</button>
              <pre id="curl" hidden></pre>
            </div>
            <h3>Send a push</h3>
            <form id="push-form">
              <div class="row">
                <label>Service <select id="push-service"><option value="apns">APNs</option><option value="fcm">FCM</option></select></label>
                <label>To device <input id="push-device" size="6" placeholder="d1"></label>
              </div>
              <label style="display:flex">Headers (JSON) <textarea id="push-headers" rows="2"></textarea></label>
              <label style="display:flex">Body (JSON) <textarea id="push-body" rows="5"></textarea></label>
              <p class="row"><button class="primary" type="submit">Send</button></p>
              <pre id="push-result" hidden aria-live="polite"></pre>
            </form>
          </section>

          <section id="log-panel" aria-labelledby="log-title">
            <h2 id="log-title">Log <span class="muted" id="live">(live)</span></h2>
            <p id="secrets-shown" role="alert" hidden>Secrets are shown whole (--log-secrets): bearer tokens, API keys and passwords in this log are real.</p>
            <form class="row" id="log-filter">
              <label>Source <select id="log-source"><option value="">any</option><option>apns</option><option>fcm</option><option>oauth</option><option>pubnub</option><option>webhook</option><option>appwrite</option><option>mqtt</option><option>tls</option><option>line</option><option>api</option><option>http</option></select></label>
              <label>Status <select id="log-status"><option value="">any</option><option>2xx</option><option>4xx</option><option>5xx</option></select></label>
              <label>Device <input id="log-device" size="5"></label>
              <label>Text <input id="log-q" size="10"></label>
              <button type="submit">Filter</button>
            </form>
            <table id="log-table" aria-label="Log, newest first">
              <thead><tr><th scope="col">Time</th><th scope="col">Source</th><th scope="col">Device</th><th scope="col">Status</th><th scope="col">Effect</th></tr></thead>
              <tbody></tbody>
            </table>
          </section>
        </main>
        <script>
        "use strict";
        const $ = (id) => document.getElementById(id);
        let token = sessionStorage.getItem("cxshell-token") || "";
        let selected = null, nextDevice = null, lastSeq = 0, stream = null, world = null;
        const seedAPNs = { headers: { "apns-topic": "com.example.app", "apns-push-type": "alert" },
          body: { aps: { alert: { title: "Test", body: "hi" }, sound: "default" }, type: "new_booking" } };
        const seedFCM = { headers: {}, body: { notification: { title: "Test", body: "hi" }, data: { type: "new_booking" } } };

        function headers(json) {
          const h = {};
          if (token) h["authorization"] = "Bearer " + token;
          if (json) h["content-type"] = "application/json";
          return h;
        }
        async function api(method, path, body) {
          const response = await fetch(path, { method, headers: headers(body !== undefined),
            body: body === undefined ? undefined : JSON.stringify(body) });
          if (response.status === 401) { askToken(); throw new Error("the inspector needs its API token"); }
          const text = await response.text();
          const value = text ? JSON.parse(text) : null;
          if (!response.ok) throw new Error(value && value.error ? value.error : "HTTP " + response.status);
          return value;
        }
        function say(text, bad) { const m = $("message"); m.textContent = text; m.className = bad ? "error" : ""; }
        function askToken() { $("token-form").hidden = false; $("token").focus(); }
        $("token-form").addEventListener("submit", (e) => {
          e.preventDefault(); token = $("token").value; sessionStorage.setItem("cxshell-token", token);
          $("token-form").hidden = true; start();
        });
        async function lines(requests) {
          const answer = await api("POST", "/api/v1/requests", requests);
          return answer.lines;
        }
        function el(tag, props, ...children) {
          const node = document.createElement(tag);
          Object.assign(node, props || {});
          for (const child of children) node.append(child);
          return node;
        }

        // ---- the world and its devices ----
        async function refreshWorld() {
          world = await api("GET", "/api/v1/world");
          $("summary").textContent = `${world.devices} devices · log ${world.log.retained} kept, ${world.log.dropped} dropped · ` +
            `${world.connections} connections · listening on ${world.listening || "—"}`;
          $("secrets-shown").hidden = world.log.secrets !== "shown";
        }
        function deviceRow(d) {
          const row = el("tr", { tabIndex: 0 });
          row.dataset.device = d.device;
          row.setAttribute("aria-selected", String(d.device === selected));
          row.append(el("td", {}, el("code", { textContent: d.device })), el("td", { textContent: d.platform }),
            el("td", { textContent: d.state.replace("_", " ") }), el("td", { textContent: String(d.tray) }));
          const choose = () => select(d.device);
          row.addEventListener("click", choose);
          row.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); choose(); } });
          return row;
        }
        function deviceQuery(after) {
          const q = new URLSearchParams({ limit: "100" });
          if ($("filter-platform").value) q.set("platform", $("filter-platform").value);
          if ($("filter-state").value) q.set("state", $("filter-state").value);
          if (after) q.set("after", after);
          return "/api/v1/devices?" + q;
        }
        async function loadDevices(more) {
          const page = await api("GET", deviceQuery(more ? nextDevice : null));
          const body = $("devices").tBodies[0];
          if (!more) body.replaceChildren();
          const rows = document.createDocumentFragment();
          for (const d of page.devices) rows.append(deviceRow(d));
          body.append(rows);
          nextDevice = page.next;
          $("more-devices").hidden = !nextDevice;
          $("devices-count").textContent = `${body.rows.length} shown`;
        }
        $("device-filter").addEventListener("submit", (e) => { e.preventDefault(); loadDevices(false).catch((x) => say(x.message, true)); });
        $("more-devices").addEventListener("click", () => loadDevices(true).catch((x) => say(x.message, true)));
        $("new-device").addEventListener("submit", async (e) => {
          e.preventDefault();
          try {
            const made = await api("POST", "/api/v1/devices", { platform: $("new-platform").value, count: Number($("new-count").value), ready: true });
            say(`Made ${made.devices.length} device(s), ready.`);
            await loadDevices(false); await refreshWorld();
            if (made.devices.length === 1) await select(made.devices[0].device);
          } catch (x) { say(x.message, true); }
        });

        // ---- one device ----
        async function select(id) {
          selected = id;
          for (const row of $("devices").tBodies[0].rows) row.setAttribute("aria-selected", String(row.dataset.device === id));
          $("push-device").value = id;
          await showDevice();
        }
        async function showDevice() {
          if (!selected) return;
          let d;
          try { d = await api("GET", "/api/v1/devices/" + encodeURIComponent(selected)); }
          catch (x) { $("device-title").textContent = "No device selected"; $("device-body").hidden = true; selected = null; return; }
          // A refresh (each log entry the stream brings schedules one) rebuilds the panel's
          // buttons: the one the keyboard was on gets the focus back in the same turn, so a
          // key pressed on it never lands on a button that is gone.
          const active = document.activeElement;
          // Found again by its `data-key` (a channel's toggle, whose label turns with it), else its label.
          const key = (e) => e.dataset.key || e.getAttribute("aria-label");
          const focused = active && $("device-body").contains(active) ? key(active) : null;
          $("device-title").textContent = `Device ${d.device} (${d.platform})`;
          $("device-body").hidden = false;
          $("device-facts").textContent = `app ${d.state.replace("_", " ")} · notifications ${d.permission} · ` +
            `${d.installed ? "installed" : "not installed"} · core subscribed to: ${d.subscriptions.join(", ") || "nothing"}` +
            (d.buffered ? ` · ${d.buffered} taps buffered` : "") + ` · badge ${d.badge}` +
            (d.platform === "android" ? ` · Doze ${d.idle ? "on" : "off"} · Android API ${d.android_api}` : "") +
            (d.platform === "ios" ? ` · Low Power Mode ${d.low_power ? "on" : "off"} · Focus ${d.focus ? "on" : "off"}` : "") +
            (d.categories && d.categories.length ? ` · categories: ${d.categories.map((c) => c.id).join(", ")}` : "");
          for (const button of $("user-actions").querySelectorAll("button[data-platform]")) button.hidden = button.dataset.platform !== d.platform;
          $("device-token").textContent = d.token || "(none yet)";
          // PH-6: the app's Android channels, each turned on or off as the user would.
          const channels = $("notification-channels"); channels.replaceChildren();
          $("notification-channels-part").hidden = !(d.notification_channels && d.notification_channels.length);
          for (const channel of d.notification_channels || []) {
            const toggle = el("button", { type: "button", textContent: channel.enabled ? "Turn off" : "Turn on" });
            toggle.setAttribute("aria-label", `Turn ${channel.enabled ? "off" : "on"} channel ${channel.id}`);
            toggle.dataset.key = `channel ${channel.id}`;
            toggle.addEventListener("click", () => act({ op: "channel", channel: channel.id, enabled: !channel.enabled }));
            channels.append(el("li", {}, el("code", { textContent: channel.id }), ` ${channel.name} · ${channel.enabled ? "on" : "off"} `, toggle));
          }
          // The tray's bound (device option tray_limit), and what the OS does past it.
          $("tray-count").textContent = `${d.tray.length} of ${d.tray_limit} kept; ` +
            (d.platform === "android" ? "Android shows no more past that" : "a new one lets the oldest go");
          const tray = $("tray"); tray.replaceChildren();
          if (!d.tray.length) tray.append(el("li", { className: "muted", textContent: "empty" }));
          for (const entry of d.tray) {
            const tap = el("button", { type: "button", textContent: "Tap" });
            tap.setAttribute("aria-label", `Tap ${entry.id}: ${entry.title || ""} ${entry.body || ""}`);
            tap.addEventListener("click", () => act({ op: "tap", which: entry.id }));
            const dismiss = el("button", { type: "button", textContent: "Dismiss" });
            dismiss.setAttribute("aria-label", `Dismiss ${entry.id}: ${entry.title || ""} ${entry.body || ""}`);
            dismiss.addEventListener("click", () => act({ op: "dismiss", which: entry.id }));
            // PH-2, PH-3: the entry's action buttons; an input action has its text field.
            const buttons = (entry.actions || []).flatMap((action) => {
              const press = el("button", { type: "button", textContent: action.title });
              press.setAttribute("aria-label", `${action.title} (action ${action.id}) on ${entry.id}`);
              if (!action.input) {
                press.addEventListener("click", () => act({ op: "tap", which: entry.id, action: action.id }));
                return [" ", press];
              }
              const text = el("input", { type: "text", size: 14 });
              text.setAttribute("aria-label", `Text for ${action.title} on ${entry.id}`);
              press.addEventListener("click", () => act({ op: "tap", which: entry.id, action: action.id, text: text.value }));
              return [" ", text, press];
            });
            tray.append(el("li", {}, el("code", { textContent: entry.id }), " ", el("strong", { textContent: entry.title || "" }),
              " ", entry.body || "", entry.presented === "quiet" ? el("em", { textContent: " (quiet, no banner)" }) : "",
              entry.channel ? el("span", { className: "muted", textContent: ` · channel ${entry.channel} · icon ${entry.icon}` }) : "",
              " ", tap, " ", dismiss, ...buttons));
          }
          const list = $("deliveries"); list.replaceChildren();
          if (!d.deliveries.length) list.append(el("li", { className: "muted", textContent: "nothing yet" }));
          for (const delivery of d.deliveries.slice().reverse()) list.append(deliveryItem(delivery));
          if (!selectedDevice || selectedDevice.device !== d.device) {
            // A newly chosen device gets the seed's example for its platform; later refreshes keep what was typed.
            $("push-service").value = d.platform === "android" ? "fcm" : "apns";
            fillPush();
          }
          selectedDevice = d;
          const row = [...$("devices").tBodies[0].rows].find((r) => r.dataset.device === d.device);
          if (row) { row.cells[2].textContent = d.state.replace("_", " "); row.cells[3].textContent = String(d.tray.length); }
          const again = focused && [...$("device-body").querySelectorAll("[aria-label]")].find((e) => key(e) === focused);
          if (again && document.activeElement !== again) again.focus();
        }
        let selectedDevice = null;
        function deliveryItem(delivery) {
          let kind = "";
          try { kind = JSON.parse(delivery.output).mobiler_push || ""; } catch (_) {}
          return el("li", {}, el("strong", { textContent: kind || delivery.delivery }), " ", el("code", { textContent: delivery.output ?? (delivery.end ? "(end)" : "") }));
        }
        async function act(request) {
          try {
            const answer = await lines([Object.assign({ device: selected }, request)]);
            const reply = answer[answer.length - 1];
            say(reply.ok ? `${request.op}: done${reply.state ? " (" + reply.state.replace("_", " ") + ")" : ""}` : `${request.op}: ${reply.error}`, !reply.ok);
            await loadDevices(false);
            // A restore makes a new phone: show it.
            if (reply.ok && request.op === "restore") await select(reply.device); else await showDevice();
          } catch (x) { say(x.message, true); }
        }
        $("user-actions").addEventListener("click", (e) => {
          const button = e.target.closest("button"); if (!button) return;
          const request = { op: button.dataset.op };
          if (button.dataset.answer) request.answer = button.dataset.answer;
          if (button.dataset.on) request.on = button.dataset.on === "true";
          if (request.op === "restore") request.from = selected;
          act(request);
        });
        $("core-actions").addEventListener("click", (e) => {
          const button = e.target.closest("button"); if (!button) return;
          if (button.dataset.op === "register") act({ op: "call", plugin: "push", method: "register", input: "" });
          else act({ op: "subscribe", key: "push", plugin: "push", stream: "events", input: "" });
        });
        $("make-credentials").addEventListener("click", async () => {
          const d = selectedDevice; if (!d) return;
          try {
            const where = `--proxy http://${world.listening} --cacert ${world.ca}`;
            let text;
            if (d.platform === "android") {
              const c = await api("POST", "/api/v1/credentials", { service: "fcm", project: d.fcm_project });
              const body = JSON.stringify({ message: Object.assign({ token: d.token }, seedFCM.body) });
              text = `curl -v ${where} \\\n  -H "authorization: ${c.authorization}" -H "content-type: application/json" \\\n  -d '${body}' \\\n  https://fcm.googleapis.com/v1/projects/${d.fcm_project}/messages:send`;
            } else {
              const c = await api("POST", "/api/v1/credentials", { service: "apns", team: d.apns_team });
              const host = d.apns_environment === "development" ? "api.sandbox.push.apple.com" : "api.push.apple.com";
              text = `curl -v --http2 ${where} \\\n  -H "apns-topic: ${d.bundle}" -H "apns-push-type: alert" \\\n  -H "authorization: ${c.authorization}" \\\n  -d '${JSON.stringify(seedAPNs.body)}' \\\n  https://${host}/3/device/${d.token}`;
            }
            $("curl").textContent = text; $("curl").hidden = false;
            say("Credentials made and registered: from now on the world checks signatures.");
          } catch (x) { say(x.message, true); }
        });

        // ---- key files for real SDKs: made, registered, and saved by the browser ----
        $("key-format").addEventListener("change", () => {
          $("key-project").closest("label").hidden = $("key-format").value !== "service_account";
        });
        $("key-files").addEventListener("submit", async (e) => {
          e.preventDefault();
          const format = $("key-format").value;
          try {
            const request = format === "p8" ? { format } : { format, project: $("key-project").value };
            const file = await api("POST", "/api/v1/credentials", request);
            const [name, text] = format === "p8"
              ? [`AuthKey_${file.key_id}.p8`, file.p8]
              : [`service-account-${file.project_id}.json`, JSON.stringify(file, null, 2) + "\n"];
            const link = el("a", { href: URL.createObjectURL(new Blob([text])), download: name });
            document.body.append(link); link.click(); link.remove();
            setTimeout(() => URL.revokeObjectURL(link.href), 1000);
            say(format === "p8"
              ? `Saved ${name}: key ${file.key_id} of team ${file.team_id}, registered; from now on provider tokens' signatures are checked.`
              : `Saved ${name}: ${file.client_email}, registered; from now on assertions' signatures are checked.`);
          } catch (x) { say(x.message, true); }
        });

        // ---- send a push ----
        function fillPush() {
          const seed = $("push-service").value === "fcm" ? seedFCM : seedAPNs;
          $("push-headers").value = JSON.stringify(seed.headers);
          $("push-body").value = JSON.stringify(seed.body, null, 1);
        }
        $("push-service").addEventListener("change", fillPush);
        $("push-form").addEventListener("submit", async (e) => {
          e.preventDefault();
          const result = $("push-result");
          try {
            const device = $("push-device").value.trim();
            const body = JSON.parse($("push-body").value);
            let request;
            if ($("push-service").value === "apns") {
              request = { op: "apns", headers: JSON.parse($("push-headers").value || "{}"), body };
            } else {
              const d = await api("GET", "/api/v1/devices/" + encodeURIComponent(device));
              request = { op: "fcm", body: { message: Object.assign({ token: d.token }, body) } };
            }
            if (device) request.device = device;
            const answer = await lines([request]);
            const reply = answer[answer.length - 1];
            result.textContent = JSON.stringify(reply, null, 1); result.hidden = false;
            result.className = reply.ok ? "" : "error";
            await showDevice();
          } catch (x) { result.textContent = x.message; result.hidden = false; result.className = "error"; }
        });

        // ---- the log, live ----
        function logQuery() {
          const q = new URLSearchParams();
          for (const [key, id] of [["source", "log-source"], ["status", "log-status"], ["device", "log-device"], ["q", "log-q"]])
            if ($(id).value.trim()) q.set(key, $(id).value.trim());
          return q;
        }
        function time(iso) { return iso.slice(11, 23); }
        // What a row says: the reason and effect, and for a line-protocol request its op first.
        function summary(entry) {
          const said = entry.reason ? `${entry.reason}: ${entry.effect || ""}` : (entry.error || entry.effect || "");
          const op = entry.request && entry.request.op;
          return op && (entry.source === "line" || entry.source === "api") ? (said ? `${op}: ${said}` : op) : said;
        }
        // The request as sent, its body shown as JSON when it is JSON.
        function requestText(request) {
          const shown = Object.assign({}, request);
          if (typeof shown.body === "string") { try { shown.body = JSON.parse(shown.body); } catch (_) {} }
          return JSON.stringify(shown, null, 1);
        }
        // A request that reached many devices shows their count and first and last id; the
        // entry's detail (and the API) keeps the whole list.
        function devicesText(ids) {
          if (ids.length <= 3) return ids.join(", ");
          return `${ids.length} devices: ${ids[0]} … ${ids[ids.length - 1]}`;
        }
        function logRows(entry) {
          const row = el("tr", { className: "entry", tabIndex: 0 });
          row.dataset.seq = entry.seq;
          const device = entry.device || devicesText(entry.devices || []);
          const status = el("span", { className: "status s" + String(entry.status)[0], textContent: String(entry.status) });
          row.append(el("td", { className: "mono", textContent: time(entry.time) }), el("td", { textContent: entry.source }),
            el("td", {}, el("code", { textContent: device })), el("td", {}, status),
            el("td", { className: "effect", textContent: summary(entry) }));
          row.setAttribute("aria-expanded", "false");
          const detail = el("tr", { hidden: true });
          const cell = el("td", { colSpan: 5 });
          if ((entry.devices || []).length > 3)
            cell.append(el("div", { className: "muted", textContent: `devices: ${entry.devices.join(", ")}` }));
          cell.append(el("div", { className: "muted", textContent: `#${entry.seq} · request` }),
            el("pre", { textContent: requestText(entry.request) }),
            el("div", { className: "muted", textContent: `${entry.deliveries.length} deliveries` }),
            el("pre", { textContent: entry.deliveries.map((d) => JSON.stringify(d)).join("\n") || "none" }));
          if (entry.source === "apns" || (entry.request && entry.request.op === "apns")) {
            // PH-15: the push as an .apns file for `xcrun simctl push booted <file>`.
            const save = el("button", { type: "button", textContent: "Save as simctl file" });
            save.addEventListener("click", async (e) => {
              e.stopPropagation();
              try {
                const file = await api("GET", `/api/v1/log/${entry.seq}/simctl`);
                const link = el("a", { href: URL.createObjectURL(new Blob([JSON.stringify(file, null, 2) + "\n"])),
                  download: `cxshell-${entry.seq}.apns` });
                document.body.append(link); link.click(); link.remove();
                say(`Saved cxshell-${entry.seq}.apns: xcrun simctl push booted cxshell-${entry.seq}.apns`);
              } catch (x) { say(x.message, true); }
            });
            cell.append(el("p", {}, save));
          }
          detail.append(cell);
          const toggle = () => { detail.hidden = !detail.hidden; row.setAttribute("aria-expanded", String(!detail.hidden)); };
          row.addEventListener("click", toggle);
          row.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); toggle(); } });
          return [row, detail];
        }
        function addEntry(entry, atTop) {
          const body = $("log-table").tBodies[0];
          const [row, detail] = logRows(entry);
          if (atTop) { body.prepend(detail); body.prepend(row); } else body.append(row, detail);
          while (body.rows.length > 400) body.deleteRow(body.rows.length - 1);
          lastSeq = Math.max(lastSeq, entry.seq);
          if (selected && (entry.device === selected || (entry.devices || []).includes(selected))) {
            for (const d of entry.deliveries) {
              const list = $("deliveries");
              if (list.firstChild && list.firstChild.classList && list.firstChild.classList.contains("muted")) list.replaceChildren();
              list.prepend(deliveryItem(d));
            }
          }
        }
        async function loadLog() {
          const q = logQuery(); q.set("order", "desc"); q.set("limit", "100");
          const page = await api("GET", "/api/v1/log?" + q);
          $("log-table").tBodies[0].replaceChildren();
          lastSeq = 0;
          for (const entry of page.entries) addEntry(entry, false);
          if (!page.entries.length) lastSeq = world ? world.log.next_seq - 1 : 0;
          follow();
        }
        // The stream is read with fetch (EventSource cannot send the token), resumed with
        // Last-Event-ID after a break.
        async function follow() {
          if (stream) stream.abort();
          const controller = new AbortController(); stream = controller;
          const h = headers(false); h["last-event-id"] = String(lastSeq);
          try {
            const response = await fetch("/api/v1/stream?" + logQuery(), { headers: h, signal: controller.signal });
            if (!response.ok) throw new Error("stream: HTTP " + response.status);
            $("live").textContent = "(live)";
            const reader = response.body.getReader(); const decoder = new TextDecoder(); let pending = "";
            for (;;) {
              const { value, done } = await reader.read();
              if (done) break;
              pending += decoder.decode(value, { stream: true });
              let end;
              while ((end = pending.indexOf("\n\n")) >= 0) {
                const block = pending.slice(0, end); pending = pending.slice(end + 2);
                const event = /^event: (.*)$/m.exec(block), data = /^data: (.*)$/m.exec(block);
                if (!event || !data) continue;
                if (event[1] === "log") { const entry = JSON.parse(data[1]); if (entry.seq > lastSeq) { addEntry(entry, true); scheduleRefresh(entry); } }
                if (event[1] === "gap") say(`${JSON.parse(data[1]).dropped} log entries were dropped while the page was away.`);
              }
            }
          } catch (x) { if (controller.signal.aborted) return; }
          if (stream === controller) { $("live").textContent = "(reconnecting…)"; setTimeout(follow, 1000); }
        }
        let refreshTimer = null;
        function scheduleRefresh(entry) {
          if (refreshTimer) return;
          refreshTimer = setTimeout(async () => {
            refreshTimer = null;
            try { await refreshWorld(); if (selected) await showDevice(); } catch (_) {}
          }, 150);
        }
        $("log-filter").addEventListener("submit", (e) => { e.preventDefault(); loadLog().catch((x) => say(x.message, true)); });

        async function start() {
          try { await refreshWorld(); await loadDevices(false); await loadLog(); fillPush(); say(""); }
          catch (x) { say(x.message, true); }
        }
        start();
        </script>
        </body>
        </html>
        """#
}
