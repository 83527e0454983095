// Nearcard's page: state from /api/state, then every node event from /api/events (server-sent events).
// Everything from the network or the store is put on the page with textContent, never as HTML.
const $ = (id) => document.getElementById(id);

// The page's words in its language (docs/TRANSLATING.md): the node serves the page translated, with
// the script's words in a JSON element (no inline script runs). t(words, ...values) gives their
// translation with its numbered placeholders (%1$@, %2$@) filled; the English words when there is none.
const WORDS = JSON.parse(($("words") || {}).textContent || "{}");
function t(id, ...args) {
  return (WORDS[id] || id).replace(/%(\d+)\$@/g, (m, n) => (args[n - 1] === undefined ? m : String(args[n - 1])));
}
// Dates, times and numbers in the page's language.
const LANG = document.documentElement.lang || "en";
const state = { peers: new Map(), requests: new Map(), contacts: [], timeout: 60 };

// The card's fields are the card form's inputs and textareas, which the node writes from its field
// table; their words are that table's labels (GET /api/card "labels"), or the form's own label until
// that has been read.
const textFields = [...document.querySelectorAll("#card-form input[name]")].map((i) => i.name);
const listFields = [...document.querySelectorAll("#card-form textarea[data-list]")].map((t) => t.dataset.list);
// A list field's items as the form shows them, one a line, in the form its label gives.
const listItem = {
  socialNetworks: (p) => [p.platform, p.username, p.url || ""].join(":").replace(/:$/, ""),
  skills: (k) => [k.name, k.category || "", k.proficiency || ""].join(":").replace(/:+$/, ""),
};
let fieldLabels = {};
const labelOf = (f) => (fieldLabels[f] ? t(fieldLabels[f]) : $("f-" + f) && $("f-" + f).labels[0] ? $("f-" + f).labels[0].textContent : f);

function el(tag, text, attrs) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) {
    e.textContent = text;
    // Each piece of text is isolated (dir="auto"): a right-to-left name cannot reorder what is around it.
    e.setAttribute("dir", "auto");
  }
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

async function api(method, path, body) {
  const r = await fetch(path, { method, headers: body ? { "Content-Type": "application/json" } : {},
                                body: body ? JSON.stringify(body) : undefined, credentials: "same-origin" });
  const data = await r.json().catch(() => ({}));
  if (!r.ok) {
    // The node's words, in the page's language when the catalogs have them.
    const err = new Error(data.error ? t(data.error) : t("the node answered %1$@", r.status));
    err.field = data.field;
    throw err;
  }
  return data;
}

function notice(text) { $("notice").textContent = text; }

// A person's initials in a circle (decorative: the name is next to it).
// A contact's face: its photo when its card carried one (served by the node), else its initials.
function face(c) {
  if (!c.photo) return initials(c.name);
  return el("img", null, { class: "initials", src: "/api/contacts/" + encodeURIComponent(c.id) + "/photo", alt: "", width: "40", height: "40" });
}

function initials(name) {
  const letters = String(name || "?").trim().split(/\s+/).filter(Boolean).slice(0, 2).map((w) => [...w][0].toUpperCase()).join("");
  return el("span", letters || "?", { class: "initials", "aria-hidden": "true" });
}

// Times as people say them, in the browser's language: "today 14:05", "yesterday 09:12", "Tuesday
// 18:30", then a date ("12 Nov 2026"); the exact time is the element's title and datetime.
function when(iso) {
  const at = new Date(iso);
  if (!iso || isNaN(at)) return iso || "";
  const time = at.toLocaleTimeString(LANG, { hour: "2-digit", minute: "2-digit" });
  const midnight = (d) => new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
  const days = Math.round((midnight(new Date()) - midnight(at)) / 86400000);
  if (days >= -1 && days <= 1) return new Intl.RelativeTimeFormat(LANG, { numeric: "auto" }).format(-days, "day") + " " + time;
  if (days > 1 && days < 7) return at.toLocaleDateString(LANG, { weekday: "long" }) + " " + time;
  return at.toLocaleDateString(LANG, { day: "numeric", month: "short", year: "numeric" });
}

