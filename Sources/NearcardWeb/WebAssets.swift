/// The web app's page, script, style and icon, served from the binary (no CDN, no build step). Card
/// fields are only ever put on the page as text (`textContent`), never as HTML.
enum WebAssets {
    static let index = #"""
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Nearcard</title>
        <link rel="stylesheet" href="/app.css">
        <link rel="icon" href="/icon.svg">
        <script src="/app.js" defer></script>
        </head>
        <body>
        <header>
          <h1><img src="/icon.svg" alt="" width="28" height="28"> Nearcard</h1>
          <p id="me" aria-live="polite"></p>
        </header>
        <nav aria-label="Sections">
          <button type="button" data-tab="nearby" aria-controls="nearby" aria-selected="true">Nearby</button>
          <button type="button" data-tab="requests" aria-controls="requests" aria-selected="false">Requests <span id="request-count"></span></button>
          <button type="button" data-tab="contacts" aria-controls="contacts" aria-selected="false">Contacts</button>
          <button type="button" data-tab="messages" aria-controls="messages" aria-selected="false">Messages <span id="message-count"></span></button>
          <button type="button" data-tab="card" aria-controls="card" aria-selected="false">My card</button>
          <button type="button" data-tab="scan" aria-controls="scan" aria-selected="false">Scan</button>
        </nav>
        <main>
          <p id="notice" role="status" aria-live="polite"></p>
          <section id="nearby" aria-labelledby="nearby-title">
            <h2 id="nearby-title">Nearby</h2>
            <p class="hint">Nodes discovery sees on this network. Names are as announced; the exchange proves who is who.</p>
            <label for="message">Message to send with an exchange (optional)</label>
            <input id="message" maxlength="140" autocomplete="off">
            <ul id="peers" class="list"></ul>
            <p id="no-peers" class="hint">Nobody yet.</p>
          </section>
          <section id="requests" aria-labelledby="requests-title" hidden>
            <h2 id="requests-title">Requests</h2>
            <p class="hint">Compare the code with the one on the other person's screen before you accept.</p>
            <ul id="request-list" class="list"></ul>
            <p id="no-requests" class="hint">No request waits for you.</p>
          </section>
          <section id="contacts" aria-labelledby="contacts-title" hidden>
            <h2 id="contacts-title">Contacts</h2>
            <label for="search">Search</label>
            <input id="search" type="search" autocomplete="off">
            <p>Export all: <a href="/api/export/vcard" download>vCard</a> · <a href="/api/export/json" download>JSON</a> · <a href="/api/export/graph" download>social graph</a></p>
            <ul id="contact-list" class="list"></ul>
            <article id="contact" aria-live="polite" hidden></article>
          </section>
          <section id="messages" aria-labelledby="messages-title" hidden>
            <h2 id="messages-title">Messages</h2>
            <p class="hint">Private and end to end, to the node of someone you exchanged cards with in person.</p>
            <form id="write">
              <label for="to">To</label>
              <select id="to" required></select>
              <label for="text">Message</label>
              <textarea id="text" rows="3" maxlength="4096" required></textarea>
              <button type="submit">Send</button>
            </form>
            <h3>Received</h3>
            <ul id="inbox" class="list"></ul>
            <h3>Sent</h3>
            <button type="button" id="retry">Try queued messages now</button>
            <ul id="outbox" class="list"></ul>
          </section>
          <section id="card" aria-labelledby="card-title" hidden>
            <h2 id="card-title">My card</h2>
            <form id="card-form">
              <div class="field"><label for="f-name">Name</label><input id="f-name" name="name" required maxlength="256"><label class="share"><input type="checkbox" data-share="name" checked disabled> always shared</label></div>
              <div class="field"><label for="f-title">Title</label><input id="f-title" name="title" maxlength="256"><label class="share"><input type="checkbox" data-share="title"> share</label></div>
              <div class="field"><label for="f-company">Company</label><input id="f-company" name="company" maxlength="256"><label class="share"><input type="checkbox" data-share="company"> share</label></div>
              <div class="field"><label for="f-email">Email</label><input id="f-email" name="email" maxlength="256"><label class="share"><input type="checkbox" data-share="email"> share</label></div>
              <div class="field"><label for="f-phone">Phone</label><input id="f-phone" name="phone" maxlength="256"><label class="share"><input type="checkbox" data-share="phone"> share</label></div>
              <div class="field"><label for="f-socials">Social profiles (one per line: platform:handle:url)</label><textarea id="f-socials" name="socialNetworks" rows="3"></textarea><label class="share"><input type="checkbox" data-share="socialNetworks"> share</label></div>
              <div class="field"><label for="f-skills">Skills (one per line: name:category:proficiency)</label><textarea id="f-skills" name="skills" rows="3"></textarea><label class="share"><input type="checkbox" data-share="skills"> share</label></div>
              <button type="submit">Save card</button>
            </form>
            <h3>What a peer receives</h3>
            <dl id="preview" aria-live="polite"></dl>
            <h3>As a QR code</h3>
            <label for="qr-format">Format</label>
            <select id="qr-format"><option value="zk">zk (any scanner can check it)</option><option value="did-signed">did-signed</option><option value="plaintext">plaintext</option></select>
            <p><img id="qr" alt="Your card as a QR code" width="320" height="320"></p>
            <p id="qr-frame" class="hint"></p>
            <a id="qr-png" href="#" download>Download PNG</a>
          </section>
          <section id="scan" aria-labelledby="scan-title" hidden>
            <h2 id="scan-title">Scan a code</h2>
            <p class="hint">A photo or screenshot of someone's QR code (PNG or JPEG), or the code's text. What it carries is kept as <code>nearcard qr scan</code> keeps it.</p>
            <label for="scan-file">Image</label>
            <input id="scan-file" type="file" accept="image/png,image/jpeg">
            <label for="scan-text">Or the code's text</label>
            <textarea id="scan-text" rows="3"></textarea>
            <button type="button" id="scan-go">Read</button>
            <ul id="scan-results" class="list" aria-live="polite"></ul>
          </section>
        </main>
        </body>
        </html>
        """#

    static let script = #"""
        "use strict";
        // Nearcard's page: state from /api/state, then every node event from /api/events (server-sent events).
        // Everything from the network or the store is put on the page with textContent, never as HTML.
        const $ = (id) => document.getElementById(id);
        const state = { peers: new Map(), requests: new Map(), contacts: [], timeout: 60 };