function timeEl(iso, before) {
  return el("time", (before || "") + when(iso), { datetime: iso, title: new Date(iso).toLocaleString(LANG), class: "fp" });
}

// How a contact came and whether its card was checked, in words.
function metWords(c) {
  const how = { proximity: t("met in person"), qrCode: t("from a QR code"), manual: t("added by hand") }[c.source] || c.source;
  const checked = { verified: t("checked"), unverified: t("not checked"), failed: t("the check failed"), pending: t("being checked") }[c.verificationStatus] || c.verificationStatus;
  return t("%1$@, %2$@", how, checked);
}

const tabs = () => [...document.querySelectorAll('[role="tab"]')];

function show(tab) {
  // The tab list (WAI-ARIA tabs): the selected tab is the one stop of the list; arrows move between tabs.
  for (const b of tabs()) {
    const selected = b.dataset.tab === tab;
    b.setAttribute("aria-selected", String(selected));
    b.tabIndex = selected ? 0 : -1;
  }
  for (const s of ["nearby", "requests", "contacts", "messages", "card", "scan"]) $(s).hidden = s !== tab;
  if (tab === "messages") loadMessages();
  if (tab === "contacts") { loadContacts(); loadAddressBooks(); }
  if (tab === "card") loadCard();
}

// Nearby as the node recognises it now (a deleted contact is a stranger again at once).
async function refreshPeers() {
  try {
    const s = await api("GET", "/api/state");
    state.peers = new Map(s.peers.map((p) => [p.instance, p]));
    renderPeers();
  } catch (e) { /* the next event brings it */ }
}

function renderPeers() {
  const list = $("peers");
  list.replaceChildren();
  // Before a session nothing is proven: a contact recognised by their presence tag, the name a
  // stranger announces, or "someone nearby (private)"; the fingerprint shows once a session proves it.
  const shown = (p) => (p.thisNode ? t("%1$@ (this node)", p.name || t("your own node")) : p.contact ? t("%1$@ (contact)", p.contact.name)
    : p.name || (p.display ? t("someone nearby (private)") : p.instance));
  for (const p of [...state.peers.values()].sort((a, b) => shown(a).localeCompare(shown(b)))) {
    const li = el("li", null, { "data-instance": p.instance });
    const how = p.thisNode ? t("your own node, announced with your presence key") : p.contact ? t("recognised by their presence tag") : p.name ? t("announced name, not proven") : "";
    // Contact, announced or private, at a glance.
    const kind = p.thisNode ? "this node" : p.contact ? "contact" : p.name ? "announced" : "private";
    const kindWords = { "this node": t("this node"), contact: t("contact"), announced: t("announced"), private: t("private") }[kind];
    li.append(initials(p.contact ? p.contact.name : p.name), el("strong", shown(p)),
              el("span", kindWords, { class: "kind " + kind.replace(" ", "-") }), el("span", how, { class: "fp" }));
    // Your own node is not someone to exchange cards with.
    if (!p.thisNode) {
      const b = el("button", t("Exchange"), { type: "button", class: "primary", "aria-label": t("Exchange cards with %1$@", shown(p)) });
      b.addEventListener("click", () => exchange(p));
      li.append(b);
    }
    list.append(li);
  }
  $("no-peers").hidden = state.peers.size > 0;
  $("no-peers").setAttribute("aria-live", "polite");
}