        function el(tag, text, attrs) {
          const e = document.createElement(tag);
          if (text !== undefined && text !== null) e.textContent = text;
          for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
          return e;
        }

        async function api(method, path, body) {
          const r = await fetch(path, { method, headers: body ? { "Content-Type": "application/json" } : {},
                                        body: body ? JSON.stringify(body) : undefined, credentials: "same-origin" });
          const data = await r.json().catch(() => ({}));
          if (!r.ok) throw new Error(data.error || ("the node answered " + r.status));
          return data;
        }

        function notice(text) { $("notice").textContent = text; }

        function show(tab) {
          for (const b of document.querySelectorAll("nav button")) b.setAttribute("aria-selected", String(b.dataset.tab === tab));
          for (const s of ["nearby", "requests", "contacts", "messages", "card", "scan"]) $(s).hidden = s !== tab;
          if (tab === "messages") loadMessages();
          if (tab === "contacts") loadContacts();
          if (tab === "card") loadCard();
        }

        function renderPeers() {
          const list = $("peers");
          list.replaceChildren();
          // Before a session nothing is proven: a contact recognised by their presence tag, the name a
          // stranger announces, or "someone nearby (private)"; the fingerprint shows once a session proves it.
          const shown = (p) => p.display || p.name || p.instance;
          for (const p of [...state.peers.values()].sort((a, b) => shown(a).localeCompare(shown(b)))) {
            const li = el("li", null, { "data-instance": p.instance });
            const how = p.contact ? " recognised by their presence tag" : p.name ? " announced name, not proven" : "";
            li.append(el("strong", shown(p)), el("span", how, { class: "fp" }));
            const b = el("button", "Exchange", { type: "button", "aria-label": "Exchange cards with " + shown(p) });
            b.addEventListener("click", () => exchange(p));
            li.append(b);
            list.append(li);
          }
          $("no-peers").hidden = state.peers.size > 0;
        }

        async function exchange(p) {
          try {
            await api("POST", "/api/exchange", { peer: p.id || p.instance, message: $("message").value });
            notice("Asking " + (p.display || p.name || p.instance) + "…");
          } catch (e) { notice("Cannot exchange: " + e.message); }
        }

        function renderRequests() {
          const list = $("request-list");
          list.replaceChildren();
          for (const r of state.requests.values()) {
            const li = el("li", null, { "data-request": r.id, class: "request" });
            const who = r.peer || {};
            if (r.waiting) {
              // We asked; the check code is known, and who answers is not yet (they show themselves when they accept).
              li.classList.add("waiting");
              li.append(el("strong", "Waiting for them to accept"),
                        el("p", r.sas, { class: "code", "aria-label": "Check code " + r.sas }),
                        el("span", "Compare this code with their screen; you confirm once they accept.", { class: "fp" }));
              list.append(li);
              continue;
            }
            li.append(el("strong", who.name || "(no name)"),
                      el("span", (r.role === "initiator" ? "you asked" : "asks you") + " — fingerprint " + who.fingerprint, { class: "fp" }),
                      el("span", who.did, { class: "did" }));
            li.append(el("p", r.sas, { class: "code", "aria-label": "Check code " + r.sas }));
            const left = el("span", "", { class: "countdown", "data-deadline": r.deadline || "" });
            li.append(left);
            const msg = el("input", null, { maxlength: "140", "aria-label": "Message for " + (who.name || "them") + " (optional)" });
            const yes = el("button", r.role === "initiator" ? "Codes match" : "Accept", { type: "button" });
            const no = el("button", r.role === "initiator" ? "They differ" : "Decline", { type: "button" });
            yes.addEventListener("click", () => answer(r.id, true, msg.value));
            no.addEventListener("click", () => answer(r.id, false, "", r.role === "initiator" ? "the check codes differ" : undefined));
            li.append(msg, yes, no);
            list.append(li);
          }
          $("no-requests").hidden = state.requests.size > 0;
          $("request-count").textContent = state.requests.size ? "(" + state.requests.size + ")" : "";
          tick();
        }

        function tick() {
          for (const c of document.querySelectorAll(".countdown")) {
            const d = Date.parse(c.dataset.deadline);
            if (!isNaN(d)) c.textContent = Math.max(0, Math.round((d - Date.now()) / 1000)) + " s to answer";
          }
        }

        async function answer(id, accept, message, reason) {
          try {
            await api("POST", "/api/requests/" + encodeURIComponent(id), { accept, message, reason });
            notice(accept ? "Accepted: exchanging…" : "Declined.");
          } catch (e) { notice("Cannot answer: " + e.message); }
        }

        async function loadContacts() {
          try { state.contacts = await api("GET", "/api/contacts"); } catch (e) { notice(e.message); return; }
          renderContacts();
        }

        function renderContacts() {
          const q = $("search").value.toLowerCase();
          const list = $("contact-list");
          list.replaceChildren();
          for (const c of state.contacts) {
            if (q && !JSON.stringify([c.name, c.company, c.email, c.title]).toLowerCase().includes(q)) continue;
            const li = el("li", null, { "data-contact": c.id });
            const b = el("button", c.name, { type: "button", class: "link" });
            b.addEventListener("click", () => showContact(c));
            li.append(b, el("span", c.verificationStatus, { class: "badge " + c.verificationStatus }), el("span", c.source, { class: "fp" }));
            list.append(li);
          }
        }

        function showContact(c) {
          const a = $("contact");
          a.replaceChildren(el("h3", c.name), el("p", c.verificationStatus + " · " + c.source, { class: "badge " + c.verificationStatus }));
          const dl = el("dl");
          for (const [k, v] of [["Title", c.title], ["Company", c.company], ["Email", c.email], ["Phone", c.phone],
                                ["Their message", c.theirEphemeralMessage], ["Your message", c.myEphemeralMessage],
                                ["Member of", c.memberOf], ["Group proof", c.groupVerdict], ["Tags", (c.tags || []).join(", ")],
                                ["DID", c.didPublicKey], ["Received", c.receivedAt]]) {
            if (v) dl.append(el("dt", k), el("dd", v));
          }
          const card = el("a", "Download vCard", { href: "/api/contacts/" + encodeURIComponent(c.id) + "/vcard", download: "" });
          a.append(dl, el("p", null).appendChild(card).parentNode);
          const del = el("button", "Delete " + c.name, { type: "button" });
          del.addEventListener("click", async () => {
            if (!confirm("Delete " + c.name + "?")) return;
            try { await api("DELETE", "/api/contacts/" + encodeURIComponent(c.id)); a.hidden = true; loadContacts(); }
            catch (e) { notice(e.message); }
          });
          a.append(del);
          a.hidden = false;
        }