// A notice that an action starts is shown before its request, not after: the events it causes can
// arrive before the request's answer, and a later "Asking…" or "Accepted…" would hide how it ended.
async function exchange(p) {
  notice(t("Asking %1$@…", p.name || p.instance));
  try {
    await api("POST", "/api/exchange", { peer: p.id || p.instance, message: $("message").value });
    // The message went with this exchange: it does not stay to go with the next one, to anyone.
    $("message").value = "";
  } catch (e) { notice(t("Cannot exchange: %1$@", e.message)); }
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
      li.append(el("strong", t("Waiting for them to accept")),
                el("p", r.sas, { class: "code", "aria-label": t("Check code %1$@", r.sas) }),
                el("span", t("Compare this code with their screen; you confirm once they accept."), { class: "fp" }));
      list.append(li);
      continue;
    }
    li.append(initials(who.name), el("strong", who.name || t("(no name)")),
              el("span", r.role === "initiator" ? t("answered you") : t("asks to exchange cards with you"), { class: "fp" }));
    li.append(el("p", r.sas, { class: "code", "aria-label": t("Check code %1$@", r.sas) }));
    const left = el("span", "", { class: "countdown", "data-deadline": r.deadline || "" });
    li.append(left);
    // Who their node proved to be, for those who look: behind a disclosure.
    const more = el("details");
    const dl = el("dl");
    dl.append(el("dt", t("Fingerprint")), el("dd", who.fingerprint), el("dt", t("DID")), el("dd", who.did, { class: "did" }));
    more.append(el("summary", t("Details")), dl);
    li.append(more);
    const msgId = "msg-" + r.id;
    const msg = el("input", null, { id: msgId, maxlength: "140" });
    li.append(el("label", who.name ? t("Message for %1$@ (optional)", who.name) : t("Message for them (optional)"), { for: msgId }));
    const yes = el("button", r.role === "initiator" ? t("Codes match") : t("Accept"), { type: "button", class: "primary" });
    const no = el("button", r.role === "initiator" ? t("They differ") : t("Decline"), { type: "button" });
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
    if (!isNaN(d)) c.textContent = t("%1$@ s to answer", Math.max(0, Math.round((d - Date.now()) / 1000)).toLocaleString(LANG));
  }
}

async function answer(id, accept, message, reason) {
  notice(accept ? t("Accepted: exchanging…") : t("Declined."));
  try {
    await api("POST", "/api/requests/" + encodeURIComponent(id), { accept, message, reason });
  } catch (e) { notice(t("Cannot answer: %1$@", e.message)); }
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
    if (q && !JSON.stringify(textFields.map((f) => c[f])).toLowerCase().includes(q)) continue;
    const li = el("li", null, { "data-contact": c.id });
    const b = el("button", c.name, { type: "button", class: "link" });
    b.addEventListener("click", () => showContact(c));
    li.append(face(c), b, el("span", metWords(c), { class: "badge " + c.verificationStatus }));
    if (c.receivedAt) li.append(timeEl(c.receivedAt));
    list.append(li);
  }
  $("no-contacts").hidden = state.contacts.length > 0;
}

function showContact(c) {
  const a = $("contact");
  const met = metWords(c);
  a.replaceChildren(el("h3", c.name), el("p", met[0].toUpperCase() + met.slice(1) + (c.receivedAt ? " · " + when(c.receivedAt) : ""), { class: "badge " + c.verificationStatus }));
  if (c.photo) a.append(el("img", null, { class: "photo", src: "/api/contacts/" + encodeURIComponent(c.id) + "/photo", alt: t("Photo of %1$@", c.name), width: "128", height: "128" }));
  const dl = el("dl");
  const fields = textFields.filter((f) => f !== "name").map((f) => [labelOf(f), c[f]]);
  for (const [k, v] of [...fields,
                        [t("Their message"), c.theirEphemeralMessage], [t("Your message"), c.myEphemeralMessage],
                        [t("Card"), c.olderCard], [t("Member of"), c.memberOf], [t("Group proof"), c.groupVerdict], [t("Tags"), (c.tags || []).join(", ")]]) {
    if (v) dl.append(el("dt", k), el("dd", v));
  }
  // What proves who they are, and the exact times: behind a disclosure.
  const more = el("details");
  const facts = el("dl");
  for (const [k, v] of [[t("DID"), c.didPublicKey], [t("Verification"), c.verificationStatus], [t("Source"), c.source], [t("Received"), c.receivedAt],
                        [t("Exchanged"), c.exchangeTimestamp]]) {
    if (v) facts.append(el("dt", k), el("dd", v));
  }
  more.append(el("summary", t("Details")), facts);
  const card = el("a", t("Download vCard"), { href: "/api/contacts/" + encodeURIComponent(c.id) + "/vcard", download: "" });
  a.append(dl, more, el("p", null).appendChild(card).parentNode);
  const del = el("button", t("Delete %1$@", c.name), { type: "button" });
  del.addEventListener("click", async () => {
    if (!confirm(t("Delete %1$@?", c.name))) return;
    try { await api("DELETE", "/api/contacts/" + encodeURIComponent(c.id)); a.hidden = true; loadContacts(); refreshPeers(); }
    catch (e) { notice(e.message); }
  });
  a.append(del);
  a.hidden = false;
}

// The CardDAV address books (docs/ADDRESSBOOK.md): each with its state, "Sync now", adding one.
async function loadAddressBooks() {
  let books;
  try { books = await api("GET", "/api/addressbooks"); } catch (e) { notice(e.message); return; }
  $("ab-list").replaceChildren(...books.map((b) => {
    const li = el("li", null, { "data-addressbook": b.url });
    const waiting = b.toWrite + b.toDelete;
    const notices = b.notices || [];
    const gone = notices.filter((n) => n.kind === "goneOnServer");
    const both = notices.filter((n) => n.kind === "conflict");
    let words = b.lastError ? t("not synced: %1$@", b.lastError) : waiting ? t("%1$@ waiting", waiting.toLocaleString(LANG)) : t("in sync (%1$@)", b.synced.toLocaleString(LANG));
    if (!b.lastError && gone.length) words += " · " + t("%1$@ deleted there", gone.length.toLocaleString(LANG));
    if (!b.lastError && both.length) words += " · " + t("%1$@ changed on both sides", both.length.toLocaleString(LANG));
    li.append(el("strong", b.url, { class: "url" }), el("span", b.user, { class: "fp" }), b.lastSync ? timeEl(b.lastSync, t("last sync") + " ") : el("span", t("never synced"), { class: "fp" }),
              el("span", words, { class: "badge " + (b.lastError ? "failed" : waiting || notices.length ? "pending" : "verified") }));
    // What happened to cards there, in words, beside the account.
    for (const n of gone) li.append(el("p", t("%1$@: deleted in this address book, kept here.", n.name), { class: "ab-notice" }));
    for (const n of both) li.append(el("p", t("%1$@: changed there and by a newer card from them (%2$@); the address book's edit was kept.", n.name, n.fields), { class: "ab-notice" }));
    const remove = el("button", t("Remove"), { type: "button", "aria-label": t("Stop syncing to %1$@", b.url) });
    remove.addEventListener("click", async () => {
      if (!confirm(t("Stop syncing to %1$@? The cards already there stay there.", b.url))) return;
      try { await api("POST", "/api/addressbooks/remove", { url: b.url }); loadAddressBooks(); } catch (e) { notice(e.message); }
    });
    li.append(remove);
    return li;
  }));
  $("ab-sync").hidden = books.length === 0;
  // A conflict is said on the page too, where a person looks first (unless something else is being said).
  const conflicts = books.flatMap((b) => (b.notices || []).filter((n) => n.kind === "conflict"));
  if (conflicts.length && !$("notice").textContent) {
    notice(t("Changed on both sides in your address book: %1$@. The address book's edit was kept (Contacts › Address book).", conflicts.map((n) => n.name + " (" + n.fields + ")").join(", ")));
  }
}