        async function loadMessages() {
          let m, contacts;
          try { m = await api("GET", "/api/messages"); contacts = await api("GET", "/api/contacts"); } catch (e) { notice(e.message); return; }
          const to = $("to"), chosen = to.value;
          to.replaceChildren();
          for (const c of contacts.filter((c) => c.sealedRoute)) to.append(el("option", c.name, { value: c.id }));
          if (chosen) to.value = chosen;
          $("inbox").replaceChildren(...m.inbox.map((i) => {
            const li = el("li");
            li.append(el("strong", i.contact || i.from), el("span", i.text, { class: "text" }), el("span", i.receivedAt || "", { class: "fp" }));
            return li;
          }));
          $("outbox").replaceChildren(...m.outbox.map((o) => {
            const li = el("li");
            li.append(el("strong", o.contact || ""), el("span", o.text === null || o.text === undefined ? "(text removed after delivery)" : o.text, { class: "text" }), el("span", o.state + (o.lastError ? " — " + o.lastError : ""), { class: "badge " + (o.state === "delivered" ? "verified" : o.state) }));
            return li;
          }));
          $("message-count").textContent = "";
        }

        async function send(e) {
          e.preventDefault();
          try {
            const item = await api("POST", "/api/messages", { contact: $("to").value, text: $("text").value });
            notice(item.state === "delivered" ? "Delivered." : item.state === "queued" ? "Queued: delivered when they are around." : "Not delivered: " + (item.lastError || item.state));
            $("text").value = "";
            loadMessages();
          } catch (err) { notice("Not sent: " + err.message); }
        }

        async function scan() {
          const file = $("scan-file").files[0];
          let r;
          try {
            if (file) {
              const type = file.type || (file.name.toLowerCase().endsWith(".png") ? "image/png" : "image/jpeg");
              r = await fetch("/api/scan", { method: "POST", headers: { "Content-Type": type }, body: file, credentials: "same-origin" });
            } else {
              r = await fetch("/api/scan", { method: "POST", headers: { "Content-Type": "application/json" }, credentials: "same-origin",
                                             body: JSON.stringify({ text: $("scan-text").value }) });
            }
            const data = await r.json();
            if (!r.ok) throw new Error(data.error || ("the node answered " + r.status));
            $("scan-results").replaceChildren(...data.map((x) => {
              const li = el("li");
              if (x.result === "contact") {
                li.append(el("strong", x.name), el("span", x.format + ", " + x.verificationStatus, { class: "badge " + x.verificationStatus }),
                          el("span", x.summary + ". " + x.reason, { class: "fp" }));
              } else if (x.result === "partial") {
                li.append(el("span", "Part of a larger code: " + x.received + " of " + x.total + " frames"));
              } else if (x.result === "error") {
                li.append(el("span", "Not usable: " + x.message));
              } else {
                li.append(el("span", x.result + (x.note ? ": " + x.note : "")));
              }
              return li;
            }));
            $("scan-file").value = "";
          } catch (e) { notice("Cannot read it: " + e.message); }
        }

        const textFields = ["name", "title", "company", "email", "phone"];

        async function loadCard() {
          let s;
          try { s = await api("GET", "/api/card"); } catch (e) { notice(e.message); return; }
          const c = s.card || {};
          for (const f of textFields) $("f-" + f).value = c[f] || "";
          $("f-socials").value = (c.socialNetworks || []).map((p) => [p.platform, p.username, p.url || ""].join(":").replace(/:$/, "")).join("\n");
          $("f-skills").value = (c.skills || []).map((k) => [k.name, k.category || "", k.proficiency || ""].join(":").replace(/:+$/, "")).join("\n");
          for (const box of document.querySelectorAll("[data-share]")) box.checked = box.dataset.share === "name" || s.sharing.includes(box.dataset.share);
          renderPreview();
          loadCode();
        }

        function formCard() {
          const card = {};
          for (const f of textFields) card[f] = $("f-" + f).value;
          card.socialNetworks = $("f-socials").value.split("\n");
          card.skills = $("f-skills").value.split("\n");
          return card;
        }

        function sharedFields() { return [...document.querySelectorAll("[data-share]")].filter((b) => b.checked).map((b) => b.dataset.share); }

        function renderPreview() {
          const dl = $("preview");
          dl.replaceChildren();
          const card = formCard();
          const labels = { name: "Name", title: "Title", company: "Company", email: "Email", phone: "Phone", socialNetworks: "Social", skills: "Skills" };
          for (const f of sharedFields()) {
            let v = card[f];
            if (Array.isArray(v)) v = v.filter((x) => x.trim()).join(", ");
            if (v && v.trim()) dl.append(el("dt", labels[f]), el("dd", v));
          }
        }

        let frames = 1, frame = 0;
        async function loadCode() {
          const format = $("qr-format").value;
          try { frames = (await api("GET", "/api/card/qr?format=" + format)).frames; } catch (e) { $("qr-frame").textContent = e.message; return; }
          frame = 0;
          showFrame();
        }

        function showFrame() {
          const format = $("qr-format").value;
          $("qr").src = "/api/card/qr.svg?format=" + format + "&frame=" + frame + "&t=" + Date.now();
          $("qr-png").href = "/api/card/qr.png?format=" + format + "&frame=" + frame;
          $("qr-frame").textContent = frames > 1 ? "Frame " + (frame + 1) + " of " + frames + " (scan them all)" : "";
        }

        async function saveCard(e) {
          e.preventDefault();
          try {
            await api("PUT", "/api/card", formCard());
            await api("PUT", "/api/sharing", { fields: sharedFields() });
            notice("Saved: the next exchange sends this card.");
            loadCard();
          } catch (err) { notice("Not saved: " + err.message); }
        }

        let events = null, stopped = false;
        function onEvent(ev) {
          switch (ev.event) {
            case "peer.found": state.peers.set(ev.instance, ev); renderPeers(); break;
            case "peer.lost": state.peers.delete(ev.instance); renderPeers(); break;
            case "exchange.check-code":
              state.requests.set(ev.id, { id: ev.id, sas: ev.sas, waiting: true }); renderRequests(); show("requests");
              break;
            case "exchange.requested":
              if (ev.decision === "pending") { state.requests.set(ev.id, ev); renderRequests(); show("requests"); }
              else if (state.requests.has(ev.id)) { state.requests.delete(ev.id); renderRequests(); }
              break;
            case "exchange.unconfirmed": {
              state.requests.delete(ev.id); renderRequests();
              const c = ev.contact;
              notice(c.name + "'s node may have kept your card: the connection ended before it confirmed. Kept here as unconfirmed; it is settled when your nodes next reach each other.");
              show("contacts"); loadContacts().then(() => showContact(c));
              break;
            }
            case "exchange.completed": {
              state.requests.delete(ev.id); renderRequests();
              const c = ev.contact;
              notice("Exchanged cards with " + c.name + " (" + c.verificationStatus + ")" + (ev.theirMessage ? ": “" + ev.theirMessage + "”" : ""));
              show("contacts"); loadContacts().then(() => showContact(c));
              break;
            }
            case "exchange.failed":
              state.requests.delete(ev.id); renderRequests();
              notice("Exchange " + (ev.byPeer ? "ended by them" : "failed") + ": " + ev.reason + " (" + ev.code + "); nothing was stored");
              break;
            case "exchange.error": notice("Cannot exchange with " + ev.peer + ": " + ev.reason); break;
            case "stopped":
              stopped = true; events.close();
              notice("Nearcard stopped on this computer. Run nearcard ui again to open it.");
              break;
            case "message.received":
              notice("Message from " + (ev.contact || ev.from) + ": " + ev.text);
              if (!$("messages").hidden) loadMessages(); else $("message-count").textContent = "(new)";
              break;
            case "discovery-unavailable": notice("Discovery is unavailable: " + ev.message); break;
          }
        }