// Said beside the address-book form: what is happening, or what to correct and where.
function abSay(status, error, field) {
  $("ab-status").textContent = status || "";
  $("ab-error").textContent = error || "";
  for (const id of ["ab-url", "ab-user", "ab-password"]) {
    const bad = !!error && id === "ab-" + (field || "url");
    if (bad) { $(id).setAttribute("aria-invalid", "true"); $(id).setAttribute("aria-describedby", "ab-error"); }
    else { $(id).removeAttribute("aria-invalid"); $(id).removeAttribute("aria-describedby"); }
  }
  if (error) $("ab-" + (field || "url")).focus();
}

function syncSummary(r) {
  const parts = [];
  if (r.created) parts.push(t("%1$@ added", r.created.toLocaleString(LANG)));
  if (r.updated) parts.push(t("%1$@ updated", r.updated.toLocaleString(LANG)));
  if (r.deleted) parts.push(t("%1$@ deleted", r.deleted.toLocaleString(LANG)));
  if (r.editsSeen) parts.push(t("%1$@ edited in the address book", r.editsSeen.toLocaleString(LANG)));
  if (r.goneOnServer.length) parts.push(t("deleted in the address book, kept here: %1$@", r.goneOnServer.join(", ")));
  if (r.conflicts.length) parts.push(t("the address book's edit kept: %1$@", r.conflicts.join("; ")));
  if (r.failed.length) parts.push(t("not synced: %1$@", r.failed.join("; ")));
  return parts.length ? parts.join(", ") : t("nothing to change");
}

async function addAddressBook(e) {
  e.preventDefault();
  abSay(t("Connecting to %1$@…", $("ab-url").value));
  try {
    const r = await api("POST", "/api/addressbooks", { url: $("ab-url").value, user: $("ab-user").value, password: $("ab-password").value });
    $("ab-password").value = "";
    abSay(t("Added %1$@: %2$@.", r.url, syncSummary(r.sync)));
    loadAddressBooks();
  } catch (err) { abSay("", t("Not added. %1$@", err.message), err.field); }
}

async function syncAddressBooks() {
  notice(t("Syncing…"));
  try {
    const results = await api("POST", "/api/addressbooks/sync", {});
    notice(t("Synced.") + " " + results.map((r) => r.url + ": " + (r.error ? r.error : syncSummary(r.sync))).join(" · "));
    loadAddressBooks();
  } catch (e) { notice(e.message); }
}

async function loadMessages() {
  let m, contacts;
  try { m = await api("GET", "/api/messages"); contacts = await api("GET", "/api/contacts"); } catch (e) { notice(e.message); return; }
  const to = $("to"), chosen = to.value;
  to.replaceChildren();
  for (const c of contacts.filter((c) => c.sealedRoute)) to.append(el("option", c.name, { value: c.id }));
  if (chosen) to.value = chosen;
  $("no-recipients").hidden = to.options.length > 0;
  $("write").hidden = to.options.length === 0;
  $("inbox").replaceChildren(...m.inbox.map((i) => {
    const li = el("li");
    li.append(el("strong", i.contact || i.from), el("span", i.text, { class: "text" }));
    if (i.receivedAt) li.append(timeEl(i.receivedAt));
    return li;
  }));
  $("no-messages").hidden = m.inbox.length > 0 || m.outbox.length > 0;
  $("outbox").replaceChildren(...m.outbox.map((o) => {
    const li = el("li");
    li.append(el("strong", o.contact || ""), el("span", o.text === null || o.text === undefined ? (o.deliveredAt ? t("delivered %1$@ (its text is not kept once delivered)", when(o.deliveredAt)) : t("delivered (its text is not kept once delivered)")) : o.text, { class: "text" }), el("span", ({ delivered: t("delivered"), queued: t("queued"), failed: t("failed") }[o.state] || o.state) + (o.lastError ? " — " + o.lastError : ""), { class: "badge " + (o.state === "delivered" ? "verified" : o.state) }));
    return li;
  }));
  $("message-count").textContent = "";
}

async function send(e) {
  e.preventDefault();
  try {
    const item = await api("POST", "/api/messages", { contact: $("to").value, text: $("text").value });
    notice(item.state === "delivered" ? t("Delivered.") : item.state === "queued" ? t("Queued: delivered when they are around.") : t("Not delivered: %1$@", item.lastError || item.state));
    $("text").value = "";
    loadMessages();
  } catch (err) { notice(t("Not sent: %1$@", err.message)); }
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
    if (!r.ok) throw new Error(data.error ? t(data.error) : t("the node answered %1$@", r.status));
    notice("");  // an earlier "Cannot read it" is not this scan's
    $("scan-results").replaceChildren(...data.map((x) => {
      const li = el("li");
      if (x.result === "contact") {
        li.append(el("strong", x.name), el("span", x.format + ", " + x.verificationStatus, { class: "badge " + x.verificationStatus }),
                  el("span", x.summary + ". " + x.reason, { class: "fp" }));
      } else if (x.result === "partial") {
        li.append(el("span", t("Part of a larger code: %1$@ of %2$@ frames", x.received, x.total)));
      } else if (x.result === "error") {
        li.append(el("span", t("Not usable: %1$@", x.message)));
      } else if (x.result === "own-card") {
        li.append(el("strong", x.name), el("span", t("This is your own card: nothing was stored."), { class: "fp" }));
      } else {
        li.append(el("span", x.result + (x.note ? ": " + x.note : "")));
      }
      return li;
    }));
    $("scan-file").value = "";
  } catch (e) { notice(t("Cannot read it: %1$@", e.message)); }
}


async function loadCard() {
  let s;
  try { s = await api("GET", "/api/card"); } catch (e) { notice(e.message); return; }
  const c = s.card || {};
  fieldLabels = s.labels || {};
  for (const f of textFields) $("f-" + f).value = c[f] || "";
  for (const f of listFields) $("f-" + f + "-list").value = (c[f] || []).map(listItem[f] || String).join("\n");
  // The photo as peers receive it (the node made it square); a fresh URL each time it may have changed.
  const preview = $("f-photo-preview");
  if (preview) {
    cardHasPhoto = Boolean(c.photo);
    preview.hidden = !cardHasPhoto;
    $("f-photo-remove").hidden = !cardHasPhoto;
    if (cardHasPhoto) preview.src = "/api/card/photo?t=" + Date.now();
  }
  for (const box of document.querySelectorAll("[data-share]")) box.checked = box.dataset.share === "name" || s.sharing.includes(box.dataset.share);
  renderPreview();
  loadCode();
}

function formCard() {
  const card = {};
  for (const f of textFields) card[f] = $("f-" + f).value;
  for (const f of listFields) card[f] = $("f-" + f + "-list").value.split("\n");
  return card;
}

let cardHasPhoto = false;

// A picture chosen on My card goes to the node at once (PUT /api/card/photo, its bytes as they are):
// the node keeps its centre square, re-encoded with nothing else of the file, and the preview shows that.
async function sendPhoto() {
  const input = $("f-photo");
  const file = input.files && input.files[0];
  if (!file) return;
  try {
    const r = await fetch("/api/card/photo", { method: "PUT", headers: { "Content-Type": file.type || "application/octet-stream" }, body: file, credentials: "same-origin" });
    const data = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(data.error ? t(data.error) : t("the node answered %1$@", r.status));
    notice(t("Photo saved: peers receive the square shown."));
    loadCard();
  } catch (e) { notice(t("Photo not saved: %1$@", e.message)); }
  input.value = "";
}

async function removePhoto() {
  try { await api("DELETE", "/api/card/photo"); notice(t("Photo removed.")); loadCard(); } catch (e) { notice(e.message); }
}