        async function start() {
          for (const b of document.querySelectorAll("nav button")) b.addEventListener("click", () => show(b.dataset.tab));
          $("search").addEventListener("input", renderContacts);
          $("card-form").addEventListener("submit", saveCard);
          $("write").addEventListener("submit", send);
          $("scan-go").addEventListener("click", scan);
          $("retry").addEventListener("click", async () => {
            try { const r = await api("POST", "/api/outbox/retry", {}); notice("Tried " + r.tried + ": " + r.delivered + " delivered."); loadMessages(); }
            catch (e) { notice(e.message); }
          });
          $("card-form").addEventListener("input", renderPreview);
          $("card-form").addEventListener("change", renderPreview);
          $("qr-format").addEventListener("change", loadCode);
          setInterval(() => { if (!$("card").hidden && frames > 1) { frame = (frame + 1) % frames; showFrame(); } }, 1500);
          try {
            const s = await api("GET", "/api/state");
            $("me").textContent = (s.me.name || "(no name)") + " · fingerprint " + s.me.fingerprint;
            for (const p of s.peers) state.peers.set(p.instance, p);
            for (const r of s.requests) state.requests.set(r.id, r);
            if (!s.discovers) notice("Discovery is unavailable: peers cannot see this node, nor it them (try nearcard doctor).");
          } catch (e) { notice(e.message); }
          renderPeers(); renderRequests();
          events = new EventSource("/api/events");
          events.onmessage = (m) => { try { onEvent(JSON.parse(m.data)); } catch (e) { /* a line we do not know */ } };
          events.onerror = () => { if (!stopped) notice("Lost the node; reconnecting…"); };
          setInterval(tick, 1000);
          document.body.dataset.ready = "true";
        }
        start();
        """#

    static let style = #"""
        :root { color-scheme: light dark; --accent: #2457c5; --ok: #1b7f3b; --bad: #b3261e; font: 16px/1.45 system-ui, sans-serif; }
        @media (prefers-color-scheme: dark) { :root { --accent: #8ab4ff; --ok: #7fd49b; --bad: #ff8a80; } }
        body { margin: 0 auto; max-width: 52rem; padding: 0 1rem 3rem; }
        header h1 { display: flex; align-items: center; gap: .5rem; margin-bottom: 0; }
        nav { display: flex; gap: .5rem; margin: 1rem 0; flex-wrap: wrap; }
        nav button[aria-selected="true"] { border-color: var(--accent); font-weight: 600; }
        button { font: inherit; padding: .35rem .8rem; border-radius: .4rem; border: 1px solid currentColor; background: transparent; color: inherit; cursor: pointer; }
        button:focus-visible, input:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
        button.link { border: none; text-decoration: underline; padding: 0; }
        input { font: inherit; padding: .3rem; margin: .2rem 0 .8rem; width: min(100%, 24rem); display: block; }
        .list { list-style: none; padding: 0; }
        .list li { display: flex; flex-wrap: wrap; gap: .6rem; align-items: center; padding: .6rem 0; border-bottom: 1px solid color-mix(in srgb, currentColor 20%, transparent); }
        .fp, .did, .hint, .countdown { opacity: .75; font-size: .9rem; }
        .did { word-break: break-all; flex-basis: 100%; }
        .code { font-size: 2.6rem; font-weight: 700; letter-spacing: .15em; margin: .2rem 0; flex-basis: 100%; font-variant-numeric: tabular-nums; }
        .badge.verified { color: var(--ok); } .badge.failed { color: var(--bad); }
        dl { display: grid; grid-template-columns: max-content 1fr; gap: .2rem 1rem; } dd { margin: 0; word-break: break-word; }
        .field { display: grid; grid-template-columns: 1fr auto; gap: 0 1rem; align-items: end; }
        .field label:first-child { grid-column: 1 / -1; }
        .field input:not([type]), .field textarea { width: 100%; box-sizing: border-box; }
        textarea, select { font: inherit; margin: .2rem 0 .8rem; display: block; }
        #scan textarea, #messages textarea { width: min(100%, 36rem); box-sizing: border-box; }
        .share { font-size: .9rem; white-space: nowrap; margin-bottom: .8rem; display: inline-flex; align-items: center; gap: .3rem; }
        #qr { background: #fff; padding: 8px; max-width: 100%; height: auto; }
        #notice:empty { display: none; } #notice { padding: .5rem .8rem; border-left: 4px solid var(--accent); }
        """#

    static let icon = #"""
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect x="4" y="12" width="40" height="28" rx="4" fill="none" stroke="#2457c5" stroke-width="4"/><rect x="20" y="24" width="40" height="28" rx="4" fill="#2457c5"/><circle cx="32" cy="38" r="5" fill="#fff"/></svg>
        """#
}