function sharedFields() { return [...document.querySelectorAll("[data-share]")].filter((b) => b.checked).map((b) => b.dataset.share); }

function renderPreview() {
  const dl = $("preview");
  dl.replaceChildren();
  const card = formCard();
  for (const f of sharedFields()) {
    let v = f === "photo" ? (cardHasPhoto ? t("your photo (shown above)") : "") : card[f];
    if (Array.isArray(v)) v = v.filter((x) => x.trim()).join(", ");
    if (v && v.trim()) dl.append(el("dt", labelOf(f)), el("dd", v));
  }
}

let qrFrames = 1, frame = 0;
async function loadCode() {
  const format = $("qr-format").value;
  try { qrFrames = (await api("GET", "/api/card/qr?format=" + format)).frames; } catch (e) { $("qr-frame").textContent = e.message; return; }
  frame = 0;
  showFrame();
}

function showFrame() {
  const format = $("qr-format").value;
  $("qr").src = "/api/card/qr.svg?format=" + format + "&frame=" + frame + "&t=" + Date.now();
  if (!$("qr-view").hidden) $("qr-big").src = $("qr").src;
  $("qr-png").href = "/api/card/qr.png?format=" + format + "&frame=" + frame;
  $("qr-frame").textContent = qrFrames > 1 ? t("Frame %1$@ of %2$@ (scan them all)", (frame + 1).toLocaleString(LANG), qrFrames.toLocaleString(LANG)) : "";
  $("qr-big-frame").textContent = $("qr-frame").textContent;
}

// "Show my code": the code alone, as large as the window allows, for a phone across a table. Escape
// or Close returns to where you were.
function showCodeFull(open) {
  $("qr-view").hidden = !open;
  if (open) {
    $("qr-big").src = $("qr").src;
    $("qr-big-frame").textContent = $("qr-frame").textContent;
    $("qr-close").focus();
  } else {
    $("qr-full").focus();
  }
}

async function saveCard(e) {
  e.preventDefault();
  try {
    await api("PUT", "/api/card", formCard());
    await api("PUT", "/api/sharing", { fields: sharedFields() });
    notice(t("Saved: the next exchange sends this card."));
    loadCard();
  } catch (err) { notice(t("Not saved: %1$@", err.message)); }
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
      notice(t("%1$@'s node may have kept your card: the connection ended before it confirmed. Kept here as unconfirmed; it is settled when your nodes next reach each other.", c.name));
      show("contacts"); loadContacts().then(() => showContact(c));
      break;
    }
    case "exchange.completed": {
      state.requests.delete(ev.id); renderRequests();
      const c = ev.contact;
      notice(ev.theirMessage ? t("Exchanged cards with %1$@ (%2$@): “%3$@”", c.name, metWords(c), ev.theirMessage) : t("Exchanged cards with %1$@ (%2$@)", c.name, metWords(c)));
      show("contacts"); loadContacts().then(() => showContact(c));
      break;
    }
    case "exchange.settled":
      notice(ev.kept ? t("Confirmed: %1$@'s node kept your exchange; both of you have each other's card.", ev.name)
                     : t("Withdrawn: %1$@'s node did not keep your exchange, so it was withdrawn here too.", ev.name));
      if (!$("contacts").hidden) loadContacts();
      break;
    case "exchange.failed": {
      state.requests.delete(ev.id); renderRequests();
      // A refusal's words say it was one; other failures add their code.
      const why = ev.reason + (ev.code === "declined" ? "" : " (" + ev.code + ")");
      notice(ev.byPeer ? t("Exchange ended by them: %1$@; nothing was stored", why) : t("Exchange failed: %1$@; nothing was stored", why));
      break;
    }
    case "exchange.error": notice(t("Cannot exchange with %1$@: %2$@", ev.peer, ev.reason)); break;
    case "stopped":
      stopped = true; events.close();
      notice(t("Nearcard stopped on this computer. Run nearcard ui again to open it."));
      break;
    case "message.received":
      notice(t("Message from %1$@: %2$@", ev.contact || ev.from, ev.text));
      if (!$("messages").hidden) loadMessages(); else $("message-count").textContent = t("(new)");
      break;
    case "discovery-unavailable": notice(t("Discovery is unavailable: %1$@", ev.message)); break;
  }
}

async function start() {
  // A notice belongs to where it was said: moving to another tab leaves it behind.
  for (const b of tabs()) b.addEventListener("click", () => { notice(""); show(b.dataset.tab); });
  // Arrow keys, Home and End move along the tabs and open the one reached (WAI-ARIA tabs, automatic activation).
  $("tabs").addEventListener("keydown", (e) => {
    const all = tabs(), at = all.indexOf(document.activeElement);
    if (at < 0) return;
    // Right to left, the next tab is on the left.
    const step = document.documentElement.dir === "rtl" ? -1 : 1;
    const to = { ArrowRight: at + step, ArrowLeft: at - step, Home: 0, End: all.length - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    const next = all[(to + all.length) % all.length];
    notice("");
    show(next.dataset.tab);
    next.focus();
  });
  $("go-nearby").addEventListener("click", () => { show("nearby"); $("tab-nearby").focus(); });
  $("search").addEventListener("input", renderContacts);
  $("card-form").addEventListener("submit", saveCard);
  if ($("f-photo")) {
    $("f-photo").addEventListener("change", sendPhoto);
    $("f-photo-remove").addEventListener("click", removePhoto);
  }
  $("write").addEventListener("submit", send);
  $("ab-form").addEventListener("submit", addAddressBook);
  $("ab-sync").addEventListener("click", syncAddressBooks);
  $("scan-go").addEventListener("click", scan);
  $("retry").addEventListener("click", async () => {
    try { const r = await api("POST", "/api/outbox/retry", {}); notice(t("Tried %1$@: %2$@ delivered.", r.tried.toLocaleString(LANG), r.delivered.toLocaleString(LANG))); loadMessages(); }
    catch (e) { notice(e.message); }
  });
  $("card-form").addEventListener("input", renderPreview);
  $("card-form").addEventListener("change", renderPreview);
  $("qr-format").addEventListener("change", loadCode);
  $("qr-full").addEventListener("click", () => showCodeFull(true));
  $("qr-close").addEventListener("click", () => showCodeFull(false));
  document.addEventListener("keydown", (e) => { if (e.key === "Escape" && !$("qr-view").hidden) showCodeFull(false); });
  setInterval(() => { if (!$("card").hidden && qrFrames > 1) { frame = (frame + 1) % qrFrames; showFrame(); } }, 1500);
  // The language menu: the choice is kept (a cookie) and the page comes back in it.
  $("lang").addEventListener("change", () => {
    document.cookie = "nearcard-lang=" + encodeURIComponent($("lang").value) + "; Path=/; SameSite=Strict; Max-Age=31536000";
    location.reload();
  });
  try {
    const s = await api("GET", "/api/state");
    $("me").textContent = s.me.name || t("(no name)");
    $("me").title = t("Your fingerprint: %1$@", s.me.fingerprint);
    for (const p of s.peers) state.peers.set(p.instance, p);
    for (const r of s.requests) state.requests.set(r.id, r);
    if (!s.discovers) notice(t("Discovery is unavailable: peers cannot see this node, nor it them (try nearcard doctor)."));
  } catch (e) { notice(e.message); }
  renderPeers(); renderRequests();
  events = new EventSource("/api/events");
  events.onmessage = (m) => { try { onEvent(JSON.parse(m.data)); } catch (e) { /* a line we do not know */ } };
  events.onerror = () => { if (!stopped) notice(t("Lost the node; reconnecting…")); };
  setInterval(tick, 1000);
  document.body.dataset.ready = "true";
}
start();
